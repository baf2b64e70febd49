#include "ptk_heif.h"
#include "ptk_colour.h"
#include "ptk_heif_open.h"
#include "ptk_render.h"

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

/* A walk over box headers, each inside its parent and the file: the box of `type` between
 * `start` and `end`, its content in [body, body_end). */
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

/* An item's transformations, for comparing a thumbnail item's with its primary image's: the
 * irot, imir and clap properties ipma associates with item `id`, each as its type and body,
 * in order, into `out` (at most `capacity` bytes); `turns`, when given, is set to whether an
 * irot or imir is among them. Returns the length, or -1 when the boxes cannot be read (or say
 * more than fits), and then the item is not used. */
/* Bounds on what a hostile file can make the comparison read: an ipma box's size, how many
 * properties of one item are looked at, and how far into ipco (real files have a few dozen
 * properties, each item fewer than ten). */
enum { IPMA_LIMIT = 1 << 20, TRANSFORMS_LIMIT = 512, ITEM_PROPERTIES_LIMIT = 64, PROPERTY_INDEX_LIMIT = 4096 };

static int property_box(const ptk_heif_file *r, int64_t ipco, int64_t ipco_end, unsigned index, int64_t *at, int64_t *end, unsigned char type[4],
                        int *budget) {
    int64_t pos = ipco;
    for (unsigned k = 1; ipco_end - pos >= 8; k++) {
        if (--*budget < 0) return 0;
        unsigned char h[16];
        if (pread(r->fd, h, 8, pos) != 8) return 0;
        uint64_t size = ((uint64_t)h[0] << 24) | ((uint64_t)h[1] << 16) | ((uint64_t)h[2] << 8) | h[3];
        int64_t header = 8;
        if (size == 1) {
            if (ipco_end - pos < 16 || pread(r->fd, h + 8, 8, pos + 8) != 8) return 0;
            size = 0;
            for (int i = 8; i < 16; i++) size = (size << 8) | h[i];
            header = 16;
        } else if (size == 0) {
            size = (uint64_t)(ipco_end - pos);
        }
        if (size < (uint64_t)header || size > (uint64_t)(ipco_end - pos)) return 0;
        if (k == index) {
            memcpy(type, h + 4, 4);
            *at = pos + header;
            *end = pos + (int64_t)size;
            return 1;
        }
        pos += (int64_t)size;
    }
    return 0;
}

static int item_transformations(const ptk_heif_file *r, heif_item_id id, unsigned char *out, int capacity, int *budget, int *turns) {
    if (turns != NULL) *turns = 0;
    int64_t meta, meta_end, iprp, iprp_end, ipco, ipco_end;
    if (!find_box(r, 0, r->size, "meta", &meta, &meta_end)) return -1;
    meta += 4;
    if (!find_box(r, meta, meta_end, "iprp", &iprp, &iprp_end)) return -1;
    if (!find_box(r, iprp, iprp_end, "ipco", &ipco, &ipco_end)) return -1;
    int length = 0, looked = 0;
    /* Every ipma box in iprp (there may be more than one). */
    int64_t from = iprp, body, body_end;
    while (find_box(r, from, iprp_end, "ipma", &body, &body_end)) {
        from = body_end;
        const int64_t n = body_end - body;
        if (n < 8 || n > IPMA_LIMIT) return -1;
        unsigned char *ipma = malloc((size_t)n);
        if (ipma == NULL || pread(r->fd, ipma, (size_t)n, body) != n) {
            free(ipma);
            return -1;
        }
        const int version = ipma[0];
        const int wide = ipma[3] & 1;
        const uint32_t entries = ((uint32_t)ipma[4] << 24) | ((uint32_t)ipma[5] << 16) | ((uint32_t)ipma[6] << 8) | ipma[7];
        int64_t at = 8;
        for (uint32_t e = 0; e < entries; e++) {
            const int id_bytes = version < 1 ? 2 : 4;
            if (n - at < id_bytes + 1) goto bad;
            uint32_t item = 0;
            for (int k = 0; k < id_bytes; k++) item = (item << 8) | ipma[at + k];
            at += id_bytes;
            const unsigned count = ipma[at++];
            if (n - at < (int64_t)count * (wide ? 2 : 1)) goto bad;
            for (unsigned a = 0; a < count; a++) {
                unsigned index = wide ? (((unsigned)ipma[at] << 8) | ipma[at + 1]) & 0x7FFF : ipma[at] & 0x7F;
                at += wide ? 2 : 1;
                if (item != id || index == 0) continue;
                if (++looked > ITEM_PROPERTIES_LIMIT || index > PROPERTY_INDEX_LIMIT) goto bad;
                int64_t p, p_end;
                unsigned char type[4];
                if (!property_box(r, ipco, ipco_end, index, &p, &p_end, type, budget)) goto bad;
                if (memcmp(type, "irot", 4) != 0 && memcmp(type, "imir", 4) != 0 && memcmp(type, "clap", 4) != 0) continue;
                if (turns != NULL && memcmp(type, "clap", 4) != 0) *turns = 1;
                const int64_t size = p_end - p;
                if (size > capacity - length - 4) goto bad;
                memcpy(out + length, type, 4);
                if (pread(r->fd, out + length + 4, (size_t)size, p) != size) goto bad;
                length += 4 + (int)size;
            }
        }
        free(ipma);
        continue;
    bad:
        free(ipma);
        return -1;
    }
    return length;
}

