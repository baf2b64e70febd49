#ifndef PTK_CDEFLATE_SHIM_H
#define PTK_CDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
