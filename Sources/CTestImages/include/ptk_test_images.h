#ifndef PTK_TEST_IMAGES_H
#define PTK_TEST_IMAGES_H
/* Test images for the tests only (linked by PTKTestSupport and the test targets, never by
 * ptkd, ptk or ptk-send): an independent whole-image PNG decode that thumbnails are compared
 * with, and a JPEG encoder that makes the test JPEGs. libpng and libjpeg report errors by
 * longjmp, which must not cross Swift frames: it all happens here, in C. */
#include <stddef.h>
#include <stdint.h>

/* The whole PNG read from `fd` as 8-bit RGBA (malloc'd, width*height*4 bytes; free with
 * free()), through libpng's own de-interlacing (png_read_png). Returns 0, or nonzero with
 * message set. */
int ptk_test_png_decode_rgba(int fd, uint32_t max_pixels, uint32_t *width, uint32_t *height,
                             unsigned char **rgba, char message[200]);

/* Greyscale (components 1) or RGB (3) rows encoded as a JPEG (malloc'd; free with free()),
 * baseline or progressive, with restart markers every restart_rows MCU rows when nonzero.
 * Returns 0, or nonzero with message set. */
int ptk_test_jpeg_encode(const unsigned char *pixels, uint32_t width, uint32_t height, int components, int quality,
                         int progressive, int restart_rows, unsigned char **jpeg, size_t *size, char message[200]);

/* A whole JPEG (`size` bytes in memory) decoded by libjpeg-turbo as 8-bit RGBA (alpha 255;
 * malloc'd; free with free()), and what its header says: progressive or baseline, and the
 * first component's sampling factors as h*10+v (22 for 4:2:0; 0 for greyscale). Returns 0, or
 * nonzero with message set. */
int ptk_test_jpeg_decode_rgba(const unsigned char *jpeg, size_t size, uint32_t *width, uint32_t *height,
                              unsigned char **rgba, int *progressive, int *sampling, char message[200]);

#endif
