/* lua-mcp's own declarations of the part of OpenSSL's libcrypto that the core uses (digest.c,
 * pkey.c), written from OpenSSL's documentation: the man pages give the prototypes, and the
 * object identifiers (NIDs) and control numbers are fixed ABI shared by OpenSSL 1.1.1 and 3.x.
 * Every type is opaque: the core only passes pointers to them back to libcrypto. The core never
 * links libcrypto: it opens it at run time and calls through a table of entry points, so these
 * declarations only have to describe the calls. See README.md in this directory; `make
 * check-abi` compares every value here with the installed OpenSSL headers, and each prototype
 * with the real one. */
#ifndef MCP_ABI_CRYPTO_H
#define MCP_ABI_CRYPTO_H

#include <stddef.h>

#ifndef MCP_ABI_PROTOTYPES_ONLY

/* ---- opaque types ---- */
typedef struct mcp_abi_evp_md EVP_MD;
typedef struct mcp_abi_evp_md_ctx EVP_MD_CTX;
typedef struct mcp_abi_evp_pkey EVP_PKEY;
typedef struct mcp_abi_evp_pkey_ctx EVP_PKEY_CTX;
typedef struct mcp_abi_evp_cipher EVP_CIPHER;
typedef struct mcp_abi_engine ENGINE;
typedef struct mcp_abi_bio BIO;
typedef struct mcp_abi_bio_method BIO_METHOD;
typedef struct mcp_abi_bignum BIGNUM;
typedef struct mcp_abi_ecdsa_sig ECDSA_SIG;

/* The passphrase callback of the PEM readers and writers (pem_password_cb(3)). */
typedef int pem_password_cb(char *buf, int size, int rwflag, void *userdata);

/* ---- constants ---- */
#define EVP_MAX_MD_SIZE 64 /* the largest digest EVP_Digest writes */

#define EVP_PKEY_RSA 6           /* NID_rsaEncryption */
#define EVP_PKEY_EC 408          /* NID_X9_62_id_ecPublicKey */
#define NID_X9_62_prime256v1 415 /* the P-256 curve */

#define EVP_PKEY_OP_PARAMGEN (1 << 1)
#define EVP_PKEY_OP_KEYGEN (1 << 2)
#define EVP_PKEY_CTRL_EC_PARAMGEN_CURVE_NID (0x1000 + 1) /* EVP_PKEY_ALG_CTRL + 1 */
#define EVP_PKEY_CTRL_RSA_KEYGEN_BITS (0x1000 + 3)       /* EVP_PKEY_ALG_CTRL + 3 */

#define BIO_CTRL_INFO 3 /* a memory BIO: its data pointer and length */

#endif /* MCP_ABI_PROTOTYPES_ONLY */

/* ---- digests and random bytes ---- */
int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size,
               const EVP_MD *type, ENGINE *impl);
const EVP_MD *EVP_sha256(void);
int RAND_bytes(unsigned char *buf, int num);

/* ---- BIOs ---- */
BIO *BIO_new_mem_buf(const void *buf, int len);
BIO *BIO_new(const BIO_METHOD *type);
const BIO_METHOD *BIO_s_mem(void);
long BIO_ctrl(BIO *bp, int cmd, long larg, void *parg);
int BIO_free(BIO *a);

/* ---- keys: PEM, generation, SubjectPublicKeyInfo ---- */
EVP_PKEY *PEM_read_bio_PrivateKey(BIO *bp, EVP_PKEY **x, pem_password_cb *cb, void *u);
EVP_PKEY *PEM_read_bio_PUBKEY(BIO *bp, EVP_PKEY **x, pem_password_cb *cb, void *u);
int PEM_write_bio_PrivateKey(BIO *bp, const EVP_PKEY *x, const EVP_CIPHER *enc,
                             const unsigned char *kstr, int klen, pem_password_cb *cb, void *u);
int PEM_write_bio_PUBKEY(BIO *bp, const EVP_PKEY *x);
void EVP_PKEY_free(EVP_PKEY *key);
EVP_PKEY_CTX *EVP_PKEY_CTX_new_id(int id, ENGINE *e);
void EVP_PKEY_CTX_free(EVP_PKEY_CTX *ctx);
int EVP_PKEY_CTX_ctrl(EVP_PKEY_CTX *ctx, int keytype, int optype, int cmd, int p1, void *p2);
int EVP_PKEY_keygen_init(EVP_PKEY_CTX *ctx);
int EVP_PKEY_keygen(EVP_PKEY_CTX *ctx, EVP_PKEY **ppkey);
int i2d_PUBKEY(const EVP_PKEY *a, unsigned char **pp);

/* ---- signatures ---- */
EVP_MD_CTX *EVP_MD_CTX_new(void);
void EVP_MD_CTX_free(EVP_MD_CTX *ctx);
int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
                       EVP_PKEY *pkey);
int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sigret, size_t *siglen, const unsigned char *tbs,
                   size_t tbslen);
int EVP_DigestVerifyInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
                         EVP_PKEY *pkey);
int EVP_DigestVerify(EVP_MD_CTX *ctx, const unsigned char *sigret, size_t siglen,
                     const unsigned char *tbs, size_t tbslen);
ECDSA_SIG *d2i_ECDSA_SIG(ECDSA_SIG **sig, const unsigned char **pp, long len);
int i2d_ECDSA_SIG(const ECDSA_SIG *sig, unsigned char **pp);
ECDSA_SIG *ECDSA_SIG_new(void);
void ECDSA_SIG_free(ECDSA_SIG *sig);
void ECDSA_SIG_get0(const ECDSA_SIG *sig, const BIGNUM **pr, const BIGNUM **ps);
int ECDSA_SIG_set0(ECDSA_SIG *sig, BIGNUM *r, BIGNUM *s);
BIGNUM *BN_bin2bn(const unsigned char *s, int len, BIGNUM *ret);
int BN_bn2binpad(const BIGNUM *a, unsigned char *to, int tolen);
void BN_free(BIGNUM *a);

/* ---- errors, wiping ---- */
unsigned long ERR_peek_last_error(void);
const char *ERR_reason_error_string(unsigned long e);
void ERR_clear_error(void);
void OPENSSL_cleanse(void *ptr, size_t len);

#endif