/* Whether items `a` and `b` have the same transformations (irot, imir, clap). `budget` is
 * what is left of the property headers one file's comparisons may read (each read is a
 * pread): a file that needs more gets its items declined, not minutes of reading. */
static int same_transformations(const ptk_heif_file *r, heif_item_id a, heif_item_id b, int *budget) {
    unsigned char ta[TRANSFORMS_LIMIT], tb[TRANSFORMS_LIMIT];
    const int na = item_transformations(r, a, ta, sizeof ta, budget, NULL);
    if (na < 0) return 0;
    const int nb = item_transformations(r, b, tb, sizeof tb, budget, NULL);
    return na >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0;
}

/* The thumbnail item that may stand in for the primary image when making renditions whose
 * largest long side is `largest`: its shown aspect ratio within 1 % of the primary's, the same
 * transformations, alpha when the primary has it, at least `largest` on its long side; the
 * smallest such. NULL when there is none. */
enum { THUMBNAILS_LIMIT = 16, PROPERTY_READS_BUDGET = 4096 };

static struct heif_image_handle *thumbnail_item(const ptk_heif_file *file, uint32_t largest) {
    struct heif_image_handle *primary = file->primary;
    const int n = heif_image_handle_get_number_of_thumbnails(primary);
    if (n <= 0) return NULL;
    heif_item_id ids[THUMBNAILS_LIMIT];
    const int count = heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, n < THUMBNAILS_LIMIT ? n : THUMBNAILS_LIMIT);
    const uint64_t w = (uint64_t)heif_image_handle_get_width(primary), h = (uint64_t)heif_image_handle_get_height(primary);
    const int alpha = heif_image_handle_has_alpha_channel(primary) != 0;
    heif_item_id primary_id;
    if (heif_context_get_primary_image_ID(file->context, &primary_id).code != heif_error_Ok) return NULL;
    struct heif_image_handle *best = NULL;
    uint64_t best_area = 0;
    int budget = PROPERTY_READS_BUDGET;
    for (int i = 0; i < count; i++) {
        struct heif_image_handle *t = NULL;
        if (heif_image_handle_get_thumbnail(primary, ids[i], &t).code != heif_error_Ok || t == NULL) continue;
        const uint64_t tw = (uint64_t)heif_image_handle_get_width(t), th = (uint64_t)heif_image_handle_get_height(t);
        const uint64_t a = tw * h, b = w * th; /* equal when the aspect ratios are */
        const uint64_t area = tw * th;
        /* Never one larger than the primary image (a lying ispe: decoding the whole is cheaper). */
        const int usable = tw > 0 && th > 0 && (tw > th ? tw : th) >= largest && (tw > th ? tw : th) <= (w > h ? w : h)
                           && (a > b ? a - b : b - a) * 100 <= (a > b ? a : b)
                           && (heif_image_handle_has_alpha_channel(t) != 0) == alpha && (best == NULL || area < best_area)
                           && same_transformations(file, primary_id, ids[i], &budget);
        if (!usable) {
            heif_image_handle_release(t);
            continue;
        }
        if (best != NULL) heif_image_handle_release(best);
        best = t;
        best_area = area;
    }
    return best;
}

/* Whether the primary image has a rotation or a mirroring that libheif applies (and then its
 * EXIF orientation must not be applied again): an irot or imir that ipma associates with the
 * primary item. One associated only with another item (a thumbnail turned otherwise) does not
 * count. When the associations cannot be read within the bounds above, any irot or imir in
 * ipco counts, as libheif may have applied one. */
