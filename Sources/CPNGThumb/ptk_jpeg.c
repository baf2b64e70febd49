#include "ptk_jpeg.h"
#include "ptk_colour.h"
#include "ptk_render.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jerror.h>
#include <jpeglib.h>

enum { READ_BUFFER = 64 * 1024, MESSAGE = 200, MAX_SCANS = 1000, MAX_PASSES = 16 };
static const long MEMORY_LIMIT = 256L * 1024 * 1024;

/* libjpeg's error handler: the message goes to `message`, then back to the setjmp. */
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char *message;
} error_manager;

static void on_error(j_common_ptr c) {
    error_manager *e = (error_manager *)c->err;
    if (c->err->msg_code == JERR_NO_BACKING_STORE) {
        snprintf(e->message, MESSAGE, "needs more than %ld MB to decode", MEMORY_LIMIT >> 20);
    } else if (e->message[0] == 0) {
        char text[JMSG_LENGTH_MAX];
        (*c->err->format_message)(c, text);
        snprintf(e->message, MESSAGE, "%s", text);
    }
    longjmp(e->jump, 1);
}

/* Warnings and traces are not printed (a daemon's stderr is its log). */
static void on_message(j_common_ptr c, int level) {
    (void)c;
    (void)level;
}

/* Fails the decode with `text` as the reason. */
static void fail(j_common_ptr c, const char *text) {
    error_manager *e = (error_manager *)c->err;
    snprintf(e->message, MESSAGE, "%s", text);
    longjmp(e->jump, 1);
}

/* A source reading the descriptor through a buffer. */
typedef struct {
    struct jpeg_source_mgr pub;
    int fd;
    JOCTET *buffer;
} fd_source;

static void init_source(j_decompress_ptr c) { (void)c; }
static void term_source(j_decompress_ptr c) { (void)c; }

static boolean fill_input_buffer(j_decompress_ptr c) {
    fd_source *src = (fd_source *)c->src;
    ssize_t n;
    do n = read(src->fd, src->buffer, READ_BUFFER);
    while (n < 0 && errno == EINTR);
    if (n < 0) fail((j_common_ptr)c, strerror(errno));
    /* libjpeg's own sources warn and make up an EOI, decoding grey for what is missing: a
     * thumbnail of a truncated photo would hide that it is truncated. */
    if (n == 0) fail((j_common_ptr)c, "the file ends before the image data does");
    src->pub.next_input_byte = src->buffer;
    src->pub.bytes_in_buffer = (size_t)n;
    return TRUE;
}

static void skip_input_data(j_decompress_ptr c, long count) {
    fd_source *src = (fd_source *)c->src;
    if (count <= 0) return;
    while ((size_t)count > src->pub.bytes_in_buffer) {
        count -= (long)src->pub.bytes_in_buffer;
        fill_input_buffer(c);
    }
    src->pub.next_input_byte += count;
    src->pub.bytes_in_buffer -= (size_t)count;
}

/* Called as libjpeg works through the file (before each row of each scan): bounds the work
 * of the scans and checks the cancel flag. A scan's work is about its blocks: a refinement
 * scan visits each coefficient of each block it covers, even where an end-of-band run codes a
 * whole row of blocks in a few bits, so 1,000 such scans of a 6144x6144 grey image (63 kB) took
 * 42 s. The scans may cover the image's blocks at most MAX_PASSES times in all: libjpeg's
 * standard progression covers a block 4 to 6 times, mozjpeg's optimised ones about 10; with
 * the memory limit (a progressive image's coefficients, 128 bytes a block, in 256 MB) that is
 * at most 16 x 2 M blocks. A file of many scans of a few blocks still stops at MAX_SCANS. */
typedef struct {
    struct jpeg_progress_mgr pub;
    const volatile int *cancel;
    int cancelled;
    int scan;              /* the scan whose blocks were last counted */
    unsigned long long work; /* blocks of every scan so far */
} progress_monitor;

/* The blocks of every component: one pass over the image. */
static unsigned long long image_blocks(j_decompress_ptr d) {
    unsigned long long blocks = 0;
    for (int i = 0; i < d->num_components; i++) {
        blocks += (unsigned long long)d->comp_info[i].width_in_blocks * d->comp_info[i].height_in_blocks;
    }
    return blocks;
}

