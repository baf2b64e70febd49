#include "ptk_test_heif.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <string.h>

int ptk_test_heif_encode_nclx(const uint16_t *rgb, int width, int height, int primaries, int transfer, int matrix,
                              const char *path, char message[200]) {
    int status = 1;
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
    struct heif_encoding_options *options = heif_encoding_options_alloc();
    struct heif_error e = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder);
    if (e.code != heif_error_Ok) goto fail;
    heif_encoder_set_lossy_quality(encoder, 99);
    e = heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RRGGBB_LE, &image);
    if (e.code != heif_error_Ok) goto fail;
    e = heif_image_add_plane(image, heif_channel_interleaved, width, height, 10);
    if (e.code != heif_error_Ok) goto fail;
    int stride = 0;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < height; y++) {
        for (int i = 0; i < width * 3; i++) {
            const uint16_t v = (uint16_t)((rgb[(size_t)y * width * 3 + i] * 1023u + 32767u) / 65535u);
            plane[(size_t)y * stride + 2 * i] = (uint8_t)(v & 0xFF);
            plane[(size_t)y * stride + 2 * i + 1] = (uint8_t)(v >> 8);
        }
    }
    nclx->color_primaries = (enum heif_color_primaries)primaries;
    nclx->transfer_characteristics = (enum heif_transfer_characteristics)transfer;
    nclx->matrix_coefficients = (enum heif_matrix_coefficients)matrix;
    nclx->full_range_flag = 1;
    e = heif_image_set_nclx_color_profile(image, nclx);
    if (e.code != heif_error_Ok) goto fail;
    /* The box is written only with libheif's macOS workaround off. */
    options->macOS_compatibility_workaround_no_nclx_profile = 0;
    options->output_nclx_profile = nclx;
    e = heif_context_encode_image(context, image, encoder, options, NULL);
    if (e.code != heif_error_Ok) goto fail;
    e = heif_context_write_to_file(context, path);
    if (e.code != heif_error_Ok) goto fail;
    status = 0;
    goto done;
fail:
    snprintf(message, 200, "libheif: %s", e.message ? e.message : "failed");
done:
    heif_encoding_options_free(options);
    heif_nclx_color_profile_free(nclx);
    if (image != NULL) heif_image_release(image);
    if (encoder != NULL) heif_encoder_release(encoder);
    heif_context_free(context);
    return status;
}
