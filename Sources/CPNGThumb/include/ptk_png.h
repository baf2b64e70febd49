#ifndef PTK_PNG_H
#define PTK_PNG_H
/* Thumbnails with libpng, row by row. libpng reports errors by longjmp to a setjmp of its
 * caller, which must not cross Swift frames: every libpng call is made here, in C, under a
 * setjmp, and the outcome comes back as a status and a message. */
#include <stddef.h>
#include <stdint.h>

/* What the PNG's header says, and the thumbnail made from it. */
typedef struct {
    /* From IHDR (0 when the header could not be read). */
    uint32_t width, height;
    int bit_depth, color_type, interlace;
    /* The thumbnail: an 8-bit RGB or RGBA PNG (malloc'd; free with ptk_png_free). */
    unsigned char *thumbnail;
    size_t thumbnail_size;
    uint32_t thumbnail_width, thumbnail_height;
    /* Why there is no thumbnail. */
    char message[200];
} ptk_thumbnail_result;

enum {
    PTK_PNG_OK = 0,         /* thumbnail made */
    PTK_PNG_TOO_LARGE = 1,  /* header read; over the pixel limit, so no thumbnail */
    PTK_PNG_FAILED = 2,     /* not decodable (message says why); header fields may be set */
    PTK_PNG_CANCELLED = 3,  /* *cancel became nonzero */
};

/* Reads the PNG from `fd` (from its current offset; fd is not closed) row by row, the
 * downscale done as rows arrive: memory is a row of the photo plus the thumbnail's
 * accumulators. The thumbnail fits in max_side x max_side, aspect kept, never enlarged;
 * alpha is kept (tRNS becomes alpha). libpng's limits bound what a hostile file can make it
 * allocate; a photo of more than max_pixels pixels gets no thumbnail. `cancel`, if not NULL,
 * is read before every row. */
int ptk_png_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                      ptk_thumbnail_result *out);

/* Encodes 8-bit RGB (channels 3) or RGBA (4) pixels, row after row, as a PNG (the JPEG thumbnailer's output) (malloc'd; free
 * with ptk_png_free). Returns PTK_PNG_OK, or PTK_PNG_FAILED with message set. */
int ptk_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height, int channels,
                   unsigned char **png, size_t *size, char message[200]);

/* The thumbnail size for a width x height image: within max_side x max_side, aspect kept,
 * never enlarged, at least 1 x 1. */
void ptk_thumbnail_fit(uint32_t width, uint32_t height, uint32_t max_side, uint32_t *tw, uint32_t *th);

void ptk_png_free(void *p);

#endif