static void on_progress(j_common_ptr c) {
    progress_monitor *p = (progress_monitor *)c->progress;
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->input_scan_number > MAX_SCANS) fail(c, "more than 1000 scans");
    if (d->input_scan_number != p->scan) {
        p->scan = d->input_scan_number;
        for (int i = 0; i < d->comps_in_scan; i++) {
            p->work += (unsigned long long)d->cur_comp_info[i]->width_in_blocks * d->cur_comp_info[i]->height_in_blocks;
        }
        if (p->work > MAX_PASSES * image_blocks(d)) {
            char text[MESSAGE];
            snprintf(text, sizeof text, "its first %d scans pass over the image more than %d times", d->input_scan_number, MAX_PASSES);
            fail(c, text);
        }
    }
    if (p->cancel != NULL && *p->cancel) {
        p->cancelled = 1;
        fail(c, "cancelled");
    }
}

/* What the header's APP1 and APP2 segments leave: the first Exif APP1 (at most 64 KiB, as
 * every segment) and the ICC profile's APP2 chunks (ICC.1 annex B.4) while they total at most
 * PTK_ICC_LIMIT; the rest is skipped as it is read, so a file of thousands of segments costs
 * no memory. libjpeg's jpeg_save_markers would keep every one. */
enum { ICC_CHUNKS = 256, ICC_HEADER = 14 };
typedef struct {
    unsigned char *exif;
    unsigned exif_length;
    unsigned char *icc[ICC_CHUNKS]; /* by sequence number, 1 to 255 */
    unsigned icc_length[ICC_CHUNKS];
    int icc_count;                  /* the chunk count the first ICC chunk declares */
    int icc_bad;                    /* chunks that disagree, or one twice */
    size_t icc_total;               /* bytes of every ICC chunk seen, kept or not */
} markers;

typedef struct {
    struct jpeg_decompress_struct jpeg; /* first: the marker processors find the state from it */
    markers markers;
    error_manager error;
    fd_source source;
    progress_monitor progress;
    int created;
    unsigned char *row;
    unsigned char *rgb; /* a CMYK row as RGB */
    JOCTET *icc;
    ptk_colour colour;
    ptk_box box;
} jpeg_state;

/* One byte of the file (the source never suspends: it fails the decode at the end). */
static unsigned next_byte(j_decompress_ptr c) {
    struct jpeg_source_mgr *src = c->src;
    if (src->bytes_in_buffer == 0) (*src->fill_input_buffer)(c);
    src->bytes_in_buffer--;
    return *src->next_input_byte++;
}

/* A segment's length field: what follows it. */
static long segment_length(j_decompress_ptr c) {
    const unsigned high = next_byte(c);
    const long length = (long)(high << 8 | next_byte(c)) - 2;
    if (length < 0) fail((j_common_ptr)c, "a marker segment shorter than its length field");
    return length;
}

static void read_into(j_decompress_ptr c, unsigned char *out, long count) {
    for (long i = 0; i < count; i++) out[i] = (unsigned char)next_byte(c);
}

/* APP1: the first one that holds EXIF is kept; the others (XMP, or more EXIF) are skipped. */
static boolean read_app1(j_decompress_ptr c) {
    markers *m = &((jpeg_state *)c)->markers;
    long length = segment_length(c);
    if (m->exif == NULL && length >= 6) {
        unsigned char head[6];
        read_into(c, head, 6);
        length -= 6;
        if (memcmp(head, "Exif\0\0", 6) == 0 && (m->exif = malloc((size_t)length + 6)) != NULL) {
            memcpy(m->exif, head, 6);
            read_into(c, m->exif + 6, length);
            m->exif_length = (unsigned)length + 6;
            return TRUE;
        }
    }
    if (length > 0) (*c->src->skip_input_data)(c, length);
    return TRUE;
}

