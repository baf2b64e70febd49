#include "ptk_png.h"
#include "ptk_colour.h"
#include "ptk_render.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libpng's callbacks share this: where to read from, and where an error message goes. */
typedef struct {
    int fd;
    char *message;
    unsigned char *buffer;
    size_t start, end;
    /* The encoded thumbnail, grown by the write callback. */
    unsigned char *output;
    size_t output_size, output_capacity;
    /* Why the photo's colour profile was set aside (libpng's warning about its iCCP). */
    char *colour_note;
} io_context;

enum { READ_BUFFER = 64 * 1024, MESSAGE = 200 };

static void on_error(png_structp png, png_const_charp text) {
    io_context *io = png_get_error_ptr(png);
    snprintf(io->message, MESSAGE, "%s", text);
    png_longjmp(png, 1);
}

/* Warnings are not printed; one about the iCCP chunk (too large, not a valid profile) says
 * why the colour profile is not applied. */
static void on_warning(png_structp png, png_const_charp text) {
    io_context *io = png_get_error_ptr(png);
    if (io != NULL && io->colour_note != NULL && io->colour_note[0] == 0 && strncmp(text, "iCCP", 4) == 0) {
        snprintf(io->colour_note, 120, "colour profile set aside (libpng: %s); shown as sRGB", text);
    }
}

/* Reads through a buffer: libpng asks for 4 and 8 bytes at a time between chunks. */
static void read_callback(png_structp png, png_bytep data, size_t length) {
    io_context *io = png_get_io_ptr(png);
    while (length > 0) {
        if (io->start == io->end) {
            ssize_t n = read(io->fd, io->buffer, READ_BUFFER);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) png_error(png, strerror(errno));
            if (n == 0) png_error(png, "the file ends before the image data does");
            io->start = 0;
            io->end = (size_t)n;
        }
        size_t take = io->end - io->start < length ? io->end - io->start : length;
        memcpy(data, io->buffer + io->start, take);
        io->start += take;
        data += take;
        length -= take;
    }
}

static void write_callback(png_structp png, png_bytep data, size_t length) {
    io_context *io = png_get_io_ptr(png);
    if (io->output_capacity - io->output_size < length) {
        size_t capacity = io->output_capacity ? io->output_capacity : 16384;
        while (capacity - io->output_size < length) capacity *= 2;
        unsigned char *grown = realloc(io->output, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        io->output = grown;
        io->output_capacity = capacity;
    }
    memcpy(io->output + io->output_size, data, length);
    io->output_size += length;
}

static void flush_callback(png_structp png) { (void)png; }

/* Limits set before png_read_info, so that a hostile file cannot make libpng allocate or work
 * without bound: image size, how many ancillary chunks are kept (128), how large one may be
 * (1 MiB, which bounds an iCCP profile as it inflates; a larger one is passed over with a
 * warning). Compressed text is not needed for a thumbnail and is skipped unread (no
 * decompression); iCCP, gAMA, cHRM and sRGB (colour), eXIf (orientation, the day taken) and
 * plain tEXt ("Creation Time") are read. */
static void set_limits(png_structp png) {
    png_set_user_limits(png, 1000000, 1000000);
    png_set_chunk_cache_max(png, 128);
    png_set_chunk_malloc_max(png, PTK_ICC_LIMIT);
    static const png_byte skipped[] = "iTXt\0zTXt\0sPLT";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skipped, 3);
}

/* What the PNG says its colours are: sRGB, else its ICC profile, else gAMA and cHRM (PNG's
 * own order of precedence); none of them means sRGB. */
static void read_colour(png_structp png, png_infop info, ptk_colour *colour) {
    int intent;
    if (png_get_sRGB(png, info, &intent) != 0) return;
    png_charp name;
    int compression;
    png_bytep profile;
    png_uint_32 length;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &length) != 0 && profile != NULL) {
        ptk_colour_icc(colour, profile, length);
        return;
    }
    double gamma = 0;
    if (png_get_gAMA(png, info, &gamma) == 0) gamma = 0;
    double c[8];
    const int chrm = png_get_cHRM(png, info, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7]) != 0;
    ptk_colour_gamma(colour, gamma, chrm ? c : NULL);
}

typedef struct {
    io_context io;
    png_structp png;
    png_infop info;
    unsigned char *row;
    ptk_colour colour;
    ptk_box box;
} thumbnail_state;

