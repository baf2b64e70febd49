#!/bin/sh
# How the HEICs with thumbnail items here were made (run once, by hand, like make.sh; the tests
# read the files). Needs libheif-dev and a C compiler: libheif's encoding API
# (heif_context_encode_image, heif_context_assign_thumbnail, heif_encoding_options'
# image_orientation for irot) makes what heif-enc cannot: an item of another aspect, or one
# turned otherwise than its primary image. Every primary image is 800x600 gradients; an item
# that may stand in for it holds the same gradients at 400x300, one that must not is solid
# magenta, so a rendition made from the wrong one shows it.
#   thumb-item.heic          a 400x300 item of the same pixels (used up to a long side of 400)
#   thumb-small.heic         a 160x120 magenta item (too small for 180)
#   thumb-square.heic        a 400x400 magenta item (another aspect)
#   thumb-turned.heic        the primary turned 180 degrees (irot), a 400x300 magenta item not turned
#   thumb-both-turned.heic   both turned 180 degrees, the item of the same pixels (used)
#   thumb-irot-exif6.heic    as a phone writes a portrait: the primary not turned, with EXIF
#                            Orientation 6; a 400x300 magenta item turned 90 degrees (irot):
#                            the item's irot is not the primary's (issue 54)
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/thumbs.c" <<'C'
/* HEICs with thumbnail items, through libheif's encoding API: an 800x600 primary image
 * (gradients) and a thumbnail item that matches it (400x300, the same pixels downscaled), or
 * one that must not stand in for it (solid magenta: too small, another aspect, another turn). */
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct heif_image *picture(int w, int h, int magenta) {
    struct heif_image *image = NULL;
    heif_image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
    heif_image_add_plane(image, heif_channel_interleaved, w, h, 8);
    int stride = 0;
    uint8_t *p = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint8_t *q = p + y * stride + x * 3;
            if (magenta) {
                q[0] = 255, q[1] = 0, q[2] = 255;
            } else {
                /* Smooth in every channel, so a downscale of either size looks the same. */
                const double u = (x + 0.5) / w, v = (y + 0.5) / h;
                q[0] = (uint8_t)(30 + 200 * u);
                q[1] = (uint8_t)(40 + 180 * v);
                q[2] = (uint8_t)(220 - 160 * u * v);
            }
        }
    }
    return image;
}

static struct heif_image_handle *encode(struct heif_context *ctx, struct heif_encoder *encoder, struct heif_image *image,
                                        enum heif_orientation orientation) {
    struct heif_encoding_options *options = heif_encoding_options_alloc();
    options->image_orientation = orientation;
    struct heif_image_handle *handle = NULL;
    struct heif_error e = heif_context_encode_image(ctx, image, encoder, options, &handle);
    heif_encoding_options_free(options);
    if (e.code != heif_error_Ok) {
        fprintf(stderr, "encode: %s\n", e.message);
        exit(1);
    }
    return handle;
}

/* name: the primary (800x600, turned by `turn`) with a thumbnail item tw x th (turned by
 * `thumb_turn`), the primary's pixels downscaled or magenta. */
static void make_with_exif(const char *name, int tw, int th, int magenta, enum heif_orientation turn, enum heif_orientation thumb_turn,
                           const unsigned char *exif, size_t exif_size) {
    struct heif_context *ctx = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &encoder);
    heif_encoder_set_lossy_quality(encoder, 90);
    struct heif_image *primary = picture(800, 600, 0);
    struct heif_image_handle *ph = encode(ctx, encoder, primary, turn);
    struct heif_image *thumb = picture(tw, th, magenta);
    struct heif_image_handle *th_ = encode(ctx, encoder, thumb, thumb_turn);
    heif_context_set_primary_image(ctx, ph);
    if (exif != NULL) heif_context_add_exif_metadata(ctx, ph, exif, (int)exif_size);
    /* libheif 1.15 takes the thumbnail first, whatever its header says. */
    heif_context_assign_thumbnail(ctx, th_, ph);
    struct heif_error e = heif_context_write_to_file(ctx, name);
    if (e.code != heif_error_Ok) {
        fprintf(stderr, "write: %s\n", e.message);
        exit(1);
    }
    heif_image_handle_release(ph);
    heif_image_handle_release(th_);
    heif_image_release(primary);
    heif_image_release(thumb);
    heif_encoder_release(encoder);
    heif_context_free(ctx);
}

static void make(const char *name, int tw, int th, int magenta, enum heif_orientation turn, enum heif_orientation thumb_turn) {
    make_with_exif(name, tw, th, magenta, turn, thumb_turn, NULL, 0);
}

/* TIFF (big-endian) with one entry: Orientation (0x0112) = 6, turn 90 degrees clockwise to show. */
static const unsigned char ORIENTATION_6[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0};

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "irot-exif6") == 0) {
        make_with_exif("thumb-irot-exif6.heic", 400, 300, 1, heif_orientation_normal, heif_orientation_rotate_90_cw, ORIENTATION_6,
                       sizeof ORIENTATION_6);
        return 0;
    }
    make("thumb-item.heic", 400, 300, 0, heif_orientation_normal, heif_orientation_normal);
    make("thumb-small.heic", 160, 120, 1, heif_orientation_normal, heif_orientation_normal);
    make("thumb-square.heic", 400, 400, 1, heif_orientation_normal, heif_orientation_normal);
    make("thumb-turned.heic", 400, 300, 1, heif_orientation_rotate_180, heif_orientation_normal);
    make("thumb-both-turned.heic", 400, 300, 0, heif_orientation_rotate_180, heif_orientation_rotate_180);
    return 0;
}
C
# With an argument, only that file ("irot-exif6": thumb-irot-exif6.heic, added for issue 54).
cc "$tmp/thumbs.c" -o "$tmp/thumbs" $(pkg-config --cflags --libs libheif) && "$tmp/thumbs" "$@"
