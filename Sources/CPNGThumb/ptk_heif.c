#include "ptk_heif.h"
#include "ptk_colour.h"
#include "ptk_heif_open.h"

#include <errno.h>
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MESSAGE = 200 };
/* The memory a decode may take: the decoded planes (YCbCr, then RGB) take about 5 bytes a pixel. */
static const uint64_t MEMORY_LIMIT = 256ULL * 1024 * 1024;

/* Whether the file's item properties (meta/iprp/ipco) hold a rotation or a mirroring, which
 * libheif applies (and then EXIF orientation must not be applied again). A walk over box
 * headers, each inside its parent and the file. */
static int find_box(const ptk_heif_file *r, int64_t start, int64_t end, const char *type, int64_t *body, int64_t *body_end) {
    int64_t at = start;
    while (end - at >= 8) {
        unsigned char h[16];
        if (pread(r->fd, h, 8, at) != 8) return 0;
        uint64_t size = ((uint64_t)h[0] << 24) | ((uint64_t)h[1] << 16) | ((uint64_t)h[2] << 8) | h[3];
        int64_t header = 8;
        if (size == 1) {
            if (end - at < 16 || pread(r->fd, h + 8, 8, at + 8) != 8) return 0;
            size = 0;
            for (int i = 8; i < 16; i++) size = (size << 8) | h[i];
            header = 16;
        } else if (size == 0) {
            size = (uint64_t)(end - at);
        }
        if (size < (uint64_t)header || size > (uint64_t)(end - at)) return 0;
        if (memcmp(h + 4, type, 4) == 0) {
            *body = at + header;
            *body_end = at + (int64_t)size;
            return 1;
        }
        at += (int64_t)size;
    }
    return 0;
}

static int has_transformation(const ptk_heif_file *r) {
    int64_t meta, meta_end, iprp, iprp_end, ipco, ipco_end, b, e;
    if (!find_box(r, 0, r->size, "meta", &meta, &meta_end)) return 0;
    meta += 4; /* a full box: version and flags */
    if (!find_box(r, meta, meta_end, "iprp", &iprp, &iprp_end)) return 0;
    if (!find_box(r, iprp, iprp_end, "ipco", &ipco, &ipco_end)) return 0;
    return find_box(r, ipco, ipco_end, "irot", &b, &e) || find_box(r, ipco, ipco_end, "imir", &b, &e);
}

/* The primary image's EXIF (an Exif item: a 4-byte offset to the TIFF header, then TIFF). */
static void read_exif(struct heif_image_handle *handle, ptk_photo_facts *facts) {
    heif_item_id id;
    if (heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) < 1) return;
    const size_t size = heif_image_handle_get_metadata_size(handle, id);
    if (size < 4) return;
    if (size > 65536 + 4 + 64) {
        snprintf(facts->problem, sizeof facts->problem, "EXIF of %zu bytes is over the 65536-byte limit; left aside", size);
        return;
    }
    unsigned char *data = malloc(size);
    if (data == NULL) return;
    if (heif_image_handle_get_metadata(handle, id, data).code == heif_error_Ok) {
        const uint32_t offset = ((uint32_t)data[0] << 24) | ((uint32_t)data[1] << 16) | ((uint32_t)data[2] << 8) | data[3];
        if (offset <= size - 4) ptk_exif_read(data + 4 + offset, size - 4 - offset, 0, facts);
    }
    free(data);
}

/* The colours the file describes: its ICC profile, else its nclx. */
static void read_colour(struct heif_image_handle *handle, ptk_colour *colour) {
    const enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(handle);
    if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
        const size_t size = heif_image_handle_get_raw_color_profile_size(handle);
        if (size > PTK_ICC_LIMIT) {
            ptk_colour_icc(colour, NULL, size);
            return;
        }
        unsigned char *icc = malloc(size ? size : 1);
        if (icc != NULL && heif_image_handle_get_raw_color_profile(handle, icc).code == heif_error_Ok) ptk_colour_icc(colour, icc, size);
        free(icc);
    } else if (type == heif_color_profile_type_nclx) {
        struct heif_color_profile_nclx *nclx = NULL;
        if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx != NULL) {
            ptk_colour_nclx(colour, nclx->color_primaries, nclx->transfer_characteristics);
        }
        heif_nclx_color_profile_free(nclx);
    }
}