/* Encodes 8-bit RGB or RGBA pixels as a PNG into io->output. */
static int encode_into(io_context *io, png_structp *writer, png_infop *writer_info, const unsigned char *pixels,
                       uint32_t width, uint32_t height, int channels) {
    *writer = png_create_write_struct(PNG_LIBPNG_VER_STRING, io, on_error, on_warning);
    if (*writer == NULL || (*writer_info = png_create_info_struct(*writer)) == NULL) {
        snprintf(io->message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    if (setjmp(png_jmpbuf(*writer))) return PTK_PNG_FAILED;
    png_set_write_fn(*writer, io, write_callback, flush_callback);
    png_set_IHDR(*writer, *writer_info, width, height, 8,
                 channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(*writer, 1);
    /* The pixels are sRGB, and the thumbnail says so. */
    png_set_sRGB_gAMA_and_cHRM(*writer, *writer_info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(*writer, *writer_info);
    for (uint32_t y = 0; y < height; y++) png_write_row(*writer, (png_bytep)pixels + (size_t)y * width * channels);
    png_write_end(*writer, NULL);
    return PTK_PNG_OK;
}

int ptk_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height, int channels,
                   unsigned char **png, size_t *size, char message[200]) {
    io_context io = {0};
    io.message = message;
    message[0] = 0;
    png_structp writer = NULL;
    png_infop writer_info = NULL;
    int status = encode_into(&io, &writer, &writer_info, pixels, width, height, channels);
    if (writer != NULL) png_destroy_write_struct(&writer, writer_info ? &writer_info : NULL);
    if (status != PTK_PNG_OK) {
        free(io.output);
        return status;
    }
    *png = io.output;
    *size = io.output_size;
    return PTK_PNG_OK;
}

void ptk_thumbnail_fit(uint32_t width, uint32_t height, uint32_t max_side, uint32_t *tw, uint32_t *th) {
    *tw = width;
    *th = height;
    if (max_side == 0) max_side = 1;
    if (width > max_side || height > max_side) {
        if (width >= height) {
            *tw = max_side;
            *th = (uint32_t)(((uint64_t)height * max_side + width / 2) / width);
        } else {
            *th = max_side;
            *tw = (uint32_t)(((uint64_t)width * max_side + height / 2) / height);
        }
        if (*tw == 0) *tw = 1;
        if (*th == 0) *th = 1;
    }
}

/* The eXIf chunk libpng has read, if any, into `facts`. Returns whether there was one. */
static int read_exif(png_structp png, png_infop info, ptk_photo_facts *facts) {
#ifdef PNG_eXIf_SUPPORTED
    png_uint_32 size = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(png, info, &size, &exif) != 0 && exif != NULL && size > 0) {
        ptk_exif_read(exif, size, 0, facts);
        return 1;
    }
#endif
    return 0;
}

/* What the chunks before the image data say: eXIf (EXIF), else tIME, else a "Creation Time"
 * text. Returns whether there was an eXIf. */
static int read_facts(png_structp png, png_infop info, ptk_photo_facts *facts) {
    const int exif = read_exif(png, info, facts);
    if (facts->taken_source != 0) return exif;
    png_timep time = NULL;
    if (png_get_tIME(png, info, &time) != 0 && time != NULL && time->month >= 1 && time->month <= 12 && time->day >= 1 && time->day <= 31
        && time->hour <= 23 && time->minute <= 59 && time->second <= 60) {
        snprintf(facts->taken, sizeof facts->taken, "%04u-%02u-%02uT%02u:%02u:%02uZ", time->year, time->month, time->day,
                 time->hour, time->minute, time->second);
        facts->taken_source = 2;
        return exif;
    }
    png_textp text = NULL;
    int count = 0;
    if (png_get_text(png, info, &text, &count) > 0) {
        for (int i = 0; i < count; i++) {
            if (text[i].key == NULL || strcmp(text[i].key, "Creation Time") != 0 || text[i].text == NULL) continue;
            size_t n = 0;
            for (const char *c = text[i].text; *c != 0 && n + 1 < sizeof facts->taken; c++) {
                if ((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7F) facts->taken[n++] = *c;
            }
            facts->taken[n] = 0;
            if (n > 0) facts->taken_source = 3;
            return exif;
        }
    }
    return exif;
}

/* An eXIf after the image data (PNG allows it there too): the chunks up to IEND are read, and
 * what its EXIF says replaces what tIME or a text said. A damaged tail costs nothing: libpng's
 * error comes back here and is ignored (the image is already read). */
static void read_late_exif(png_structp png, png_infop info, ptk_photo_facts *facts) {
    if (setjmp(png_jmpbuf(png))) return;
    png_read_end(png, info);
    ptk_photo_facts late;
    memset(&late, 0, sizeof late);
    if (!read_exif(png, info, &late)) return;
    if (late.orientation != 0) facts->orientation = late.orientation;
    if (late.taken_source != 0) {
        memcpy(facts->taken, late.taken, sizeof facts->taken);
        memcpy(facts->taken_offset, late.taken_offset, sizeof facts->taken_offset);
        memcpy(facts->taken_subsec, late.taken_subsec, sizeof facts->taken_subsec);
        facts->taken_source = late.taken_source;
    }
    if (late.make[0] != 0) memcpy(facts->make, late.make, sizeof facts->make);
    if (late.model[0] != 0) memcpy(facts->model, late.model, sizeof facts->model);
    if (late.has_location) facts->has_location = 1;
    if (late.problem[0] != 0) memcpy(facts->problem, late.problem, sizeof facts->problem);
}

static int make_renditions(thumbnail_state *s, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                           ptk_thumbnail_result *out) {
    s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s->io, on_error, on_warning);
    if (s->png == NULL || (s->info = png_create_info_struct(s->png)) == NULL) {
        snprintf(s->io.message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    if (setjmp(png_jmpbuf(s->png))) return PTK_PNG_FAILED;
    png_set_read_fn(s->png, &s->io, read_callback);
    set_limits(s->png);
    png_read_info(s->png, s->info);
    const int early_exif = read_facts(s->png, s->info, &out->facts);
    const uint32_t width = png_get_image_width(s->png, s->info);
    const uint32_t height = png_get_image_height(s->png, s->info);
    out->width = width;
    out->height = height;
    out->bit_depth = png_get_bit_depth(s->png, s->info);
    out->color_type = png_get_color_type(s->png, s->info);
    out->interlace = png_get_interlace_type(s->png, s->info);
    const uint64_t pixels = (uint64_t)width * height;
    if (pixels > max_pixels) {
        snprintf(s->io.message, MESSAGE, "%.1f megapixels is over the %.1f-megapixel limit for thumbnails",
                 pixels / 1e6, max_pixels / 1e6);
        return PTK_PNG_TOO_LARGE;
    }

    /* Every colour type and depth becomes 8-bit RGB or RGBA. Interlace handling stays off:
     * each Adam7 pass arrives as its own small image, and its pixels go to their buckets. */
    png_set_expand(s->png);
    png_set_strip_16(s->png);
    png_set_gray_to_rgb(s->png);
    png_read_update_info(s->png, s->info);
    const int channels = png_get_channels(s->png, s->info);
    if (channels != 3 && channels != 4) {
        snprintf(s->io.message, MESSAGE, "unexpected %d channels after expansion", channels);
        return PTK_PNG_FAILED;
    }

    uint32_t tw[PTK_MAX_RENDITIONS], th[PTK_MAX_RENDITIONS];
    ptk_render_sizes(request, width, height, tw, th);
    read_colour(s->png, s->info, &s->colour);
    const int interlaced = out->interlace == PNG_INTERLACE_ADAM7;
    s->row = malloc(png_get_rowbytes(s->png, s->info));
    /* An interlaced PNG's passes go over the rows again: every target row is held. */
    if (s->row == NULL || ptk_box_init(&s->box, &s->colour, width, height, request->count, tw, th, channels == 4, !interlaced) != 0) {
        snprintf(s->io.message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    snprintf(out->decode_path, sizeof out->decode_path, "whole image");

    for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
        uint32_t rows = height, columns = width, y0 = 0, x0 = 0, dy = 1, dx = 1;
        if (interlaced) {
            rows = PNG_PASS_ROWS(height, pass);
            columns = PNG_PASS_COLS(width, pass);
            y0 = PNG_PASS_START_ROW(pass);
            x0 = PNG_PASS_START_COL(pass);
            dy = 1u << PNG_PASS_ROW_SHIFT(pass);
            dx = 1u << PNG_PASS_COL_SHIFT(pass);
            if (rows == 0 || columns == 0) continue; /* libpng skips empty passes too */
        }
        for (uint32_t j = 0; j < rows; j++) {
            if (cancel != NULL && *cancel) {
                snprintf(s->io.message, MESSAGE, "cancelled");
                return PTK_PNG_CANCELLED;
            }
            png_read_row(s->png, s->row, NULL);
            ptk_box_add(&s->box, y0 + j * dy, s->row, x0, dx, columns);
        }
    }
    /* The chunks after the image data matter only for an eXIf there. */
    if (!early_exif) read_late_exif(s->png, s->info, &out->facts);

    ptk_box_finish(&s->box);
    if (out->colour_note[0] == 0) snprintf(out->colour_note, sizeof out->colour_note, "%s", s->colour.note[0] ? s->colour.note : s->box.note);
    return ptk_render_encode(&s->box, out->facts.orientation, request, out);
}

int ptk_png_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                   ptk_thumbnail_result *out) {
    memset(out, 0, sizeof *out);
    thumbnail_state *s = calloc(1, sizeof *s);
    if (s == NULL || (s->io.buffer = malloc(READ_BUFFER)) == NULL) {
        free(s);
        snprintf(out->message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    s->io.fd = fd;
    s->io.message = out->message;
    s->io.colour_note = out->colour_note;
    int status = make_renditions(s, request, max_pixels, cancel, out);
    if (status != PTK_PNG_OK) ptk_result_free(out);
    if (s->png != NULL) png_destroy_read_struct(&s->png, s->info ? &s->info : NULL, NULL);
    free(s->io.buffer);
    free(s->row);
    ptk_box_free(&s->box);
    ptk_colour_free(&s->colour);
    free(s);
    return status;
}

int ptk_png_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                      ptk_thumbnail_result *out) {
    const ptk_render_request request = ptk_single_png_request(max_side);
    const int status = ptk_png_render(fd, &request, max_pixels, cancel, out);
    ptk_keep_single_png(status, out);
    return status;
}

void ptk_png_free(void *p) { free(p); }
