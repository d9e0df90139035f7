/* OpenSSL's libcrypto as digest.c and pkey.c see it: its own headers, or, when built with
 * MCP_OWN_CRYPTO_ABI (`make nvim` on a machine without OpenSSL's development headers), lua-mcp's
 * own declarations (abi/crypto.h). Either way libcrypto is opened at run time (lazylib.h): the
 * names below are redirected to the table of entry points crypto_api.c loads, so the calls read
 * as usual. mcp_crypto_load must have succeeded before any of them runs. */
#ifndef MCP_CRYPTO_API_H
#define MCP_CRYPTO_API_H

#ifdef MCP_OWN_CRYPTO_ABI
#include "abi/crypto.h"
#else
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#endif

#include <stddef.h>

typedef struct mcp_crypto_api {
    __typeof__(&EVP_Digest) digest;
    __typeof__(&RAND_bytes) rand_bytes;
    __typeof__(&BIO_new_mem_buf) bio_new_mem_buf;
    __typeof__(&BIO_new) bio_new;
    __typeof__(&BIO_s_mem) bio_s_mem;
    __typeof__(&BIO_ctrl) bio_ctrl;
    __typeof__(&BIO_free) bio_free;
    __typeof__(&PEM_read_bio_PrivateKey) pem_read_private;
    __typeof__(&PEM_read_bio_PUBKEY) pem_read_public;
    __typeof__(&PEM_write_bio_PrivateKey) pem_write_private;
    __typeof__(&PEM_write_bio_PUBKEY) pem_write_public;
    __typeof__(&EVP_PKEY_free) pkey_free;
    __typeof__(&EVP_PKEY_CTX_new_id) pctx_new_id;
    __typeof__(&EVP_PKEY_CTX_free) pctx_free;
    __typeof__(&EVP_PKEY_CTX_ctrl) pctx_ctrl;
    __typeof__(&EVP_PKEY_keygen_init) keygen_init;
    __typeof__(&EVP_PKEY_keygen) keygen;
    __typeof__(&EVP_MD_CTX_new) md_ctx_new;
    __typeof__(&EVP_MD_CTX_free) md_ctx_free;
    __typeof__(&EVP_DigestSignInit) sign_init;
    __typeof__(&EVP_DigestSign) sign;
    __typeof__(&EVP_DigestVerifyInit) verify_init;
    __typeof__(&EVP_DigestVerify) verify;
    __typeof__(&EVP_sha256) sha256;
    __typeof__(&i2d_PUBKEY) i2d_pubkey;
    __typeof__(&d2i_ECDSA_SIG) d2i_ecdsa_sig;
    __typeof__(&i2d_ECDSA_SIG) i2d_ecdsa_sig;
    __typeof__(&ECDSA_SIG_new) ecdsa_sig_new;
    __typeof__(&ECDSA_SIG_free) ecdsa_sig_free;
    __typeof__(&ECDSA_SIG_get0) ecdsa_sig_get0;
    __typeof__(&ECDSA_SIG_set0) ecdsa_sig_set0;
    __typeof__(&BN_bin2bn) bn_bin2bn;
    __typeof__(&BN_bn2binpad) bn_bn2binpad;
    __typeof__(&BN_free) bn_free;
    __typeof__(&ERR_peek_last_error) err_peek_last;
    __typeof__(&ERR_reason_error_string) err_reason;
    __typeof__(&ERR_clear_error) err_clear;
    __typeof__(&OPENSSL_cleanse) cleanse;
} mcp_crypto_api;

/* Load libcrypto once per process. Returns 0, or -1 with a message naming what was missing. */
int mcp_crypto_load(char *err, size_t errlen);
/* The table (valid after a successful mcp_crypto_load). */
const mcp_crypto_api *mcp_crypto_fn(void);

#ifndef MCP_CRYPTO_API_IMPL
#define EVP_Digest (mcp_crypto_fn()->digest)
#define RAND_bytes (mcp_crypto_fn()->rand_bytes)
#define BIO_new_mem_buf (mcp_crypto_fn()->bio_new_mem_buf)
#define BIO_new (mcp_crypto_fn()->bio_new)
#define BIO_s_mem (mcp_crypto_fn()->bio_s_mem)
#define BIO_ctrl (mcp_crypto_fn()->bio_ctrl)
#define BIO_free (mcp_crypto_fn()->bio_free)
#define PEM_read_bio_PrivateKey (mcp_crypto_fn()->pem_read_private)
#define PEM_read_bio_PUBKEY (mcp_crypto_fn()->pem_read_public)
#define PEM_write_bio_PrivateKey (mcp_crypto_fn()->pem_write_private)
#define PEM_write_bio_PUBKEY (mcp_crypto_fn()->pem_write_public)
#define EVP_PKEY_free (mcp_crypto_fn()->pkey_free)
#define EVP_PKEY_CTX_new_id (mcp_crypto_fn()->pctx_new_id)
#define EVP_PKEY_CTX_free (mcp_crypto_fn()->pctx_free)
#define EVP_PKEY_CTX_ctrl (mcp_crypto_fn()->pctx_ctrl)
#define EVP_PKEY_keygen_init (mcp_crypto_fn()->keygen_init)
#define EVP_PKEY_keygen (mcp_crypto_fn()->keygen)
#define EVP_MD_CTX_new (mcp_crypto_fn()->md_ctx_new)
#define EVP_MD_CTX_free (mcp_crypto_fn()->md_ctx_free)
#define EVP_DigestSignInit (mcp_crypto_fn()->sign_init)
#define EVP_DigestSign (mcp_crypto_fn()->sign)
#define EVP_DigestVerifyInit (mcp_crypto_fn()->verify_init)
#define EVP_DigestVerify (mcp_crypto_fn()->verify)
#define EVP_sha256 (mcp_crypto_fn()->sha256)
#define i2d_PUBKEY (mcp_crypto_fn()->i2d_pubkey)
#define d2i_ECDSA_SIG (mcp_crypto_fn()->d2i_ecdsa_sig)
#define i2d_ECDSA_SIG (mcp_crypto_fn()->i2d_ecdsa_sig)
#define ECDSA_SIG_new (mcp_crypto_fn()->ecdsa_sig_new)
#define ECDSA_SIG_free (mcp_crypto_fn()->ecdsa_sig_free)
#define ECDSA_SIG_get0 (mcp_crypto_fn()->ecdsa_sig_get0)
#define ECDSA_SIG_set0 (mcp_crypto_fn()->ecdsa_sig_set0)
#define BN_bin2bn (mcp_crypto_fn()->bn_bin2bn)
#define BN_bn2binpad (mcp_crypto_fn()->bn_bn2binpad)
#define BN_free (mcp_crypto_fn()->bn_free)
#define ERR_peek_last_error (mcp_crypto_fn()->err_peek_last)
#define ERR_reason_error_string (mcp_crypto_fn()->err_reason)
#define ERR_clear_error (mcp_crypto_fn()->err_clear)
#define OPENSSL_cleanse (mcp_crypto_fn()->cleanse)
#endif

#endif
