#include "ptk_png.h"

#include <libexif/exif-data.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An EXIF block larger than this is left aside: a JPEG's APP1 cannot be larger, and a PNG's
 * eXIf has no reason to be. */
#define EXIF_LIMIT 65536

/* The ASCII value of `tag` (in any IFD) into `out`, printable characters only. */
static void ascii(ExifData *d, ExifTag tag, char *out, size_t size) {
    ExifEntry *e = exif_data_get_entry(d, tag);
    if (e == NULL || e->format != EXIF_FORMAT_ASCII || e->data == NULL) return;
    size_t n = 0;
    for (size_t i = 0; i < e->size && e->data[i] != 0 && n + 1 < size; i++) {
        const unsigned char c = e->data[i];
        if (c >= 0x20 && c < 0x7F) out[n++] = (char)c;
    }
    while (n > 0 && out[n - 1] == ' ') n--; /* cameras pad Make and Model */
    out[n] = 0;
}

/* Apple's MakerNote: "Apple iOS\0", a version (00 01), the byte order ("MM"), an entry count,
 * then 12-byte entries (tag, format, count, value or offset) whose offsets count from the
 * MakerNote's first byte (as ExifTool reads it). Its tag 0x11 is the content identifier that
 * pairs a Live Photo's still with its video. libexif 0.6.24 carries a reader for this MakerNote
 * but leaves it switched off (interpret_maker_note), so the one tag is read here, bounded by
 * the entry's own size, with libexif's byte-order helpers. */
static void apple_content_id(ExifData *d, char *out, size_t size) {
    ExifEntry *e = exif_data_get_entry(d, EXIF_TAG_MAKER_NOTE);
    if (e == NULL || e->data == NULL || e->size < 16 || memcmp(e->data, "Apple iOS\0", 10) != 0) return;
    const unsigned char *m = e->data;
    const size_t n = e->size;
    ExifByteOrder order;
    if (m[12] == 'M' && m[13] == 'M') {
        order = EXIF_BYTE_ORDER_MOTOROLA;
    } else if (m[12] == 'I' && m[13] == 'I') {
        order = EXIF_BYTE_ORDER_INTEL;
    } else {
        return;
    }
    const unsigned count = exif_get_short(m + 14, order);
    for (unsigned i = 0; i < count; i++) {
        const size_t at = 16 + (size_t)i * 12;
        if (at + 12 > n) return;
        if (exif_get_short(m + at, order) != 0x11) continue;
        if (exif_get_short(m + at + 2, order) != EXIF_FORMAT_ASCII) return;
        const uint32_t length = exif_get_long(m + at + 4, order);
        const unsigned char *value = m + at + 8;
        if (length > 4) {
            const uint32_t offset = exif_get_long(m + at + 8, order);
            if (offset > n || length > n - offset) return;
            value = m + offset;
        }
        size_t k = 0;
        for (uint32_t j = 0; j < length && value[j] != 0 && k + 1 < size; j++) out[k++] = (char)value[j];
        out[k] = 0;
        return;
    }
}

void ptk_exif_read(const unsigned char *data, size_t size, int with_header, ptk_photo_facts *facts) {
    if (size > EXIF_LIMIT + (with_header ? 6 : 0)) {
        snprintf(facts->problem, sizeof facts->problem, "EXIF of %zu bytes is over the %d-byte limit; left aside", size, EXIF_LIMIT);
        return;
    }
    /* libexif wants the "Exif\0\0" header in front of the TIFF structure. */
    unsigned char *buffer = malloc(size + 6);
    if (buffer == NULL) return;
    size_t n = size;
    if (with_header) {
        memcpy(buffer, data, size);
    } else {
        memcpy(buffer, "Exif\0\0", 6);
        memcpy(buffer + 6, data, size);
        n += 6;
    }
    ExifData *d = exif_data_new();
    if (d == NULL) {
        free(buffer);
        return;
    }
    /* Read as it is: nothing fixed up or added, maker notes not interpreted. */
    exif_data_unset_option(d, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_set_option(d, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS);
    exif_data_set_option(d, EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE);
    exif_data_load_data(d, buffer, (unsigned int)n);
    free(buffer);
    int entries = 0;
    for (int i = 0; i < EXIF_IFD_COUNT; i++) entries += d->ifd[i] ? (int)d->ifd[i]->count : 0;
    if (entries == 0) {
        snprintf(facts->problem, sizeof facts->problem, "EXIF that does not parse; left aside");
        exif_data_unref(d);
        return;
    }
    ExifEntry *o = exif_data_get_entry(d, EXIF_TAG_ORIENTATION);
    if (o != NULL && o->format == EXIF_FORMAT_SHORT && o->components >= 1 && o->size >= 2) {
        const int v = exif_get_short(o->data, exif_data_get_byte_order(d));
        if (v >= 1 && v <= 8) facts->orientation = v;
    }
    ascii(d, EXIF_TAG_DATE_TIME_ORIGINAL, facts->taken, sizeof facts->taken);
    if (facts->taken[0] != 0) facts->taken_source = 1;
    ascii(d, (ExifTag)0x9011, facts->taken_offset, sizeof facts->taken_offset);  /* OffsetTimeOriginal */
    ascii(d, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, facts->taken_subsec, sizeof facts->taken_subsec);
    ascii(d, EXIF_TAG_MAKE, facts->make, sizeof facts->make);
    ascii(d, EXIF_TAG_MODEL, facts->model, sizeof facts->model);
    facts->has_location = d->ifd[EXIF_IFD_GPS] != NULL && d->ifd[EXIF_IFD_GPS]->count > 0;
    apple_content_id(d, facts->content_id, sizeof facts->content_id);
    exif_data_unref(d);
}

unsigned char *ptk_orient(const unsigned char *pixels, uint32_t *width, uint32_t *height, int channels, int orientation) {
    const uint32_t w = *width, h = *height;
    const int swap = orientation >= 5 && orientation <= 8;
    const uint32_t ow = swap ? h : w, oh = swap ? w : h;
    unsigned char *out = malloc((size_t)w * h * channels);
    if (out == NULL) return NULL;
    for (uint32_t y = 0; y < oh; y++) {
        for (uint32_t x = 0; x < ow; x++) {
            uint32_t sx, sy; /* the stored pixel shown at (x, y) */
            switch (orientation) {
            case 2: sx = w - 1 - x; sy = y; break;
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;
            case 4: sx = x; sy = h - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = h - 1 - x; break;
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;
            case 8: sx = w - 1 - y; sy = x; break;
            default: sx = x; sy = y; break;
            }
            memcpy(out + ((size_t)y * ow + x) * channels, pixels + ((size_t)sy * w + sx) * channels, channels);
        }
    }
    *width = ow;
    *height = oh;
    return out;
}
