#ifndef PTK_CEXPAT_SHIM_H
#define PTK_CEXPAT_SHIM_H
// expat (Debian: libexpat1-dev): the WebDAV door's request bodies, parsed in PTKDAV alone.
#include <expat.h>
#endif
