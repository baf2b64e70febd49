#ifndef PTK_CSYSTEMD_SHIM_H
#define PTK_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
