#ifndef PTK_HEIF_H
#define PTK_HEIF_H
/* Thumbnails of HEIF and HEIC photos with libheif. */
#include <stddef.h>
#include <stdint.h>

#include "ptk_png.h"

/* The thumbnail of the HEIF file `fd`, like ptk_png_thumbnail: its primary image decoded by
 * libheif with its transformations (irot, imir, clap) applied; its EXIF orientation applied
 * when its primary item has no irot or imir (another item's do not count); its ICC profile or
 * nclx colours converted. width and height are the shown size (after clap and irot); a photo
 * whose decode allocates more than max_pixels, or would need more than 256 MB, gives
 * PTK_PNG_TOO_LARGE. What a decode allocates is the largest of the handle's shown size, its
 * ispe (uncropped), and `declared_pixels`: HEIFCheck's report of the most any part of the
 * primary image declares. The file must have passed HEIFCheck (PTKStore), which makes the one
 * ispe of each image the largest size its parts declare (within a coding margin). */
/* The renditions `request` asks for (ptk_png.h), from one decode. With request->embedded, a
 * thumbnail item of the primary image stands in for it when its shown aspect ratio is within
 * 1 % of the primary's, its transformations (irot, imir, clap, as ipma associates them) are
 * the same, it has alpha when the primary has, and its long side is at least the largest
 * rendition's: the smallest such is decoded (colours, EXIF and header from the primary).
 * Otherwise the whole primary image is decoded. out->decode_path says which. */
int ptk_heif_render(int fd, const ptk_render_request *request, uint64_t max_pixels, uint64_t declared_pixels,
                    const volatile int *cancel, ptk_thumbnail_result *out);

/* ptk_heif_render of one PNG of at most max_side, whole image, in out->thumbnail. */
int ptk_heif_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out);

#endif
