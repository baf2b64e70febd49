#ifndef PTK_CTLS_SHIM_H
#define PTK_CTLS_SHIM_H
// OpenSSL's libssl and the X.509/key parts of libcrypto, for PTKTLS. Macros that Swift cannot
// import are wrapped in static inline functions here.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/rand.h>

static inline int ptk_ctx_set_min_proto(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int ptk_ctx_set_max_proto(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline long ptk_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline int ptk_tls1_3_version(void) { return TLS1_3_VERSION; }
static inline int ptk_tls1_2_version(void) { return TLS1_2_VERSION; }
static inline long ptk_mode_partial_write(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
static inline int ptk_alpn_noack(void) { return SSL_TLSEXT_ERR_NOACK; }
static inline int ptk_alpn_ok(void) { return SSL_TLSEXT_ERR_OK; }
static inline long ptk_bio_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}
static inline uint64_t ptk_op_ignore_eof_no_ticket(void) {
    return SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET;
}
static inline void ptk_ctx_set_read_ahead(SSL_CTX *ctx) { SSL_CTX_set_read_ahead(ctx, 1); }
#endif