/* APP2: ICC profile chunks, kept while they total at most PTK_ICC_LIMIT. */
static boolean read_app2(j_decompress_ptr c) {
    markers *m = &((jpeg_state *)c)->markers;
    long length = segment_length(c);
    if (length < ICC_HEADER) {
        if (length > 0) (*c->src->skip_input_data)(c, length);
        return TRUE;
    }
    unsigned char head[ICC_HEADER];
    read_into(c, head, ICC_HEADER);
    length -= ICC_HEADER;
    if (memcmp(head, "ICC_PROFILE\0", 12) != 0) {
        if (length > 0) (*c->src->skip_input_data)(c, length);
        return TRUE;
    }
    const int sequence = head[12], count = head[13];
    m->icc_total += (size_t)length;
    if (m->icc_count == 0) m->icc_count = count;
    if (sequence == 0 || count == 0 || sequence > count || count != m->icc_count || m->icc[sequence] != NULL) m->icc_bad = 1;
    if (!m->icc_bad && m->icc_total <= PTK_ICC_LIMIT && (m->icc[sequence] = malloc(length ? (size_t)length : 1)) != NULL) {
        read_into(c, m->icc[sequence], length);
        m->icc_length[sequence] = (unsigned)length;
        return TRUE;
    }
    if (length > 0) (*c->src->skip_input_data)(c, length);
    return TRUE;
}

/* The ICC profile the kept chunks make, in `colour`: none when there is none or its chunks
 * disagree; a note when it is over the limit. */
static void use_icc(jpeg_state *s) {
    markers *m = &s->markers;
    if (m->icc_count == 0 || m->icc_bad) return;
    if (m->icc_total > PTK_ICC_LIMIT) {
        ptk_colour_icc(&s->colour, NULL, m->icc_total);
        return;
    }
    for (int i = 1; i <= m->icc_count; i++) {
        if (m->icc[i] == NULL) return;
    }
    if ((s->icc = malloc(m->icc_total ? m->icc_total : 1)) == NULL) return;
    size_t at = 0;
    for (int i = 1; i <= m->icc_count; i++) {
        memcpy(s->icc + at, m->icc[i], m->icc_length[i]);
        at += m->icc_length[i];
    }
    ptk_colour_icc(&s->colour, s->icc, at);
}

