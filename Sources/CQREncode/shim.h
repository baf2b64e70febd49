#ifndef PTK_CQRENCODE_SHIM_H
#define PTK_CQRENCODE_SHIM_H
// libqrencode: the web interface's login link as a QR code in the terminal (`ptk web-link`).
#include <qrencode.h>
#endif
