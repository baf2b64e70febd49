#ifndef PTK_TEST_HEIF_H
#define PTK_TEST_HEIF_H
/* HEIF test images libheif's heif-enc cannot make: heif-enc 1.15 writes no nclx colour box
 * (its macOS workaround), so HDR (PQ, HLG) HEIFs are encoded here through libheif's API. */
#include <stdint.h>

/* Encodes width x height pixels of 16-bit RGB (`rgb`, 3 values a pixel) as a 10-bit HEVC
 * HEIF at `path`, quality 99, with an nclx colour box of these ISO/IEC 23091-2 code points
 * (full range). Returns 0, or nonzero with message set. */
int ptk_test_heif_encode_nclx(const uint16_t *rgb, int width, int height, int primaries, int transfer, int matrix,
                              const char *path, char message[200]);

#endif