static int has_transformation(const ptk_heif_file *r) {
    heif_item_id primary;
    unsigned char t[TRANSFORMS_LIMIT];
    int budget = PROPERTY_READS_BUDGET, turns = 0;
    if (heif_context_get_primary_image_ID(r->context, &primary).code == heif_error_Ok
        && item_transformations(r, primary, t, sizeof t, &budget, &turns) >= 0) {
        return turns;
    }
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

/* The most pixels decoding `handle` allocates, as far as libheif says: its ispe (the last, and
 * before any clap or turn) or its shown size, whichever is larger. HEIFCheck makes the one
 * ispe of an image the largest size its parts declare (within the coding margin). */
static uint64_t decoded_pixels(const struct heif_image_handle *handle) {
    const uint64_t shown = (uint64_t)heif_image_handle_get_width(handle) * (uint64_t)heif_image_handle_get_height(handle);
    const int iw = heif_image_handle_get_ispe_width(handle), ih = heif_image_handle_get_ispe_height(handle);
    const uint64_t coded = iw > 0 && ih > 0 ? (uint64_t)iw * (uint64_t)ih : 0;
    return shown > coded ? shown : coded;
}

int ptk_heif_render(int fd, const ptk_render_request *request, uint64_t max_pixels, uint64_t declared_pixels,
                    const volatile int *cancel, ptk_thumbnail_result *out) {
    memset(out, 0, sizeof *out);
    ptk_heif_file *file = NULL;
    struct heif_image_handle *handle = NULL, *item = NULL;
    struct heif_image *image = NULL;
    struct heif_decoding_options *options = NULL;
    ptk_colour colour = {0};
    ptk_box box = {0};
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
    /* What a decode of the whole image allocates: the largest of what libheif says and what
     * HEIFCheck found its parts declare, not the size a clap crops it to. */
    uint64_t count = decoded_pixels(handle);
    if (declared_pixels > count) count = declared_pixels;
    if (count > max_pixels) {
        snprintf(out->message, MESSAGE, "%.1f megapixels is over the %.1f-megapixel limit for thumbnails", count / 1e6, max_pixels / 1e6);
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    uint32_t tw[PTK_MAX_RENDITIONS], th[PTK_MAX_RENDITIONS];
    const uint32_t largest = ptk_render_sizes(request, width, height, tw, th);
    /* A thumbnail item that matches the primary image and is large enough stands in for it. */
    if (request->embedded) item = thumbnail_item(file, request->embedded_min > 0 && request->embedded_min < largest ? request->embedded_min : largest);
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
    /* The item, when one was chosen; whatever goes wrong with it (too large to decode, a
     * decoding error, no image), the whole image instead: the photo is not the item. */
    const uint8_t *plane = NULL;
    int stride = 0, w = 0, h = 0;
    for (;;) {
        struct heif_image_handle *decoded = item != NULL ? item : handle;
        const uint64_t decoded_count = item != NULL ? decoded_pixels(item) : count;
        int usable = decoded_count * 5 <= MEMORY_LIMIT;
        if (!usable && item == NULL) {
            snprintf(out->message, MESSAGE, "%.1f megapixels needs more than %llu MB to decode", decoded_count / 1e6,
                     (unsigned long long)(MEMORY_LIMIT >> 20));
            status = PTK_PNG_TOO_LARGE;
            goto done;
        }
        if (usable) {
            struct heif_error e = heif_decode_image(decoded, &image, heif_colorspace_RGB,
                                                    alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options);
            if (e.code != heif_error_Ok) {
                if (item == NULL) {
                    snprintf(out->message, MESSAGE, "libheif cannot decode it: %s", e.message);
                    goto done;
                }
                usable = 0;
            }
        }
        if (usable) {
            plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
            w = heif_image_get_width(image, heif_channel_interleaved);
            h = heif_image_get_height(image, heif_channel_interleaved);
            usable = plane != NULL && w > 0 && h > 0 && (uint64_t)w * h <= max_pixels;
            if (!usable && item == NULL) {
                snprintf(out->message, MESSAGE, "libheif gave no image");
                goto done;
            }
        }
        if (usable) break;
        /* The item failed: the whole image. */
        if (image != NULL) heif_image_release(image);
        image = NULL;
        heif_image_handle_release(item);
        item = NULL;
        if (cancel != NULL && *cancel) {
            status = PTK_PNG_CANCELLED;
            goto done;
        }
    }
    if (cancel != NULL && *cancel) {
        status = PTK_PNG_CANCELLED;
        goto done;
    }
    if (item != NULL) {
        snprintf(out->decode_path, sizeof out->decode_path, "HEIF thumbnail item %dx%d", w, h);
    } else {
        snprintf(out->decode_path, sizeof out->decode_path, "whole image");
    }
    /* The renditions' sizes are the primary image's (the item's may be a pixel off); the box
     * keeps them within what was decoded. */
    if (ptk_box_init(&box, &colour, (uint32_t)w, (uint32_t)h, request->count, tw, th, alpha, 1) != 0) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    for (int y = 0; y < h; y++) ptk_box_add(&box, (uint32_t)y, plane + (size_t)y * stride, 0, 1, (uint32_t)w);
    ptk_box_finish(&box);
    snprintf(out->colour_note, sizeof out->colour_note, "%s", colour.note[0] ? colour.note : box.note);
    /* libheif has turned the image as irot and imir say; EXIF orientation is for a file
     * without them (and then the shown size is the turned one). */
    if (has_transformation(file)) out->facts.orientation = 0;
    status = ptk_render_encode(&box, out->facts.orientation, request, out);
done:
    if (status != PTK_PNG_OK) ptk_result_free(out);
    ptk_box_free(&box);
    ptk_colour_free(&colour);
    if (options != NULL) heif_decoding_options_free(options);
    if (image != NULL) heif_image_release(image);
    if (item != NULL) heif_image_handle_release(item);
    ptk_heif_close(file);
    return status;
}

int ptk_heif_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out) {
    const ptk_render_request request = ptk_single_png_request(max_side);
    const int status = ptk_heif_render(fd, &request, max_pixels, 0, cancel, out);
    ptk_keep_single_png(status, out);
    return status;
}
