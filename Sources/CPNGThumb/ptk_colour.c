#include "ptk_colour.h"

#include <lcms2.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sRGB's curve both ways: 8-bit sRGB to 16-bit linear light, and 16-bit linear to 8-bit sRGB. */
static uint16_t srgb_to_linear[256];
static uint8_t linear_to_srgb[65536];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static double decode_srgb(double v) { return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4); }
static double encode_srgb(double l) { return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055; }

static void make_tables(void) {
    for (int i = 0; i < 256; i++) srgb_to_linear[i] = (uint16_t)lround(decode_srgb(i / 255.0) * 65535);
    for (int i = 0; i < 65536; i++) linear_to_srgb[i] = (uint8_t)lround(encode_srgb(i / 65535.0) * 255);
}

/* Little CMS's errors are not printed: a profile it cannot use is set aside with a note. */
static void silent(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context;
    (void)code;
    (void)text;
}

static cmsContext new_context(void) {
    cmsContext context = cmsCreateContext(NULL, NULL);
    if (context != NULL) cmsSetLogErrorHandlerTHR(context, silent);
    return context;
}

static const cmsCIExyY D65 = {0.3127, 0.3290, 1.0};
static const cmsCIExyYTRIPLE SRGB_PRIMARIES = {{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};

/* sRGB's tone curve, as Little CMS's parametric curve of type 4. */
static cmsToneCurve *srgb_curve(cmsContext context) {
    const cmsFloat64Number p[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
    return cmsBuildParametricToneCurve(context, 4, p);
}

/* An RGB profile of these primaries, white point and one tone curve for all three channels. */
static cmsHPROFILE rgb_profile(cmsContext context, const cmsCIExyY *white, const cmsCIExyYTRIPLE *primaries, cmsToneCurve *curve) {
    if (curve == NULL) return NULL;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE p = cmsCreateRGBProfileTHR(context, white, primaries, curves);
    cmsFreeToneCurve(curve);
    return p;
}

static void set_profile(ptk_colour *c, cmsContext context, cmsHPROFILE profile, int grey) {
    ptk_colour_free(c);
    c->context = context;
    c->profile = profile;
    c->grey = grey;
}

void ptk_colour_icc(ptk_colour *c, const unsigned char *icc, size_t size) {
    if (size > PTK_ICC_LIMIT) {
        snprintf(c->note, sizeof c->note, "colour profile of %zu bytes is over the 1 MB limit; shown as sRGB", size);
        return;
    }
    cmsContext context = new_context();
    if (context == NULL) return;
    cmsHPROFILE profile = cmsOpenProfileFromMemTHR(context, icc, (cmsUInt32Number)size);
    if (profile == NULL) {
        snprintf(c->note, sizeof c->note, "colour profile does not parse; shown as sRGB");
        cmsDeleteContext(context);
        return;
    }
    const cmsColorSpaceSignature space = cmsGetColorSpace(profile);
    if (space != cmsSigRgbData && space != cmsSigGrayData) {
        snprintf(c->note, sizeof c->note, "colour profile is not for RGB or grey; shown as sRGB");
        cmsCloseProfile(profile);
        cmsDeleteContext(context);
        return;
    }
    set_profile(c, context, profile, space == cmsSigGrayData);
}

/* cHRM values within 0.01 of sRGB's (D65 white, BT.709 primaries). */
static int srgb_chromaticities(const double *chrm) {
    static const double srgb[8] = {0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06};
    for (int i = 0; i < 8; i++) {
        if (!(fabs(chrm[i] - srgb[i]) < 0.01)) return 0;
    }
    return 1;
}

void ptk_colour_gamma(ptk_colour *c, double gamma, const double *chrm) {
    if (chrm != NULL && srgb_chromaticities(chrm)) chrm = NULL;
    if (!(gamma > 0) && chrm == NULL) return;
    /* A gamma within 5 % of 1/2.2 with sRGB's chromaticities is sRGB, as libpng and browsers
     * take it (what most programs write for sRGB). */
    if (chrm == NULL && fabs(gamma * 2.2 - 1) < 0.05) return;
    if (!(gamma > 0.01 && gamma < 100)) gamma = 0;
    cmsContext context = new_context();
    if (context == NULL) return;
    cmsCIExyY white = D65;
    cmsCIExyYTRIPLE primaries = SRGB_PRIMARIES;
    if (chrm != NULL) {
        white = (cmsCIExyY){chrm[0], chrm[1], 1.0};
        primaries = (cmsCIExyYTRIPLE){{chrm[2], chrm[3], 1.0}, {chrm[4], chrm[5], 1.0}, {chrm[6], chrm[7], 1.0}};
    }
    cmsToneCurve *curve = gamma > 0 ? cmsBuildGamma(context, 1 / gamma) : srgb_curve(context);
    cmsHPROFILE profile = rgb_profile(context, &white, &primaries, curve);
    if (profile == NULL) {
        snprintf(c->note, sizeof c->note, "gAMA or cHRM cannot be used; shown as sRGB");
        cmsDeleteContext(context);
        return;
    }
    set_profile(c, context, profile, 0);
}

/* HDR to SDR (BT.2100's PQ and HLG, to sRGB's range): light is taken relative to BT.2408's
 * HDR reference white (PTK_HDR_WHITE), which becomes SDR's white; up to PTK_HDR_KNEE of it
 * is kept as it is, and what is brighter is compressed smoothly toward white (slope 1 at
 * the knee, never reaching past white), per channel. */
static double hdr_tone_map(double x) {
    if (x <= PTK_HDR_KNEE) return x;
    return PTK_HDR_KNEE + (1 - PTK_HDR_KNEE) * (1 - exp(-(x - PTK_HDR_KNEE) / (1 - PTK_HDR_KNEE)));
}

/* A PQ signal (SMPTE ST 2084) to display light in cd/m2. */
static double pq_light(double e) {
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32,
                 c3 = 2392.0 / 4096 * 32;
    const double p = pow(e, 1 / m2);
    const double n = p - c1 > 0 ? p - c1 : 0;
    return 10000 * pow(n / (c2 - c3 * p), 1 / m1);
}

/* An HLG signal (ARIB STD-B67, BT.2100) to display light in cd/m2: the inverse OETF to scene
 * light, then the OOTF of a 1,000 cd/m2 display (system gamma 1.2), per channel. */
static double hlg_light(double e) {
    const double a = 0.17883277, b = 0.28466892, c = 0.55991073;
    const double scene = e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12;
    return 1000 * pow(scene, 1.2);
}

/* The tone curve of an HDR transfer (16 PQ, 18 HLG): signal to SDR linear light, tabulated. */
static cmsToneCurve *hdr_curve(cmsContext context, int transfer) {
    enum { N = 4096 };
    cmsFloat32Number *values = malloc(N * sizeof *values);
    if (values == NULL) return NULL;
    for (int i = 0; i < N; i++) {
        const double e = (double)i / (N - 1);
        const double light = transfer == 16 ? pq_light(e) : hlg_light(e);
        values[i] = (cmsFloat32Number)hdr_tone_map(light / PTK_HDR_WHITE);
    }
    cmsToneCurve *curve = cmsBuildTabulatedToneCurveFloat(context, N, values);
    free(values);
    return curve;
}

void ptk_colour_nclx(ptk_colour *c, int primaries_code, int transfer) {
    cmsCIExyY white = D65;
    cmsCIExyYTRIPLE primaries = SRGB_PRIMARIES;
    switch (primaries_code) {
    case 9: /* BT.2020 */
        primaries = (cmsCIExyYTRIPLE){{0.708, 0.292, 1.0}, {0.170, 0.797, 1.0}, {0.131, 0.046, 1.0}};
        break;
    case 11: /* DCI-P3 */
        white = (cmsCIExyY){0.314, 0.351, 1.0};
        /* fall through */
    case 12: /* Display P3 */
        primaries = (cmsCIExyYTRIPLE){{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
        break;
    default: /* 1 (BT.709, sRGB's), 2 (unspecified) and the rest: sRGB's */
        break;
    }
    double gamma = 0; /* sRGB's curve */
    switch (transfer) {
    case 4: gamma = 2.2; break;
    case 5: gamma = 2.8; break;
    case 8: gamma = 1.0; break;
    default: break;
    }
    const int hdr = transfer == 16 || transfer == 18;
    if (primaries_code != 9 && primaries_code != 11 && primaries_code != 12 && gamma == 0 && !hdr) return;
    cmsContext context = new_context();
    if (context == NULL) return;
    cmsToneCurve *curve = hdr          ? hdr_curve(context, transfer)
                          : gamma > 0 ? cmsBuildGamma(context, gamma)
                                      : srgb_curve(context);
    cmsHPROFILE profile = rgb_profile(context, &white, &primaries, curve);
    if (profile == NULL) {
        if (hdr) {
            snprintf(c->note, sizeof c->note, "HDR transfer (%s) cannot be tone mapped; shown with sRGB's curve",
                     transfer == 16 ? "PQ" : "HLG");
        }
        cmsDeleteContext(context);
        return;
    }
    set_profile(c, context, profile, 0);
}

void ptk_colour_free(ptk_colour *c) {
    if (c->profile != NULL) cmsCloseProfile(c->profile);
    if (c->context != NULL) cmsDeleteContext(c->context);
    c->profile = NULL;
    c->context = NULL;
    c->grey = 0;
}

int ptk_box_init(ptk_box *b, const ptk_colour *colour, uint32_t width, uint32_t height, int count,
                 const uint32_t *tw, const uint32_t *th, int alpha, int ordered) {
    pthread_once(&tables_once, make_tables);
    memset(b, 0, sizeof *b);
    b->width = width;
    b->height = height;
    b->alpha = alpha;
    b->ordered = ordered;
    b->count = count < 1 ? 1 : count > PTK_BOX_TARGETS ? PTK_BOX_TARGETS : count;
    const int channels = alpha ? 4 : 3;
    for (int i = 0; i < b->count; i++) {
        ptk_box_target *t = &b->targets[i];
        t->tw = tw[i] < 1 ? 1 : tw[i] > width ? width : tw[i];
        t->th = th[i] < 1 ? 1 : th[i] > height ? height : th[i];
        t->column_bucket = malloc(sizeof(uint32_t) * width);
        t->sums = calloc((size_t)t->tw * (ordered ? 1 : t->th) * 5, sizeof(uint64_t));
        t->pixels = calloc((size_t)t->tw * t->th, channels);
        if (t->column_bucket == NULL || t->sums == NULL || t->pixels == NULL) return -1;
        /* Each pixel goes to the target pixel its centre falls in (as ImageMagick's box filter). */
        for (uint32_t x = 0; x < width; x++) t->column_bucket[x] = (uint32_t)((2 * (uint64_t)x + 1) * t->tw / (2 * (uint64_t)width));
    }
    b->linear = malloc(sizeof(uint16_t) * 3 * width);
    if (b->linear == NULL) return -1;
    if (colour != NULL && colour->profile != NULL) {
        cmsContext context = colour->context;
        cmsHPROFILE linear = rgb_profile(context, &D65, &SRGB_PRIMARIES, cmsBuildGamma(context, 1.0));
        if (linear != NULL) {
            const cmsUInt32Number input = colour->grey ? TYPE_GRAY_8 : (alpha ? TYPE_RGBA_8 : TYPE_RGB_8);
            b->transform = cmsCreateTransformTHR(context, colour->profile, input, linear, TYPE_RGB_16, INTENT_PERCEPTUAL, 0);
            cmsCloseProfile(linear);
        }
        if (b->transform == NULL) {
            snprintf(b->note, sizeof b->note, "colour profile cannot be applied; shown as sRGB");
        } else if (colour->grey && (b->grey = malloc(width)) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Target row `row` from its sums (then cleared, for the next row a band holds). */
static void finish_row(const ptk_box *b, ptk_box_target *t, uint32_t row, uint64_t *sums) {
    const int channels = b->alpha ? 4 : 3;
    unsigned char *q = t->pixels + (size_t)row * t->tw * channels;
    for (uint32_t x = 0; x < t->tw; x++, q += channels) {
        uint64_t *s = sums + (size_t)x * 5;
        const uint64_t count = s[4] ? s[4] : 1;
        for (int c = 0; c < 3; c++) q[c] = s[0] ? linear_to_srgb[(s[1 + c] + s[0] / 2) / s[0]] : 0;
        if (channels == 4) q[3] = (unsigned char)((s[0] + count / 2) / count);
    }
    memset(sums, 0, sizeof(uint64_t) * 5 * t->tw);
}

void ptk_box_add(ptk_box *b, uint32_t y, const unsigned char *row, uint32_t x0, uint32_t dx, uint32_t count) {
    const int channels = b->alpha ? 4 : 3;
    uint16_t *l = b->linear;
    if (b->transform != NULL) {
        if (b->grey != NULL) {
            for (uint32_t i = 0; i < count; i++) b->grey[i] = row[(size_t)i * channels];
            cmsDoTransform(b->transform, b->grey, l, count);
        } else {
            cmsDoTransform(b->transform, row, l, count);
        }
    } else {
        const unsigned char *p = row;
        for (uint32_t i = 0; i < count; i++, p += channels) {
            l[i * 3] = srgb_to_linear[p[0]];
            l[i * 3 + 1] = srgb_to_linear[p[1]];
            l[i * 3 + 2] = srgb_to_linear[p[2]];
        }
    }
    if (b->alpha && !b->transparent) {
        for (uint32_t i = 0; i < count; i++) {
            if (row[(size_t)i * 4 + 3] != 255) {
                b->transparent = 1;
                break;
            }
        }
    }
    for (int k = 0; k < b->count; k++) {
        ptk_box_target *t = &b->targets[k];
        const uint32_t r = (uint32_t)((2 * (uint64_t)y + 1) * t->th / (2 * (uint64_t)b->height));
        uint64_t *sums = t->sums;
        if (b->ordered) {
            /* A new target row: the one held is done (and any skipped, which only a target
             * taller than the photo would have). */
            if (!t->started) {
                t->started = 1;
                t->band = r;
            }
            while (t->band < r) finish_row(b, t, t->band++, t->sums);
        } else {
            sums += (size_t)r * t->tw * 5;
        }
        const unsigned char *p = row;
        const uint16_t *lp = l;
        if (b->alpha) {
            for (uint32_t i = 0, x = x0; i < count; i++, x += dx, p += 4, lp += 3) {
                const uint64_t a = p[3];
                uint64_t *s = sums + (size_t)t->column_bucket[x] * 5;
                s[0] += a;
                s[1] += lp[0] * a;
                s[2] += lp[1] * a;
                s[3] += lp[2] * a;
                s[4] += 1;
            }
        } else {
            for (uint32_t i = 0, x = x0; i < count; i++, x += dx, lp += 3) {
                uint64_t *s = sums + (size_t)t->column_bucket[x] * 5;
                s[0] += 255;
                s[1] += lp[0] * 255u;
                s[2] += lp[1] * 255u;
                s[3] += lp[2] * 255u;
                s[4] += 1;
            }
        }
    }
}

void ptk_box_finish(ptk_box *b) {
    for (int k = 0; k < b->count; k++) {
        ptk_box_target *t = &b->targets[k];
        if (b->ordered) {
            if (!t->started) continue;
            if (t->band < t->th) finish_row(b, t, t->band, t->sums);
            t->started = 0;
        } else {
            for (uint32_t r = 0; r < t->th; r++) finish_row(b, t, r, t->sums + (size_t)r * t->tw * 5);
        }
    }
}

void ptk_box_free(ptk_box *b) {
    if (b->transform != NULL) cmsDeleteTransform(b->transform);
    for (int k = 0; k < PTK_BOX_TARGETS; k++) {
        free(b->targets[k].column_bucket);
        free(b->targets[k].sums);
        free(b->targets[k].pixels);
    }
    free(b->linear);
    free(b->grey);
    memset(b, 0, sizeof *b);
}
