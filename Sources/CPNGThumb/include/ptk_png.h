#ifndef PTK_PNG_H
#define PTK_PNG_H
/* Thumbnails with libpng, row by row. libpng reports errors by longjmp to a setjmp of its
 * caller, which must not cross Swift frames: every libpng call is made here, in C, under a
 * setjmp, and the outcome comes back as a status and a message. */
#include <stddef.h>
#include <stdint.h>

/* What a photo says about itself beyond its pixels: from its EXIF (a JPEG's APP1, a PNG's eXIf
 * before or after its image data, a HEIF's Exif item; read with libexif, at most 64 KiB),
 * else a PNG's tIME chunk or
 * "Creation Time" text. Strings are NUL-terminated and empty when absent. */
typedef struct {
    int orientation;          /* EXIF Orientation 1-8; 0 when none (or not 1-8) */
    char taken[32];           /* EXIF DateTimeOriginal "YYYY:MM:DD HH:MM:SS"; a PNG's tIME as "YYYY-MM-DDTHH:MM:SSZ"; or its Creation Time text */
    int taken_source;         /* 0 none, 1 EXIF, 2 PNG tIME, 3 PNG Creation Time text */
    char taken_offset[8];     /* EXIF OffsetTimeOriginal, "+02:00" */
    char taken_subsec[12];    /* EXIF SubSecTimeOriginal, digits */
    char make[64], model[64]; /* the camera */
    int has_location;         /* the EXIF has GPS entries */
    char content_id[80];      /* a Live Photo's content identifier as written (issue 58): Apple's
                               * MakerNote tag 0x11 in a photo, com.apple.quicktime.content.identifier
                               * in a video; up to 79 bytes, so that one longer than the 64
                               * LivePhotos.contentID accepts is refused, not cut to fit */
    char problem[100];        /* why the EXIF was left aside (too large, does not parse), else empty */
} ptk_photo_facts;

/* Reads EXIF (a TIFF structure; `with_header` when it starts with "Exif\0\0", as in a JPEG's
 * APP1) into `facts` with libexif. More than 64 KiB is left aside, with a reason in
 * facts->problem; so is an EXIF that does not parse. */
void ptk_exif_read(const unsigned char *data, size_t size, int with_header, ptk_photo_facts *facts);

/* `pixels` (width x height, `channels` bytes each) turned as EXIF orientation `orientation`
 * (1-8) says they are to be shown, into a new malloc'd buffer; *width and *height become the
 * shown size. NULL when out of memory. */
unsigned char *ptk_orient(const unsigned char *pixels, uint32_t *width, uint32_t *height, int channels, int orientation);

/* At most this many renditions come from one decode. */
#define PTK_MAX_RENDITIONS 3

/* What to make of a photo (issue 45): up to PTK_MAX_RENDITIONS long sides, from one decode. */
typedef struct {
    uint32_t sides[PTK_MAX_RENDITIONS];
    int count;      /* how many of `sides` are asked for, 1 to PTK_MAX_RENDITIONS */
    int png_only;   /* PNG whatever the photo (the .ptk package's thumbnail) */
    int embedded;   /* a HEIF's thumbnail item may stand in for the primary image */
    uint32_t embedded_min; /* with embedded: the item is used when its long side is at least this
                            * (renditions larger than the item come out at the item's size);
                            * 0: at least the largest side asked for */
    int preview;    /* the first rendition is a preview: JPEG progressive at quality 80; the
                     * others (and every one without it) baseline at 75 */
    int fine;       /* a JPEG is decoded at a scale with twice the largest rendition's sides
                     * (the box then averages at least 2x2 pixels: within 3 levels of
                     * ImageMagick's box even on noise), not just the largest's */
    uint32_t lossless_within; /* a photo whose width and height are both at most this (an icon,
                               * pixel art, a small palette PNG) gets PNG renditions: JPEG's
                               * 4:2:0 smears such images by 16-21 levels; 0: never */
} ptk_render_request;

