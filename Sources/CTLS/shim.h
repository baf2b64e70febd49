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
#include <openssl/x509v3.h>

static inline int ptk_ctx_set_min_proto(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int ptk_ctx_set_max_proto(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline long ptk_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
/// Adds an X.509 v3 extension given as OpenSSL's configuration text ("DNS:a,IP:1.2.3.4",
/// "critical,CA:FALSE") to a self-signed certificate. 1 on success.
static inline int ptk_add_extension(X509 *x, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext) return 0;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}
static inline int ptk_nid_subject_alt_name(void) { return NID_subject_alt_name; }
static inline int ptk_nid_basic_constraints(void) { return NID_basic_constraints; }
static inline int ptk_nid_ext_key_usage(void) { return NID_ext_key_usage; }
static inline int ptk_nid_key_usage(void) { return NID_key_usage; }
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
// A stack of cipher suites (SSL_get1_supported_ciphers): its size, an element, freeing it.
static inline int ptk_ciphers_count(STACK_OF(SSL_CIPHER) *s) { return sk_SSL_CIPHER_num(s); }
static inline const SSL_CIPHER *ptk_ciphers_value(STACK_OF(SSL_CIPHER) *s, int i) { return sk_SSL_CIPHER_value(s, i); }
static inline void ptk_ciphers_free(STACK_OF(SSL_CIPHER) *s) { sk_SSL_CIPHER_free(s); }
#endif
