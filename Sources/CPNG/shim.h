#ifndef PTK_CPNG_SHIM_H
#define PTK_CPNG_SHIM_H
#include <png.h>
#endif
