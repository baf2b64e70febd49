#ifndef PTK_HEIF_H
#define PTK_HEIF_H
/* Thumbnails of HEIF and HEIC photos with libheif. */
#include <stddef.h>
#include <stdint.h>

#include "ptk_png.h"

/* The thumbnail of the HEIF file `fd`, like ptk_png_thumbnail: its primary image decoded by
 * libheif with its transformations (irot, imir, clap) applied; its EXIF orientation applied
 * when the file has no irot or imir; its ICC profile or nclx colours converted. width and
 * height are the decoded (shown) size; a photo over max_pixels, or one that would need more
 * than 256 MB to decode, gives PTK_PNG_TOO_LARGE. */
int ptk_heif_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out);

#endif
