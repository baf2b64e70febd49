#ifndef PTK_RENDER_H
#define PTK_RENDER_H
/* What every decoder shares once its rows are in a box downscale: the renditions' sizes, the
 * turning as shown, and the encoding as JPEG (libjpeg-turbo) or PNG. */
#include <stddef.h>
#include <stdint.h>

#include "ptk_colour.h"
#include "ptk_png.h"

/* The renditions' sizes for a width x height image (as stored): each side of `request` fitted
 * by ptk_thumbnail_fit (aspect kept, never enlarged, at least 1 x 1). The largest long side is
 * returned. */
uint32_t ptk_render_sizes(const ptk_render_request *request, uint32_t width, uint32_t height, uint32_t *tw, uint32_t *th);

/* Encodes each finished target of `box` as a rendition in `out`: turned as EXIF `orientation`
 * (1-8; anything else leaves it as stored) says, as PNG when the box saw a transparent pixel, the
 * photo (out->width x out->height) fits in request->lossless_within or the request is png_only,
 * else as JPEG (quality 75 baseline 4:2:0, or quality 80 progressive
 * for a preview). Returns PTK_PNG_OK, or PTK_PNG_FAILED with out->message set. */
int ptk_render_encode(ptk_box *box, int orientation, const ptk_render_request *request, ptk_thumbnail_result *out);

/* 8-bit RGB pixels as a JPEG (malloc'd; free with free()): 4:2:0, Huffman tables optimised,
 * baseline or progressive. Returns PTK_PNG_OK, or PTK_PNG_FAILED with message (200 bytes) set. */
int ptk_jpeg_encode(const unsigned char *rgb, uint32_t width, uint32_t height, int quality, int progressive,
                    unsigned char **jpeg, size_t *size, char *message);

/* The old single-thumbnail calls: a request for one PNG of at most max_side, whole image. */
ptk_render_request ptk_single_png_request(uint32_t max_side);

/* After a single PNG request: its rendition moved to out->thumbnail (and its size). */
void ptk_keep_single_png(int status, ptk_thumbnail_result *out);

#endif
