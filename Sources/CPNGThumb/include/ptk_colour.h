#ifndef PTK_COLOUR_H
#define PTK_COLOUR_H
/* True colour for thumbnails: every decoder's rows are turned into linear light (through
 * Little CMS 2 when the photo says what its colours are: an ICC profile, a PNG's gAMA and
 * cHRM, a HEIF's nclx; else through sRGB's own curve), box-averaged there, and the thumbnail
 * is written as 8-bit sRGB. */
#include <stddef.h>
#include <stdint.h>

/* An ICC profile larger than this is not applied. */
#define PTK_ICC_LIMIT (1024 * 1024)

/* What a photo's colours are. Zeroed, it means sRGB. */
typedef struct {
    void *context;      /* the Little CMS context of `profile` */
    void *profile;      /* the source profile, or NULL for sRGB */
    int grey;           /* the profile is a grey one (rows are still given as RGB) */
    char note[120];     /* why the photo's own description was set aside, else empty */
} ptk_colour;

/* Uses the ICC profile (`size` bytes) as the photo's colours. A profile over PTK_ICC_LIMIT,
 * one Little CMS cannot read, or one that is not for RGB or grey, is set aside with a note
 * (the photo is then taken as sRGB). */
void ptk_colour_icc(ptk_colour *c, const unsigned char *icc, size_t size);

/* A PNG's gAMA (`gamma`, as the file gives it: sample = light^gamma; 0 for none) and cHRM
 * (`chrm`: white x,y then red, green, blue x,y; NULL for none, meaning sRGB's). gAMA 0.45455
 * without cHRM is taken as sRGB, as libpng and browsers do. */
void ptk_colour_gamma(ptk_colour *c, double gamma, const double *chrm);

/* HDR light (PQ, HLG) is taken relative to this (cd/m2, BT.2408's HDR reference white),
 * which becomes SDR's white. */
#define PTK_HDR_WHITE 203.0
/* Where HDR light relative to PTK_HDR_WHITE starts to be compressed toward white. */
#define PTK_HDR_KNEE 0.8

/* A HEIF's or a video's nclx colour description (ISO/IEC 23091-2 code points). PQ (16) and
 * HLG (18) are tone mapped to SDR: PTK_HDR_WHITE is SDR's white, light above PTK_HDR_KNEE of
 * it is compressed smoothly toward white. */
void ptk_colour_nclx(ptk_colour *c, int primaries, int transfer);

void ptk_colour_free(ptk_colour *c);

/* At most this many sizes are made from one pass over the rows. */
#define PTK_BOX_TARGETS 3

/* One size a box downscale makes. */
typedef struct {
    uint32_t tw, th;
    uint32_t *column_bucket; /* the target column of each photo column */
    uint64_t *sums;          /* per target pixel of the rows held: alpha, linear red, green, blue times alpha, count */
    uint32_t band;           /* the target row held, when rows arrive in order */
    int started;
    unsigned char *pixels;   /* the result, 8-bit sRGB (RGBA when alpha), filled as rows are done */
} ptk_box_target;

/* The box downscale of a width x height image into up to PTK_BOX_TARGETS sizes at once, in
 * linear light. When rows arrive in order (`ordered`), only the target row being gathered is
 * held: memory is a row of sums per size plus the results. Otherwise (an interlaced PNG's
 * passes) every target row's sums are held until the end. */
typedef struct {
    uint32_t width, height;
    int alpha;              /* rows carry alpha (4 channels) */
    int ordered;            /* rows arrive top to bottom */
    int count;              /* how many targets */
    ptk_box_target targets[PTK_BOX_TARGETS];
    int transparent;        /* some pixel added had alpha below 255 */
    uint16_t *linear;       /* a row in linear light */
    unsigned char *grey;    /* a row's grey values, for a grey profile */
    void *transform;        /* Little CMS: the photo's colours to linear sRGB, or NULL */
    char note[120];
} ptk_box;

/* Prepares the downscale into `count` sizes tw[i] x th[i] (each at most width x height).
 * `colour` is read (its transform is made here); alpha says whether rows are RGBA (else RGB).
 * Returns 0, or -1 when out of memory. */
int ptk_box_init(ptk_box *b, const ptk_colour *colour, uint32_t width, uint32_t height, int count,
                 const uint32_t *tw, const uint32_t *th, int alpha, int ordered);

/* Adds `count` pixels of row `y` (RGB or RGBA, 8 bits), the i-th at column x0 + i*dx. */
void ptk_box_add(ptk_box *b, uint32_t y, const unsigned char *row, uint32_t x0, uint32_t dx, uint32_t count);

/* Finishes every target: afterwards targets[i].pixels holds it as 8-bit sRGB (RGBA when alpha). */
void ptk_box_finish(ptk_box *b);

void ptk_box_free(ptk_box *b);

#endif