static int make_renditions(jpeg_state *s, const ptk_render_request *request, uint64_t max_pixels, ptk_thumbnail_result *out) {
    j_decompress_ptr c = &s->jpeg;
    c->err = jpeg_std_error(&s->error.pub);
    s->error.pub.error_exit = on_error;
    s->error.pub.emit_message = on_message;
    s->error.message = out->message;
    if (setjmp(s->error.jump)) return s->progress.cancelled ? PTK_PNG_CANCELLED : PTK_PNG_FAILED;
    jpeg_create_decompress(c);
    s->created = 1;
    c->mem->max_memory_to_use = MEMORY_LIMIT;
    s->source.pub.init_source = init_source;
    s->source.pub.fill_input_buffer = fill_input_buffer;
    s->source.pub.skip_input_data = skip_input_data;
    s->source.pub.resync_to_restart = jpeg_resync_to_restart;
    s->source.pub.term_source = term_source;
    c->src = &s->source.pub;
    s->progress.pub.progress_monitor = on_progress;
    c->progress = &s->progress.pub;

    /* EXIF is in an APP1 segment starting "Exif\0\0"; an ICC profile in APP2 segments: read
     * by the processors above, which keep only what is used. */
    jpeg_set_marker_processor(c, JPEG_APP0 + 1, read_app1);
    jpeg_set_marker_processor(c, JPEG_APP0 + 2, read_app2);
    jpeg_read_header(c, TRUE);
    use_icc(s);
    if (s->markers.exif != NULL) ptk_exif_read(s->markers.exif, s->markers.exif_length, 1, &out->facts);
    const uint32_t width = c->image_width, height = c->image_height;
    out->width = width;
    out->height = height;
    out->bit_depth = c->data_precision;
    out->color_type = c->num_components == 1 ? 0 : 2;
    out->interlace = c->progressive_mode ? 1 : 0;
    const uint64_t pixels = (uint64_t)width * height;
    if (pixels > max_pixels) {
        snprintf(out->message, MESSAGE, "%.1f megapixels is over the %.1f-megapixel limit for thumbnails",
                 pixels / 1e6, max_pixels / 1e6);
        return PTK_PNG_TOO_LARGE;
    }
    uint32_t tw[PTK_MAX_RENDITIONS], th[PTK_MAX_RENDITIONS];
    ptk_render_sizes(request, width, height, tw, th);
    uint32_t most_w = 0, most_h = 0;
    for (int i = 0; i < request->count; i++) {
        if (tw[i] > most_w) most_w = tw[i];
        if (th[i] > most_h) most_h = th[i];
    }
    /* The smallest scale M/8 whose image still has every rendition's width and height (so
     * the largest long side; twice them when `fine`): libjpeg-turbo's scaled IDCT does the
     * bulk of the downscale, the box in linear light the rest. */
    unsigned m = 8;
    for (unsigned k = 1; k <= 8; k++) {
        c->scale_num = k;
        c->scale_denom = 8;
        jpeg_calc_output_dimensions(c);
        if (c->output_width >= most_w * (request->fine ? 2 : 1) && c->output_height >= most_h * (request->fine ? 2 : 1)) {
            m = k;
            break;
        }
    }
    c->scale_num = m;
    c->scale_denom = 8;
    if (m == 8) {
        snprintf(out->decode_path, sizeof out->decode_path, "whole image");
    } else {
        snprintf(out->decode_path, sizeof out->decode_path, "JPEG scaled %u/8", m);
    }
    const int cmyk = c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK;
    c->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(c);
    const uint32_t ow = c->output_width, oh = c->output_height;
    const int channels = c->output_components;
    if (ow == 0 || oh == 0 || (channels != 3 && channels != 4)) fail((j_common_ptr)c, "unexpected output format");

    s->row = malloc((size_t)ow * channels);
    s->rgb = malloc((size_t)ow * 3);
    if (s->row == NULL || s->rgb == NULL || ptk_box_init(&s->box, cmyk ? NULL : &s->colour, ow, oh, request->count, tw, th, 0, 1) != 0) {
        fail((j_common_ptr)c, "out of memory");
    }
    while (c->output_scanline < oh) {
        if (s->progress.cancel != NULL && *s->progress.cancel) {
            s->progress.cancelled = 1;
            fail((j_common_ptr)c, "cancelled");
        }
        const uint32_t y = c->output_scanline;
        JSAMPROW rows[1] = {s->row};
        if (jpeg_read_scanlines(c, rows, 1) != 1) fail((j_common_ptr)c, "the image data ends early");
        if (cmyk) {
            const unsigned char *p = s->row;
            unsigned char *q = s->rgb;
            for (uint32_t x = 0; x < ow; x++, p += 4, q += 3) {
                /* Adobe's CMYK JPEGs store inverted ink (most CMYK JPEGs are Adobe's). */
                const unsigned k = p[3];
                if (c->saw_Adobe_marker) {
                    q[0] = p[0] * k / 255, q[1] = p[1] * k / 255, q[2] = p[2] * k / 255;
                } else {
                    q[0] = (255 - p[0]) * (255 - k) / 255, q[1] = (255 - p[1]) * (255 - k) / 255, q[2] = (255 - p[2]) * (255 - k) / 255;
                }
            }
        }
        ptk_box_add(&s->box, y, cmyk ? s->rgb : s->row, 0, 1, ow);
    }
    /* The rest of the file is not needed for the thumbnail: jpeg_finish_decompress is skipped. */
    ptk_box_finish(&s->box);
    snprintf(out->colour_note, sizeof out->colour_note, "%s", s->colour.note[0] ? s->colour.note : s->box.note);
    return ptk_render_encode(&s->box, out->facts.orientation, request, out);
}

int ptk_jpeg_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                    ptk_thumbnail_result *out) {
    memset(out, 0, sizeof *out);
    jpeg_state *s = calloc(1, sizeof *s);
    if (s == NULL || (s->source.buffer = malloc(READ_BUFFER)) == NULL) {
        free(s);
        snprintf(out->message, MESSAGE, "out of memory");
        return PTK_PNG_FAILED;
    }
    s->source.fd = fd;
    s->progress.cancel = cancel;
    int status = make_renditions(s, request, max_pixels, out);
    if (status != PTK_PNG_OK) ptk_result_free(out);
    if (s->created) jpeg_destroy_decompress(&s->jpeg);
    free(s->source.buffer);
    free(s->row);
    free(s->rgb);
    free(s->icc);
    free(s->markers.exif);
    for (int i = 0; i < ICC_CHUNKS; i++) free(s->markers.icc[i]);
    ptk_box_free(&s->box);
    ptk_colour_free(&s->colour);
    free(s);
    return status;
}

int ptk_jpeg_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                       ptk_thumbnail_result *out) {
    const ptk_render_request request = ptk_single_png_request(max_side);
    const int status = ptk_jpeg_render(fd, &request, max_pixels, cancel, out);
    ptk_keep_single_png(status, out);
    return status;
}
