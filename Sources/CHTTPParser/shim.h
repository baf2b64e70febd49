#ifndef PTK_CHTTPPARSER_SHIM_H
#define PTK_CHTTPPARSER_SHIM_H
// Node's http-parser (Debian: libhttp-parser-dev), which has no pkg-config file.
#include <http_parser.h>

// The parser's error and flags are bitfields; these read them for Swift.
static inline unsigned ptk_http_errno(const http_parser *p) { return p->http_errno; }
static inline int ptk_http_is_chunked(const http_parser *p) { return (p->flags & F_CHUNKED) != 0; }
static inline int ptk_http_has_length(const http_parser *p) { return (p->flags & F_CONTENTLENGTH) != 0; }
static inline int ptk_http_is_upgrade(const http_parser *p) { return p->upgrade; }
#endif
