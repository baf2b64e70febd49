#ifndef PTK_CSQLITE_SHIM_H
#define PTK_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
