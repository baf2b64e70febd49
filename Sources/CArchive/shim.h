#ifndef PTK_CARCHIVE_SHIM_H
#define PTK_CARCHIVE_SHIM_H
// libarchive: writing a .ptk package as a zip archive for the web interface's downloads.
#include <archive.h>
#include <archive_entry.h>
static inline unsigned int ptk_ae_ifreg(void) { return AE_IFREG; }
static inline unsigned int ptk_ae_ifdir(void) { return AE_IFDIR; }
static inline int ptk_archive_ok(void) { return ARCHIVE_OK; }
#endif
