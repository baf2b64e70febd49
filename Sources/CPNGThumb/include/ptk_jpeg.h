#ifndef PTK_JPEG_H
#define PTK_JPEG_H
/* Thumbnails of JPEG photos with libjpeg-turbo. Like libpng, libjpeg reports errors through a
 * handler that must not return: it longjmps to a setjmp here, in C, never across Swift frames. */
#include <stddef.h>
#include <stdint.h>

#include "ptk_png.h"

/* Reads the JPEG from `fd` (from its current offset; fd is not closed) and makes the
 * renditions `request` asks for (ptk_png.h), from one decode: libjpeg-turbo decodes at the
 * smallest scale M/8 (M = 1 to 8) that still has the largest rendition's width and height,
 * then rows are averaged into every rendition at once in linear light as they arrive (an
 * APP2 ICC profile converted); out->decode_path says the scale. The header fields are set as for a PNG: bit_depth is the
 * sample precision, color_type 0 for greyscale and 2 for colour, interlace 1 for a progressive
 * JPEG. Over max_pixels gives PTK_PNG_TOO_LARGE; a file that needs more than 256 MB to decode
 * (a huge progressive one), has scans that cover its blocks more than 16 times in all (or more
 * than 1000 scans), or ends early gives PTK_PNG_FAILED.
 * `cancel`, if not NULL, is read as rows and scans are decoded. */
int ptk_jpeg_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                    ptk_thumbnail_result *out);

/* ptk_jpeg_render of one PNG of at most max_side, in out->thumbnail. */
int ptk_jpeg_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out);

#endif
