#define MCP_CRYPTO_API_IMPL
#include "crypto_api.h"

#include "lazylib.h"

/* Written once under pthread_once, read-only afterwards (see lazylib.h). */
static mcp_crypto_api api;

#define SYM(n, f)                                                                                  \
    {                                                                                              \
        n, (void **)&api.f                                                                         \
    }

static const mcp_lazysym syms[] = {
    SYM("EVP_Digest", digest),
    SYM("RAND_bytes", rand_bytes),
    SYM("BIO_new_mem_buf", bio_new_mem_buf),
    SYM("BIO_new", bio_new),
    SYM("BIO_s_mem", bio_s_mem),
    SYM("BIO_ctrl", bio_ctrl),
    SYM("BIO_free", bio_free),
    SYM("PEM_read_bio_PrivateKey", pem_read_private),
    SYM("PEM_read_bio_PUBKEY", pem_read_public),
    SYM("PEM_write_bio_PrivateKey", pem_write_private),
    SYM("PEM_write_bio_PUBKEY", pem_write_public),
    SYM("EVP_PKEY_free", pkey_free),
    SYM("EVP_PKEY_CTX_new_id", pctx_new_id),
    SYM("EVP_PKEY_CTX_free", pctx_free),
    SYM("EVP_PKEY_CTX_ctrl", pctx_ctrl),
    SYM("EVP_PKEY_keygen_init", keygen_init),
    SYM("EVP_PKEY_keygen", keygen),
    SYM("EVP_MD_CTX_new", md_ctx_new),
    SYM("EVP_MD_CTX_free", md_ctx_free),
    SYM("EVP_DigestSignInit", sign_init),
    SYM("EVP_DigestSign", sign),
    SYM("EVP_DigestVerifyInit", verify_init),
    SYM("EVP_DigestVerify", verify),
    SYM("EVP_sha256", sha256),
    SYM("i2d_PUBKEY", i2d_pubkey),
    SYM("d2i_ECDSA_SIG", d2i_ecdsa_sig),
    SYM("i2d_ECDSA_SIG", i2d_ecdsa_sig),
    SYM("ECDSA_SIG_new", ecdsa_sig_new),
    SYM("ECDSA_SIG_free", ecdsa_sig_free),
    SYM("ECDSA_SIG_get0", ecdsa_sig_get0),
    SYM("ECDSA_SIG_set0", ecdsa_sig_set0),
    SYM("BN_bin2bn", bn_bin2bn),
    SYM("BN_bn2binpad", bn_bn2binpad),
    SYM("BN_free", bn_free),
    SYM("ERR_peek_last_error", err_peek_last),
    SYM("ERR_reason_error_string", err_reason),
    SYM("ERR_clear_error", err_clear),
    SYM("OPENSSL_cleanse", cleanse),
    {NULL, NULL},
};

static void load(void);
static mcp_lazylib lib = MCP_LAZYLIB_INIT(MCP_LIBCRYPTO, syms, NULL, load);
static void load(void) { mcp_lazylib_fill(&lib); }

int mcp_crypto_load(char *err, size_t errlen) { return mcp_lazylib_open(&lib, err, errlen); }

const mcp_crypto_api *mcp_crypto_fn(void) { return &api; }