int ptk_heif_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out) {
    memset(out, 0, sizeof *out);
    ptk_heif_file *file = NULL;
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    struct heif_decoding_options *options = NULL;
    ptk_colour colour = {0};
    ptk_box box = {0};
    unsigned char *pixels = NULL;
    int status = PTK_PNG_FAILED;
    if ((file = ptk_heif_open(fd, out->message)) == NULL) goto done;
    handle = file->primary;

    const uint32_t width = (uint32_t)heif_image_handle_get_width(handle);
    const uint32_t height = (uint32_t)heif_image_handle_get_height(handle);
    const int alpha = heif_image_handle_has_alpha_channel(handle) != 0;
    out->width = width;
    out->height = height;
    out->bit_depth = heif_image_handle_get_luma_bits_per_pixel(handle);
    out->color_type = alpha ? 6 : 2;
    read_exif(handle, &out->facts);
    if (width == 0 || height == 0) {
        snprintf(out->message, MESSAGE, "the primary image has no size");
        goto done;
    }
    const uint64_t count = (uint64_t)width * height;
    if (count > max_pixels) {
        snprintf(out->message, MESSAGE, "%.1f megapixels is over the %.1f-megapixel limit for thumbnails", count / 1e6, max_pixels / 1e6);
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    if (count * 5 > MEMORY_LIMIT) {
        snprintf(out->message, MESSAGE, "%.1f megapixels needs more than %llu MB to decode", count / 1e6,
                 (unsigned long long)(MEMORY_LIMIT >> 20));
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    if (cancel != NULL && *cancel) {
        status = PTK_PNG_CANCELLED;
        goto done;
    }
    read_colour(handle, &colour);
    options = heif_decoding_options_alloc();
    if (options == NULL) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    options->convert_hdr_to_8bit = 1;
    struct heif_error e = heif_decode_image(handle, &image, heif_colorspace_RGB,
                                            alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options);
    if (e.code != heif_error_Ok) {
        snprintf(out->message, MESSAGE, "libheif cannot decode it: %s", e.message);
        goto done;
    }
    if (cancel != NULL && *cancel) {
        status = PTK_PNG_CANCELLED;
        goto done;
    }
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    const int w = heif_image_get_width(image, heif_channel_interleaved), h = heif_image_get_height(image, heif_channel_interleaved);
    if (plane == NULL || w <= 0 || h <= 0 || (uint64_t)w * h > max_pixels) {
        snprintf(out->message, MESSAGE, "libheif gave no image");
        goto done;
    }
    uint32_t tw, th;
    ptk_thumbnail_fit((uint32_t)w, (uint32_t)h, max_side, &tw, &th);
    if (ptk_box_init(&box, &colour, (uint32_t)w, (uint32_t)h, tw, th, alpha) != 0) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    for (int y = 0; y < h; y++) ptk_box_add(&box, (uint32_t)y, plane + (size_t)y * stride, 0, 1, (uint32_t)w);
    pixels = ptk_box_pixels(&box);
    if (pixels == NULL) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    snprintf(out->colour_note, sizeof out->colour_note, "%s", colour.note[0] ? colour.note : box.note);
    /* libheif has turned the image as irot and imir say; EXIF orientation is for a file
     * without them (and then the shown size is the turned one). */
    if (has_transformation(file)) {
        out->facts.orientation = 0;
    } else if (out->facts.orientation > 1) {
        unsigned char *turned = ptk_orient(pixels, &tw, &th, alpha ? 4 : 3, out->facts.orientation);
        if (turned == NULL) {
            snprintf(out->message, MESSAGE, "out of memory");
            goto done;
        }
        free(pixels);
        pixels = turned;
    }
    status = ptk_png_encode(pixels, tw, th, alpha ? 4 : 3, &out->thumbnail, &out->thumbnail_size, out->message);
    if (status == PTK_PNG_OK) {
        out->thumbnail_width = tw;
        out->thumbnail_height = th;
    }
done:
    free(pixels);
    ptk_box_free(&box);
    ptk_colour_free(&colour);
    if (options != NULL) heif_decoding_options_free(options);
    if (image != NULL) heif_image_release(image);
    ptk_heif_close(file);
    return status;
}
