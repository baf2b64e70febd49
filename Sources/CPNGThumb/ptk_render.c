#include "ptk_render.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

enum { MESSAGE = 200 };

uint32_t ptk_render_sizes(const ptk_render_request *request, uint32_t width, uint32_t height, uint32_t *tw, uint32_t *th) {
    uint32_t largest = 0;
    for (int i = 0; i < request->count && i < PTK_MAX_RENDITIONS; i++) {
        ptk_thumbnail_fit(width, height, request->sides[i], &tw[i], &th[i]);
        const uint32_t side = tw[i] > th[i] ? tw[i] : th[i];
        if (side > largest) largest = side;
    }
    return largest;
}

/* libjpeg's errors while encoding: the message, then back to the setjmp. */
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char *message;
} encode_error;

static void on_encode_error(j_common_ptr c) {
    encode_error *e = (encode_error *)c->err;
    char text[JMSG_LENGTH_MAX];
    (*c->err->format_message)(c, text);
    snprintf(e->message, MESSAGE, "libjpeg cannot encode: %s", text);
    longjmp(e->jump, 1);
}

static void on_encode_message(j_common_ptr c, int level) {
    (void)c;
    (void)level;
}

/* A destination growing a malloc'd buffer (libjpeg's own jpeg_mem_dest would leak its buffer
 * when an error longjmps out). */
typedef struct {
    struct jpeg_destination_mgr pub;
    unsigned char *buffer;
    size_t capacity;
} memory_destination;

static void init_destination(j_compress_ptr c) {
    memory_destination *d = (memory_destination *)c->dest;
    d->pub.next_output_byte = d->buffer;
    d->pub.free_in_buffer = d->capacity;
}

static boolean empty_output_buffer(j_compress_ptr c) {
    memory_destination *d = (memory_destination *)c->dest;
    /* libjpeg asks only when the buffer is full. */
    unsigned char *grown = realloc(d->buffer, d->capacity * 2);
    if (grown == NULL) ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
    d->pub.next_output_byte = grown + d->capacity;
    d->pub.free_in_buffer = d->capacity;
    d->buffer = grown;
    d->capacity *= 2;
    return TRUE;
}

static void term_destination(j_compress_ptr c) { (void)c; }

int ptk_jpeg_encode(const unsigned char *rgb, uint32_t width, uint32_t height, int quality, int progressive,
                    unsigned char **jpeg, size_t *size, char *message) {
    struct jpeg_compress_struct c;
    encode_error e;
    memory_destination d;
    memset(&c, 0, sizeof c);
    memset(&d, 0, sizeof d);
    d.capacity = 16384 + (size_t)width * height / 4;
    if ((d.buffer = malloc(d.capacity)) == NULL) {
        snprintf(message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    d.pub.init_destination = init_destination;
    d.pub.empty_output_buffer = empty_output_buffer;
    d.pub.term_destination = term_destination;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_encode_error;
    e.pub.emit_message = on_encode_message;
    e.message = message;
    if (setjmp(e.jump)) {
        jpeg_destroy_compress(&c);
        free(d.buffer);
        return PTK_PNG_FAILED;
    }
    jpeg_create_compress(&c);
    c.dest = &d.pub;
    c.image_width = width;
    c.image_height = height;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    /* 4:2:0: luma at full size, both chromas at half in each direction. */
    c.comp_info[0].h_samp_factor = 2;
    c.comp_info[0].v_samp_factor = 2;
    c.comp_info[1].h_samp_factor = c.comp_info[1].v_samp_factor = 1;
    c.comp_info[2].h_samp_factor = c.comp_info[2].v_samp_factor = 1;
    c.optimize_coding = TRUE;
    if (progressive) jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * width * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    *size = d.capacity - d.pub.free_in_buffer;
    *jpeg = d.buffer;
    jpeg_destroy_compress(&c);
    return PTK_PNG_OK;
}

int ptk_render_encode(ptk_box *box, int orientation, const ptk_render_request *request, ptk_thumbnail_result *out) {
    const int small = request->lossless_within > 0 && out->width > 0 && out->height > 0
                      && out->width <= request->lossless_within && out->height <= request->lossless_within;
    const int png = request->png_only || box->transparent || small;
    out->transparent = box->transparent;
    const int channels = box->alpha ? 4 : 3;
    for (int i = 0; i < box->count; i++) {
        ptk_box_target *t = &box->targets[i];
        uint32_t w = t->tw, h = t->th;
        unsigned char *pixels = t->pixels;
        unsigned char *turned = NULL;
        if (orientation > 1 && orientation <= 8) {
            turned = ptk_orient(pixels, &w, &h, channels, orientation);
            if (turned == NULL) {
                snprintf(out->message, MESSAGE, "out of memory");
                return PTK_PNG_FAILED;
            }
            pixels = turned;
        }
        if (!png && channels == 4) {
            /* Opaque RGBA: the alpha is dropped in place (the target's own pixels are not needed again). */
            for (size_t k = 0; k < (size_t)w * h; k++) memmove(pixels + k * 3, pixels + k * 4, 3);
        }
        ptk_rendition *r = &out->renditions[i];
        int status;
        if (png) {
            status = ptk_png_encode(pixels, w, h, channels, &r->bytes, &r->size, out->message);
        } else {
            status = ptk_jpeg_encode(pixels, w, h, request->preview && i == 0 ? 80 : 75, request->preview && i == 0, &r->bytes, &r->size, out->message);
        }
        free(turned);
        if (status != PTK_PNG_OK) return status;
        r->width = w;
        r->height = h;
        r->png = png;
        out->rendition_count = i + 1;
    }
    return PTK_PNG_OK;
}

ptk_render_request ptk_single_png_request(uint32_t max_side) {
    ptk_render_request r;
    memset(&r, 0, sizeof r);
    r.sides[0] = max_side;
    r.count = 1;
    r.png_only = 1;
    r.fine = 1;
    return r;
}

void ptk_keep_single_png(int status, ptk_thumbnail_result *out) {
    if (status == PTK_PNG_OK && out->rendition_count == 1) {
        out->thumbnail = out->renditions[0].bytes;
        out->thumbnail_size = out->renditions[0].size;
        out->thumbnail_width = out->renditions[0].width;
        out->thumbnail_height = out->renditions[0].height;
        memset(&out->renditions[0], 0, sizeof out->renditions[0]);
        out->rendition_count = 0;
    }
}

void ptk_result_free(ptk_thumbnail_result *out) {
    free(out->thumbnail);
    out->thumbnail = NULL;
    out->thumbnail_size = 0;
    for (int i = 0; i < PTK_MAX_RENDITIONS; i++) {
        free(out->renditions[i].bytes);
        memset(&out->renditions[i], 0, sizeof out->renditions[i]);
    }
    out->rendition_count = 0;
}
