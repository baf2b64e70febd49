#ifndef PTK_HEIF_OPEN_H
#define PTK_HEIF_OPEN_H
/* A HEIF file opened by libheif from a descriptor: the store's check before a HEIF photo is
 * kept, and the thumbnailer's start. */
#include <stddef.h>
#include <stdint.h>

struct heif_context;
struct heif_image_handle;

/* An open HEIF file: libheif reads it through `fd` with pread (the descriptor's offset is not
 * used), so the descriptor must stay open until ptk_heif_close. */
typedef struct {
    int fd;
    int64_t position, size;
    struct heif_context *context;
    struct heif_image_handle *primary;
} ptk_heif_file;

/* libheif's limits for every file opened here: the widest or tallest image, and no decoding
 * threads of its own (the caller's thread does the work). */
#define PTK_HEIF_SIDE_LIMIT 65535

/* Opens the HEIF file `fd` and finds its primary image. NULL with `message` (200 bytes) set
 * when libheif cannot read it or it has no primary image with a size. */
ptk_heif_file *ptk_heif_open(int fd, char *message);

void ptk_heif_close(ptk_heif_file *file);

/* ptk_heif_open then ptk_heif_close: 0 when libheif opens the file and finds its primary
 * image, else -1 with `message` (200 bytes) saying why. */
int ptk_heif_check(int fd, char *message);

#endif
