#ifndef PTK_CJPEG_SHIM_H
#define PTK_CJPEG_SHIM_H
/* jpeglib.h uses FILE and size_t without including their headers. */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#endif
