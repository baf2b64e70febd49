#include "ptk_test_images.h"

#include <stdio.h> /* before jpeglib.h, which uses FILE */

#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MESSAGE = 200 };

static void png_failed(png_structp png, png_const_charp text) {
    snprintf((char *)png_get_error_ptr(png), MESSAGE, "%s", text);
    png_longjmp(png, 1);
}

static void png_warned(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

int ptk_test_png_decode_rgba(int fd, uint32_t max_pixels, uint32_t *width, uint32_t *height,
                             unsigned char **rgba, char message[200]) {
    message[0] = 0;
    *rgba = NULL;
    int copy = dup(fd);
    FILE *file = copy < 0 ? NULL : fdopen(copy, "rb");
    if (file == NULL) {
        if (copy >= 0) close(copy);
        snprintf(message, MESSAGE, "cannot read the file");
        return 1;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, message, png_failed, png_warned);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    /* Changed after setjmp, read after a longjmp back to it: volatile. */
    unsigned char *volatile out = NULL;
    int status = 1;
    if (png == NULL || info == NULL) {
        snprintf(message, MESSAGE, "out of memory");
    } else if (setjmp(png_jmpbuf(png)) == 0) {
        png_init_io(png, file);
        png_set_user_limits(png, max_pixels, max_pixels);
        png_read_png(png, info, PNG_TRANSFORM_EXPAND | PNG_TRANSFORM_STRIP_16 | PNG_TRANSFORM_GRAY_TO_RGB, NULL);
        const uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
        const int channels = png_get_channels(png, info);
        png_bytepp rows = png_get_rows(png, info);
        if ((uint64_t)w * h > max_pixels) {
            snprintf(message, MESSAGE, "over the pixel limit");
        } else if ((out = malloc((size_t)w * h * 4)) == NULL) {
            snprintf(message, MESSAGE, "out of memory");
        } else {
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    const unsigned char *p = rows[y] + (size_t)x * channels;
                    unsigned char *q = out + ((size_t)y * w + x) * 4;
                    q[0] = p[0];
                    q[1] = p[1];
                    q[2] = p[2];
                    q[3] = channels == 4 ? p[3] : 255;
                }
            *width = w;
            *height = h;
            *rgba = out;
            out = NULL;
            status = 0;
        }
    }
    if (png != NULL) png_destroy_read_struct(&png, info ? &info : NULL, NULL);
    free(out);
    fclose(file);
    return status;
}

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char *message;
} jpeg_errors;

static void jpeg_failed(j_common_ptr c) {
    jpeg_errors *e = (jpeg_errors *)c->err;
    char text[JMSG_LENGTH_MAX];
    c->err->format_message(c, text);
    snprintf(e->message, MESSAGE, "%s", text);
    longjmp(e->jump, 1);
}

static void jpeg_said(j_common_ptr c, int level) {
    (void)c;
    (void)level;
}

int ptk_test_jpeg_encode(const unsigned char *pixels, uint32_t width, uint32_t height, int components, int quality,
                         int progressive, int restart_rows, unsigned char **jpeg, size_t *size, char message[200]) {
    message[0] = 0;
    *jpeg = NULL;
    *size = 0;
    struct jpeg_compress_struct c;
    jpeg_errors errors;
    memset(&c, 0, sizeof c);
    errors.message = message;
    c.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = jpeg_failed;
    errors.pub.emit_message = jpeg_said;
    /* Written by libjpeg through their addresses (so in memory, not registers), read after a longjmp. */
    unsigned char *output = NULL;
    unsigned long output_size = 0;
    if (setjmp(errors.jump)) {
        jpeg_destroy_compress(&c);
        free(output);
        return 1;
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &output, &output_size);
    c.image_width = width;
    c.image_height = height;
    c.input_components = components;
    c.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    if (progressive) jpeg_simple_progression(&c);
    c.restart_in_rows = restart_rows;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)pixels + (size_t)c.next_scanline * width * components;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *jpeg = output;
    *size = output_size;
    return 0;
}

int ptk_test_jpeg_decode_rgba(const unsigned char *jpeg, size_t size, uint32_t *width, uint32_t *height,
                              unsigned char **rgba, int *progressive, int *sampling, char message[200]) {
    struct jpeg_decompress_struct c;
    jpeg_errors e;
    unsigned char *volatile pixels = NULL;
    unsigned char *volatile row = NULL;
    memset(&c, 0, sizeof c);
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = jpeg_failed;
    e.pub.emit_message = jpeg_said;
    e.message = message;
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&c);
        free(pixels);
        free(row);
        return 1;
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, jpeg, (unsigned long)size);
    jpeg_read_header(&c, TRUE);
    *progressive = c.progressive_mode ? 1 : 0;
    *sampling = c.num_components == 3 ? c.comp_info[0].h_samp_factor * 10 + c.comp_info[0].v_samp_factor : 0;
    c.out_color_space = JCS_RGB;
    jpeg_start_decompress(&c);
    const uint32_t w = c.output_width, h = c.output_height;
    pixels = malloc((size_t)w * h * 4);
    row = malloc((size_t)w * 3);
    if (pixels == NULL || row == NULL) {
        snprintf(message, 200, "out of memory");
        longjmp(e.jump, 1);
    }
    while (c.output_scanline < h) {
        const uint32_t y = c.output_scanline;
        JSAMPROW rows[1] = {row};
        jpeg_read_scanlines(&c, rows, 1);
        for (uint32_t x = 0; x < w; x++) {
            memcpy(pixels + ((size_t)y * w + x) * 4, row + (size_t)x * 3, 3);
            pixels[((size_t)y * w + x) * 4 + 3] = 255;
        }
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    free(row);
    *width = w;
    *height = h;
    *rgba = pixels;
    return 0;
}
