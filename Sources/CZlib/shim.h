#ifndef PTK_CZLIB_SHIM_H
#define PTK_CZLIB_SHIM_H
#include <zlib.h>
#endif