/* One encoded image: a gallery thumbnail or a preview. */
typedef struct {
    unsigned char *bytes; /* malloc'd; freed by ptk_result_free */
    size_t size;
    uint32_t width, height; /* as shown */
    int png;                /* PNG (the photo has transparency, is small, or png_only), else JPEG */
} ptk_rendition;

/* What the PNG's header says, and the thumbnail made from it. */
typedef struct {
    /* From IHDR (0 when the header could not be read). */
    uint32_t width, height;
    int bit_depth, color_type, interlace;
    /* The thumbnail: an 8-bit RGB or RGBA PNG (malloc'd; free with ptk_png_free). */
    unsigned char *thumbnail;
    size_t thumbnail_size;
    uint32_t thumbnail_width, thumbnail_height;
    /* Why there is no thumbnail. */
    char message[200];
    /* Orientation, the day taken, the camera (the thumbnail is already turned as shown:
     * thumbnail_width and thumbnail_height are the shown size). */
    ptk_photo_facts facts;
    /* Why the photo's own colour description (ICC profile, gAMA/cHRM, nclx) was set aside and
     * it was shown as sRGB, else empty. */
    char colour_note[120];
    /* The renditions a ptk_*_render call made, in the order asked. */
    ptk_rendition renditions[PTK_MAX_RENDITIONS];
    int rendition_count;
    /* How the pixels were obtained: "HEIF thumbnail item 320x240", "JPEG scaled 1/8", "whole image". */
    char decode_path[48];
    /* A video's length in seconds and frames a second as libavformat reads them (0 when it does
     * not say): what a fragmented MP4, whose moov says neither, has (issue 58). */
    double video_duration, video_frame_rate;
    /* Some pixel of the photo is not fully opaque (alpha below 255, or a tRNS colour): the
     * gallery shows a checkerboard behind it. Set with the renditions. */
    int transparent;
} ptk_thumbnail_result;

enum {
    PTK_PNG_OK = 0,         /* thumbnail made */
    PTK_PNG_TOO_LARGE = 1,  /* header read; over the pixel limit, so no thumbnail */
    PTK_PNG_FAILED = 2,     /* not decodable (message says why); header fields may be set */
    PTK_PNG_CANCELLED = 3,  /* *cancel became nonzero */
};

/* Reads the PNG from `fd` (from its current offset; fd is not closed) row by row, the
 * downscale done as rows arrive, in linear light (ptk_colour.h: sRGB, iCCP, else gAMA and
 * cHRM): memory is a row of the photo plus the thumbnail's accumulators. The thumbnail fits
 * in max_side x max_side, aspect kept, never enlarged; alpha is kept (tRNS becomes alpha); it
 * is sRGB with an sRGB chunk. libpng's limits bound what a hostile file can make it
 * allocate; a photo of more than max_pixels pixels gets no thumbnail. `cancel`, if not NULL,
 * is read before every row. */
int ptk_png_thumbnail(int fd, uint32_t max_side, uint64_t max_pixels, const volatile int *cancel,
                      ptk_thumbnail_result *out);

/* Encodes 8-bit RGB (channels 3) or RGBA (4) pixels, row after row, as a PNG (the JPEG thumbnailer's output) (malloc'd; free
 * with ptk_png_free). Returns PTK_PNG_OK, or PTK_PNG_FAILED with message set. */
int ptk_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height, int channels,
                   unsigned char **png, size_t *size, char message[200]);

/* The thumbnail size for a width x height image: within max_side x max_side, aspect kept,
 * never enlarged, at least 1 x 1. */
void ptk_thumbnail_fit(uint32_t width, uint32_t height, uint32_t max_side, uint32_t *tw, uint32_t *th);

/* The renditions `request` asks for of the PNG in `fd`, from one row-by-row decode (as
 * ptk_png_thumbnail); PNG when the photo has a transparent pixel or png_only, else JPEG. */
int ptk_png_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                   ptk_thumbnail_result *out);

/* Frees what a ptk_*_render or ptk_*_thumbnail call left in `out` (the thumbnail and the renditions). */
void ptk_result_free(ptk_thumbnail_result *out);

void ptk_png_free(void *p);

#endif
