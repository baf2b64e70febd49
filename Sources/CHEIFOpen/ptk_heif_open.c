#include "ptk_heif_open.h"

#include <errno.h>
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MESSAGE = 200 };

static int64_t get_position(void *user) { return ((ptk_heif_file *)user)->position; }

static int read_bytes(void *data, size_t size, void *user) {
    ptk_heif_file *f = user;
    if (f->position < 0 || (int64_t)size > f->size - f->position) return -1;
    unsigned char *p = data;
    while (size > 0) {
        ssize_t n = pread(f->fd, p, size, f->position);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        size -= (size_t)n;
        f->position += n;
    }
    return 0;
}

static int seek(int64_t position, void *user) {
    ptk_heif_file *f = user;
    if (position < 0 || position > f->size) return -1;
    f->position = position;
    return 0;
}

/* The file does not grow: libheif may read up to its size, never past it. */
static enum heif_reader_grow_status wait_for_file_size(int64_t target, void *user) {
    return target <= ((ptk_heif_file *)user)->size ? heif_reader_grow_status_size_reached : heif_reader_grow_status_size_beyond_eof;
}

static const struct heif_reader READER = {1, get_position, read_bytes, seek, wait_for_file_size};

ptk_heif_file *ptk_heif_open(int fd, char *message) {
    message[0] = 0;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(message, MESSAGE, "%s", strerror(errno));
        return NULL;
    }
    ptk_heif_file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->context = heif_context_alloc()) == NULL) {
        free(f);
        snprintf(message, MESSAGE, "out of memory");
        return NULL;
    }
    f->fd = fd;
    f->size = st.st_size;
    heif_context_set_maximum_image_size_limit(f->context, PTK_HEIF_SIDE_LIMIT);
    heif_context_set_max_decoding_threads(f->context, 0);
    struct heif_error e = heif_context_read_from_reader(f->context, &READER, f, NULL);
    if (e.code != heif_error_Ok) {
        snprintf(message, MESSAGE, "libheif cannot read it: %s", e.message);
    } else if ((e = heif_context_get_primary_image_handle(f->context, &f->primary)).code != heif_error_Ok) {
        snprintf(message, MESSAGE, "no primary image: %s", e.message);
    } else if (heif_image_handle_get_width(f->primary) <= 0 || heif_image_handle_get_height(f->primary) <= 0) {
        snprintf(message, MESSAGE, "the primary image has no size");
    } else {
        return f;
    }
    ptk_heif_close(f);
    return NULL;
}

void ptk_heif_close(ptk_heif_file *f) {
    if (f == NULL) return;
    if (f->primary != NULL) heif_image_handle_release(f->primary);
    if (f->context != NULL) heif_context_free(f->context);
    free(f);
}

int ptk_heif_check(int fd, char *message) {
    ptk_heif_file *f = ptk_heif_open(fd, message);
    if (f == NULL) return -1;
    ptk_heif_close(f);
    return 0;
}
