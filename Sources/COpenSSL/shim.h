#ifndef PTK_COPENSSL_SHIM_H
#define PTK_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#endif
