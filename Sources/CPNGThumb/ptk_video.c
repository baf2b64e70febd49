#include "ptk_video.h"
#include "ptk_colour.h"
#include "ptk_render.h"

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MESSAGE = 200, IO_BUFFER = 65536, MAX_PACKETS = 600 };
/* What libavformat may read looking for the first picture: the moov (at most 64 MiB, as
 * MP4Check allows) and the first packets. */
static const int64_t READ_LIMIT = 128LL << 20;
/* The memory a decode may take: a decoder keeps up to 16 reference pictures and more in
 * flight (1.5 bytes a pixel each in 8-bit 4:2:0, 3 in 10-bit), then RGB (3, or 6 for a picture
 * of more than 8 bits): some 24 bytes a pixel (a 5120x4096 12-bit 4:4:4 poster peaked at 315 MB). */
static const uint64_t MEMORY_LIMIT = 512ULL << 20;
/* The most FFmpeg may allocate at once (av_max_alloc): a sample table declaring millions of
 * entries in a few bytes makes libavformat build its index in one allocation; a 4K picture's
 * planes are 12 MB. */
static const size_t ALLOCATION_LIMIT = 256u << 20;
/* The processor time one poster may take: a 4K HEVC picture takes 0.2 s on one core of the
 * test machine, some ten times that on a Raspberry Pi. */
static const double CPU_LIMIT = 5.0;

static double thread_seconds(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

typedef struct {
    int fd;
    int64_t offset, size, read;
    const volatile int *cancel;
} reader;

static int read_packet(void *opaque, uint8_t *buf, int size) {
    reader *r = opaque;
    if (r->read >= READ_LIMIT) return AVERROR(EFBIG);
    ssize_t n;
    do n = pread(r->fd, buf, (size_t)size, r->offset);
    while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    r->offset += n;
    r->read += n;
    return (int)n;
}

static int64_t seek_to(void *opaque, int64_t offset, int whence) {
    reader *r = opaque;
    whence &= ~AVSEEK_FORCE;
    int64_t to;
    switch (whence) {
    case AVSEEK_SIZE: return r->size;
    case SEEK_SET: to = offset; break;
    case SEEK_CUR: to = r->offset + offset; break;
    case SEEK_END: to = r->size + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (to < 0) return AVERROR(EINVAL);
    r->offset = to;
    return to;
}

static int interrupted(void *opaque) {
    const reader *r = opaque;
    return r->cancel != NULL && *r->cancel;
}

static void error_text(char *message, const char *what, int e) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(e, text, sizeof text);
    snprintf(message, MESSAGE, "%s: %s", what, text);
}

/* The orientation (EXIF 1, 3, 6, 8) the track's display matrix turns its pictures by. */
static int orientation_of(const AVStream *stream) {
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (matrix == NULL) return 1;
    const double counterclockwise = av_display_rotation_get((const int32_t *)matrix);
    if (isnan(counterclockwise)) return 1;
    const int clockwise = (((int)lround(-counterclockwise) % 360) + 360) % 360;
    return clockwise == 90 ? 6 : clockwise == 180 ? 3 : clockwise == 270 ? 8 : 1;
}

/* When the movie was made: Apple's com.apple.quicktime.creationdate ("2024-05-01T12:00:00+0200",
 * the local time and its offset, as EXIF gives them), else the movie header's creation_time (UTC). */
static void read_time(const AVFormatContext *format, ptk_photo_facts *facts) {
    const AVDictionaryEntry *apple = av_dict_get(format->metadata, "com.apple.quicktime.creationdate", NULL, 0);
    int y, mo, d, h, mi, s;
    char sign;
    int oh, om;
    if (apple != NULL && strlen(apple->value) >= 24 &&
        sscanf(apple->value, "%4d-%2d-%2dT%2d:%2d:%2d%c%2d%2d", &y, &mo, &d, &h, &mi, &s, &sign, &oh, &om) == 9 &&
        (sign == '+' || sign == '-')) {
        snprintf(facts->taken, sizeof facts->taken, "%04d:%02d:%02d %02d:%02d:%02d", y, mo, d, h, mi, s);
        snprintf(facts->taken_offset, sizeof facts->taken_offset, "%c%02d:%02d", sign, oh, om);
        facts->taken_source = 1;
    } else {
        const AVDictionaryEntry *made = av_dict_get(format->metadata, "creation_time", NULL, 0);
        if (made != NULL && sscanf(made->value, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) == 6 && y > 1904) {
            snprintf(facts->taken, sizeof facts->taken, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, s);
            facts->taken_source = 2;
        }
    }
}

/* What the movie says of itself besides its time: Apple's make and model (an iPhone's), and
 * whether it records where it was made (Apple's ISO 6709 key, or the "location" that
 * libavformat reads from a phone's udta "\xa9xyz"; the place itself is never read out). */
static void read_facts(const AVFormatContext *format, ptk_photo_facts *facts) {
    read_time(format, facts);
    const AVDictionaryEntry *make = av_dict_get(format->metadata, "com.apple.quicktime.make", NULL, 0);
    const AVDictionaryEntry *model = av_dict_get(format->metadata, "com.apple.quicktime.model", NULL, 0);
    if (make != NULL) snprintf(facts->make, sizeof facts->make, "%s", make->value);
    if (model != NULL) snprintf(facts->model, sizeof facts->model, "%s", model->value);
    const AVDictionaryEntry *place = av_dict_get(format->metadata, "com.apple.quicktime.location.ISO6709", NULL, 0);
    if (place == NULL) place = av_dict_get(format->metadata, "location", NULL, 0);
    facts->has_location = place != NULL && place->value[0] != '\0';
    /* A Live Photo's video names its still by this (issue 58). */
    const AVDictionaryEntry *live = av_dict_get(format->metadata, "com.apple.quicktime.content.identifier", NULL, 0);
    if (live != NULL) snprintf(facts->content_id, sizeof facts->content_id, "%s", live->value);
}

int ptk_video_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                     ptk_thumbnail_result *out) {
    memset(out, 0, sizeof *out);
    int status = PTK_PNG_FAILED;
    AVIOContext *io = NULL;
    AVFormatContext *format = NULL;
    AVCodecContext *codec = NULL;
    AVPacket *packet = NULL;
    AVFrame *frame = NULL;
    struct SwsContext *sws = NULL;
    unsigned char *rgb = NULL;
    ptk_colour colour = {0};
    ptk_box box = {0};
    struct stat st;
    const double started = thread_seconds();
    av_log_set_level(AV_LOG_QUIET);
    av_max_alloc(ALLOCATION_LIMIT);
    if (fstat(fd, &st) != 0) {
        snprintf(out->message, MESSAGE, "cannot read its status: %s", strerror(errno));
        goto done;
    }
    reader r = {fd, 0, st.st_size, 0, cancel};
    unsigned char *buffer = av_malloc(IO_BUFFER);
    if (buffer == NULL || (io = avio_alloc_context(buffer, IO_BUFFER, 0, &r, read_packet, NULL, seek_to)) == NULL) {
        av_free(buffer);
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    if ((format = avformat_alloc_context()) == NULL) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    format->interrupt_callback.callback = interrupted;
    format->interrupt_callback.opaque = &r;
    /* The MP4/MOV demuxer and the two decoders of phone cameras, nothing else of FFmpeg's. */
    format->format_whitelist = av_strdup("mov,mp4,m4a,3gp,3g2,mj2");
    format->codec_whitelist = av_strdup("h264,hevc");
    int e = avformat_open_input(&format, NULL, av_find_input_format("mov"), NULL);
    if (e < 0) {
        /* avformat_open_input freed the context (not the I/O). */
        error_text(out->message, "libavformat cannot read it", e);
        if (e == AVERROR_EXIT) status = PTK_PNG_CANCELLED;
        goto done;
    }
    read_facts(format, &out->facts);
    /* The first video track, as MP4Check's facts (codec, frame rate, size) are the first's:
     * not FFmpeg's "best" one, which may be another (issue 58 attack: a poster of one track
     * under the facts of another). */
    int index = -1;
    for (unsigned i = 0; i < format->nb_streams && index < 0; i++) {
        const AVStream *s = format->streams[i];
        if (s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(s->disposition & AV_DISPOSITION_ATTACHED_PIC)) index = (int)i;
    }
    if (index < 0) {
        snprintf(out->message, MESSAGE, "no video track");
        goto done;
    }
    AVStream *stream = format->streams[index];
    const AVCodecParameters *par = stream->codecpar;
    if (format->duration > 0 && format->duration != AV_NOPTS_VALUE) {
        out->video_duration = format->duration / (double)AV_TIME_BASE;
    } else if (stream->duration > 0 && stream->duration != AV_NOPTS_VALUE && stream->time_base.num > 0 && stream->time_base.den > 0) {
        /* A fragmented MP4: the track's length as its fragments add up. */
        out->video_duration = stream->duration * av_q2d(stream->time_base);
    }
    const AVRational rate = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) out->video_frame_rate = av_q2d(rate);
    out->width = par->width > 0 ? (uint32_t)par->width : 0;
    out->height = par->height > 0 ? (uint32_t)par->height : 0;
    out->bit_depth = 8;
    out->color_type = 2;
    const int orientation = orientation_of(stream);
    if (par->codec_id != AV_CODEC_ID_H264 && par->codec_id != AV_CODEC_ID_HEVC) {
        if (par->codec_id == AV_CODEC_ID_NONE)
            snprintf(out->message, MESSAGE, "a video of a coding FFmpeg does not know: ptk decodes H.264 and HEVC only");
        else
            snprintf(out->message, MESSAGE, "a %s video: ptk decodes H.264 and HEVC only", avcodec_get_name(par->codec_id));
        goto done;
    }
    if (out->width == 0 || out->height == 0) {
        snprintf(out->message, MESSAGE, "the video track has no size");
        goto done;
    }
    const uint64_t count = (uint64_t)out->width * out->height;
    if (count > max_pixels) {
        snprintf(out->message, MESSAGE, "%.1f megapixels is over the %.1f-megapixel limit for thumbnails", count / 1e6,
                 max_pixels / 1e6);
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    if (count * 24 > MEMORY_LIMIT) {
        snprintf(out->message, MESSAGE, "%.1f megapixels needs more than %llu MB to decode", count / 1e6,
                 (unsigned long long)(MEMORY_LIMIT >> 20));
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    const AVCodec *decoder = avcodec_find_decoder(par->codec_id);
    if (decoder == NULL || (codec = avcodec_alloc_context3(decoder)) == NULL ||
        avcodec_parameters_to_context(codec, par) < 0) {
        snprintf(out->message, MESSAGE, "no %s decoder", avcodec_get_name(par->codec_id));
        goto done;
    }
    /* One thread (the indexer runs at nice 19 beside the doors); no picture larger than the
     * track declares (its coded size rounded up to 64, as coding blocks are), whatever its
     * parameter sets say: a track declaring 320x240 whose parameter sets say 14000x14000 is
     * refused, not decoded into gigabytes of reference pictures; and only key pictures (a
     * poster is one), so that a stream of pictures that never start one costs nothing. */
    codec->thread_count = 1;
    const uint64_t coded = (uint64_t)((out->width + 63) & ~63u) * ((out->height + 63) & ~63u);
    codec->max_pixels = (int64_t)(coded < max_pixels ? coded : max_pixels);
    codec->skip_frame = AVDISCARD_NONKEY;
    if ((e = avcodec_open2(codec, decoder, NULL)) < 0) {
        error_text(out->message, "libavcodec cannot open its decoder", e);
        goto done;
    }
    if ((packet = av_packet_alloc()) == NULL || (frame = av_frame_alloc()) == NULL) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    for (int packets = 0;;) {
        if (cancel != NULL && *cancel) {
            status = PTK_PNG_CANCELLED;
            goto done;
        }
        if (thread_seconds() - started > CPU_LIMIT) {
            snprintf(out->message, MESSAGE, "no picture within %.0f s of processor time", CPU_LIMIT);
            goto done;
        }
        e = av_read_frame(format, packet);
        if (e < 0) {
            /* The end (or what could be read): what the decoder still holds. */
            avcodec_send_packet(codec, NULL);
            if (avcodec_receive_frame(codec, frame) == 0) break;
            error_text(out->message, "no picture could be decoded", e);
            goto done;
        }
        if (++packets > MAX_PACKETS) {
            av_packet_unref(packet);
            snprintf(out->message, MESSAGE, "no picture in its first %d packets", MAX_PACKETS);
            goto done;
        }
        if (packet->stream_index != index) {
            av_packet_unref(packet);
            continue;
        }
        e = avcodec_send_packet(codec, packet);
        av_packet_unref(packet);
        if (e < 0 && e != AVERROR(EAGAIN)) {
            error_text(out->message, "libavcodec cannot decode it", e);
            goto done;
        }
        e = avcodec_receive_frame(codec, frame);
        if (e == 0) break;
        if (e != AVERROR(EAGAIN)) {
            error_text(out->message, "libavcodec cannot decode it", e);
            goto done;
        }
    }
    const int w = frame->width, h = frame->height;
    if (w <= 0 || h <= 0 || (uint64_t)w * h > max_pixels || (uint64_t)w * h * 24 > MEMORY_LIMIT) {
        snprintf(out->message, MESSAGE, "the decoded picture is %dx%d, not the %ux%u its track declares", w, h,
                 out->width, out->height);
        status = PTK_PNG_TOO_LARGE;
        goto done;
    }
    /* A picture of more than 8 bits (an iPhone's 10-bit HDR) is converted to 16 bits a sample
     * and rounded to 8 here: libswscale's own 10-to-8-bit path is up to 2 levels low, which
     * is 5 % of the light at PQ's 100 cd/m2. */
    const AVPixFmtDescriptor *format_desc = av_pix_fmt_desc_get((enum AVPixelFormat)frame->format);
    const int deep = format_desc != NULL && format_desc->comp[0].depth > 8;
    sws = sws_getContext(w, h, (enum AVPixelFormat)frame->format, w, h, deep ? AV_PIX_FMT_RGB48 : AV_PIX_FMT_RGB24,
                         SWS_BILINEAR, NULL, NULL, NULL);
    rgb = malloc((size_t)w * h * (deep ? 6 : 3));
    if (sws == NULL || rgb == NULL) {
        snprintf(out->message, MESSAGE, sws == NULL ? "libswscale cannot convert its pixels" : "out of memory");
        goto done;
    }
    /* Its YCbCr matrix and range as the stream says (BT.709 for HD when it does not). */
    const int space = frame->colorspace != AVCOL_SPC_UNSPECIFIED ? (int)frame->colorspace
                      : h >= 720                                 ? SWS_CS_ITU709
                                                                 : SWS_CS_ITU601;
    sws_setColorspaceDetails(sws, sws_getCoefficients(space), frame->color_range == AVCOL_RANGE_JPEG,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    uint8_t *planes[4] = {rgb, NULL, NULL, NULL};
    int strides[4] = {w * (deep ? 6 : 3), 0, 0, 0};
    sws_scale(sws, (const uint8_t *const *)frame->data, frame->linesize, 0, h, planes, strides);
    if (deep) {
        /* In place: the i-th 8-bit sample is written where the 16-bit ones were read already. */
        const uint16_t *wide = (const uint16_t *)(void *)rgb;
        for (size_t i = 0, n = (size_t)w * h * 3; i < n; i++) rgb[i] = (unsigned char)((wide[i] + 128u) / 257u);
    }
    /* Its primaries and transfer (ISO/IEC 23091-2 code points, as a HEIF's nclx): an iPhone's
     * BT.2020 HLG or Display P3 video is turned into sRGB, HDR tone mapped. */
    ptk_colour_nclx(&colour, (int)frame->color_primaries, (int)frame->color_trc);
    uint32_t tw[PTK_MAX_RENDITIONS], th[PTK_MAX_RENDITIONS];
    ptk_render_sizes(request, (uint32_t)w, (uint32_t)h, tw, th);
    if (ptk_box_init(&box, &colour, (uint32_t)w, (uint32_t)h, request->count, tw, th, 0, 1) != 0) {
        snprintf(out->message, MESSAGE, "out of memory");
        goto done;
    }
    for (int y = 0; y < h; y++) ptk_box_add(&box, (uint32_t)y, rgb + (size_t)y * w * 3, 0, 1, (uint32_t)w);
    ptk_box_finish(&box);
    snprintf(out->colour_note, sizeof out->colour_note, "%s", colour.note[0] ? colour.note : box.note);
    snprintf(out->decode_path, sizeof out->decode_path, "%s first picture", decoder->name);
    out->facts.orientation = orientation;
    status = ptk_render_encode(&box, orientation, request, out);
done:
    if (status != PTK_PNG_OK) ptk_result_free(out);
    ptk_box_free(&box);
    ptk_colour_free(&colour);
    free(rgb);
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
    if (io != NULL) av_freep(&io->buffer);
    avio_context_free(&io);
    return status;
}
