/* EC P-256 and RSA keys for JWS (ES256, RS256) through OpenSSL's libcrypto (see pkey.h).
 *
 * libcrypto is opened on the first key operation (lazylib.h), like digest.c does. Only entry
 * points present, as functions, in both OpenSSL 1.1.1 and 3.x are used. The key's kind and public
 * numbers come from the SubjectPublicKeyInfo that libcrypto encodes (i2d_PUBKEY): reading those
 * few DER headers here avoids the accessors that differ between 1.1 and 3.x. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto_api.h"

#include "lazylib.h"
#include "pkey.h"

static struct {
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
} C;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static int crypto_rc = -1;
static char crypto_err[256];

static void load_crypto(void)
{
    static const char *const names[] = {"libcrypto.so.3",    "libcrypto.so.1.1", "libcrypto.so",
                                        "libcrypto.3.dylib", "libcrypto.dylib",  NULL};
    const mcp_lazysym syms[] = {
        {"BIO_new_mem_buf", (void **)&C.bio_new_mem_buf},
        {"BIO_new", (void **)&C.bio_new},
        {"BIO_s_mem", (void **)&C.bio_s_mem},
        {"BIO_ctrl", (void **)&C.bio_ctrl},
        {"BIO_free", (void **)&C.bio_free},
        {"PEM_read_bio_PrivateKey", (void **)&C.pem_read_private},
        {"PEM_read_bio_PUBKEY", (void **)&C.pem_read_public},
        {"PEM_write_bio_PrivateKey", (void **)&C.pem_write_private},
        {"PEM_write_bio_PUBKEY", (void **)&C.pem_write_public},
        {"EVP_PKEY_free", (void **)&C.pkey_free},
        {"EVP_PKEY_CTX_new_id", (void **)&C.pctx_new_id},
        {"EVP_PKEY_CTX_free", (void **)&C.pctx_free},
        {"EVP_PKEY_CTX_ctrl", (void **)&C.pctx_ctrl},
        {"EVP_PKEY_keygen_init", (void **)&C.keygen_init},
        {"EVP_PKEY_keygen", (void **)&C.keygen},
        {"EVP_MD_CTX_new", (void **)&C.md_ctx_new},
        {"EVP_MD_CTX_free", (void **)&C.md_ctx_free},
        {"EVP_DigestSignInit", (void **)&C.sign_init},
        {"EVP_DigestSign", (void **)&C.sign},
        {"EVP_DigestVerifyInit", (void **)&C.verify_init},
        {"EVP_DigestVerify", (void **)&C.verify},
        {"EVP_sha256", (void **)&C.sha256},
        {"i2d_PUBKEY", (void **)&C.i2d_pubkey},
        {"d2i_ECDSA_SIG", (void **)&C.d2i_ecdsa_sig},
        {"i2d_ECDSA_SIG", (void **)&C.i2d_ecdsa_sig},
        {"ECDSA_SIG_new", (void **)&C.ecdsa_sig_new},
        {"ECDSA_SIG_free", (void **)&C.ecdsa_sig_free},
        {"ECDSA_SIG_get0", (void **)&C.ecdsa_sig_get0},
        {"ECDSA_SIG_set0", (void **)&C.ecdsa_sig_set0},
        {"BN_bin2bn", (void **)&C.bn_bin2bn},
        {"BN_bn2binpad", (void **)&C.bn_bn2binpad},
        {"BN_free", (void **)&C.bn_free},
        {"ERR_peek_last_error", (void **)&C.err_peek_last},
        {"ERR_reason_error_string", (void **)&C.err_reason},
        {"ERR_clear_error", (void **)&C.err_clear},
        {"OPENSSL_cleanse", (void **)&C.cleanse},
        {NULL, NULL},
    };
    crypto_rc = mcp_lazylib_load(names, syms, crypto_err, sizeof crypto_err);
}

static int need_crypto(char *err, size_t errlen)
{
    pthread_once(&crypto_once, load_crypto);
    if (crypto_rc != 0) {
        snprintf(err, errlen, "keys and signatures need OpenSSL's libcrypto: %s", crypto_err);
        return -1;
    }
    return 0;
}

struct mcp_pkey {
    EVP_PKEY *pkey;
    int kind;
    int bits;
    int is_private;
    unsigned char *spki; /* DER SubjectPublicKeyInfo; the fields below point into it */
    size_t spki_len;
    const unsigned char *a; /* EC: x (32 bytes); RSA: n */
    size_t alen;
    const unsigned char *b; /* EC: y (32 bytes); RSA: e */
    size_t blen;
};

/* What went wrong inside libcrypto (its reason string: never key material), then an empty
 * error queue, so no stale entry reaches another user of libcrypto in this thread (libcurl). */
static int fail(char *err, size_t errlen, const char *what)
{
    unsigned long e = C.err_peek_last();
    const char *why = e != 0 ? C.err_reason(e) : NULL;
    if (why != NULL)
        snprintf(err, errlen, "%s (%s)", what, why);
    else
        snprintf(err, errlen, "%s", what);
    C.err_clear();
    return -1;
}

void mcp_pkey_wipe_free(void *p, size_t len)
{
    if (p == NULL)
        return;
    if (len > 0)
        C.cleanse(p, len);
    free(p);
}

/* ---- the SubjectPublicKeyInfo, read only as far as needed ---- */

typedef struct der {
    const unsigned char *p;
    size_t len;
} der;

/* Takes the next element of *in, which must have that tag; its contents go to out. */
static int der_take(der *in, unsigned char tag, der *out)
{
    size_t len, i = 2;
    if (in->len < 2 || in->p[0] != tag)
        return -1;
    len = in->p[1];
    if (len & 0x80) {
        size_t nlen = len & 0x7f;
        if (nlen == 0 || nlen > 3 || in->len < 2 + nlen)
            return -1;
        len = 0;
        for (; i < 2 + nlen; i++)
            len = (len << 8) | in->p[i];
    }
    if (in->len - i < len)
        return -1;
    out->p = in->p + i;
    out->len = len;
    in->p += i + len;
    in->len -= i + len;
    return 0;
}

static int der_is(const der *d, const unsigned char *bytes, size_t n)
{
    return d->len == n && memcmp(d->p, bytes, n) == 0;
}

static const unsigned char OID_EC_PUBLIC_KEY[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};
static const unsigned char OID_P256[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
static const unsigned char OID_RSA[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};

static void strip_zeros(der *d)
{
    while (d->len > 1 && d->p[0] == 0) {
        d->p++;
        d->len--;
    }
}

static int read_spki(mcp_pkey *k, char *err, size_t errlen)
{
    der all = {k->spki, k->spki_len}, spki, alg, bits, oid;
    if (der_take(&all, 0x30, &spki) != 0 || all.len != 0 || der_take(&spki, 0x30, &alg) != 0 ||
        der_take(&spki, 0x03, &bits) != 0 || der_take(&alg, 0x06, &oid) != 0 || bits.len < 1 ||
        bits.p[0] != 0)
        goto malformed;
    bits.p++; /* the unused-bits octet */
    bits.len--;
    if (der_is(&oid, OID_EC_PUBLIC_KEY, sizeof OID_EC_PUBLIC_KEY)) {
        der curve;
        if (der_take(&alg, 0x06, &curve) != 0 || !der_is(&curve, OID_P256, sizeof OID_P256)) {
            snprintf(err, errlen, "unsupported EC key: only the P-256 curve (ES256) is supported");
            return -1;
        }
        if (bits.len != 65 || bits.p[0] != 0x04)
            goto malformed; /* an uncompressed point: 04 || x || y */
        k->kind = MCP_PKEY_EC_P256;
        k->bits = 256;
        k->a = bits.p + 1;
        k->alen = 32;
        k->b = bits.p + 33;
        k->blen = 32;
        return 0;
    }
    if (der_is(&oid, OID_RSA, sizeof OID_RSA)) {
        der seq, n, e;
        int top;
        if (der_take(&bits, 0x30, &seq) != 0 || der_take(&seq, 0x02, &n) != 0 ||
            der_take(&seq, 0x02, &e) != 0)
            goto malformed;
        strip_zeros(&n);
        strip_zeros(&e);
        if (n.len == 0 || n.len > MCP_PKEY_RSA_MAX_BITS / 8 || e.len == 0)
            goto malformed;
        k->bits = (int)n.len * 8;
        for (top = 0x80; top > 0 && !(n.p[0] & top); top >>= 1)
            k->bits--;
        if (k->bits < MCP_PKEY_RSA_MIN_BITS) {
            snprintf(err, errlen, "RSA key too small: %d bits (RS256 needs %d or more)", k->bits,
                     MCP_PKEY_RSA_MIN_BITS);
            return -1;
        }
        k->kind = MCP_PKEY_RSA;
        k->a = n.p;
        k->alen = n.len;
        k->b = e.p;
        k->blen = e.len;
        return 0;
    }
    snprintf(err, errlen, "unsupported key type: only EC P-256 and RSA keys are supported");
    return -1;
malformed:
    snprintf(err, errlen, "unexpected public key encoding from libcrypto");
    return -1;
}

/* Takes ownership of pkey (freed on failure). */
static int wrap(EVP_PKEY *pkey, int is_private, mcp_pkey **out, char *err, size_t errlen)
{
    mcp_pkey *k = calloc(1, sizeof *k);
    int n;
    unsigned char *q;
    if (k == NULL) {
        C.pkey_free(pkey);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    k->pkey = pkey;
    k->is_private = is_private;
    n = C.i2d_pubkey(pkey, NULL);
    if (n <= 0) {
        mcp_pkey_free(k);
        return fail(err, errlen, "cannot encode the public key");
    }
    k->spki = malloc((size_t)n);
    if (k->spki == NULL) {
        mcp_pkey_free(k);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    q = k->spki;
    if (C.i2d_pubkey(pkey, &q) != n) {
        mcp_pkey_free(k);
        return fail(err, errlen, "cannot encode the public key");
    }
    k->spki_len = (size_t)n;
    if (read_spki(k, err, errlen) != 0) {
        mcp_pkey_free(k);
        return -1;
    }
    *out = k;
    return 0;
}

void mcp_pkey_free(mcp_pkey *k)
{
    if (k == NULL)
        return;
    if (k->pkey != NULL)
        C.pkey_free(k->pkey);
    free(k->spki);
    free(k);
}

int mcp_pkey_generate(int kind, int bits, mcp_pkey **out, char *err, size_t errlen)
{
    EVP_PKEY_CTX *ctx;
    EVP_PKEY *pkey = NULL;
    int ok;
    if (need_crypto(err, errlen) != 0)
        return -1;
    ctx = C.pctx_new_id(kind == MCP_PKEY_RSA ? EVP_PKEY_RSA : EVP_PKEY_EC, NULL);
    if (ctx == NULL)
        return fail(err, errlen, "cannot generate a key");
    ok = C.keygen_init(ctx) == 1;
    if (ok && kind == MCP_PKEY_RSA)
        ok = C.pctx_ctrl(ctx, EVP_PKEY_RSA, EVP_PKEY_OP_KEYGEN, EVP_PKEY_CTRL_RSA_KEYGEN_BITS, bits,
                         NULL) > 0;
    else if (ok)
        ok = C.pctx_ctrl(ctx, EVP_PKEY_EC, EVP_PKEY_OP_PARAMGEN | EVP_PKEY_OP_KEYGEN,
                         EVP_PKEY_CTRL_EC_PARAMGEN_CURVE_NID, NID_X9_62_prime256v1, NULL) > 0;
    ok = ok && C.keygen(ctx, &pkey) == 1 && pkey != NULL;
    C.pctx_free(ctx);
    if (!ok)
        return fail(err, errlen, "cannot generate a key");
    return wrap(pkey, 1, out, err, errlen);
}

typedef struct passphrase {
    const char *s;
    size_t len;
    int asked;
} passphrase;

/* libcrypto's default would prompt on the terminal: never. */
static int give_passphrase(char *buf, int size, int rwflag, void *u)
{
    passphrase *pw = u;
    (void)rwflag;
    pw->asked = 1;
    if (pw->s == NULL || size < 0 || pw->len > (size_t)size)
        return -1;
    memcpy(buf, pw->s, pw->len);
    return (int)pw->len;
}

static int contains(const char *s, size_t n, const char *what)
{
    size_t m = strlen(what), i;
    for (i = 0; i + m <= n; i++)
        if (memcmp(s + i, what, m) == 0)
            return 1;
    return 0;
}

int mcp_pkey_load_pem(const char *pem, size_t len, const char *pass, mcp_pkey **out, char *err,
                      size_t errlen)
{
    BIO *bio;
    EVP_PKEY *pkey;
    passphrase pw = {pass, pass != NULL ? strlen(pass) : 0, 0};
    int is_public =
        !contains(pem, len, "PRIVATE KEY-----") && contains(pem, len, "-----BEGIN PUBLIC KEY-----");
    if (need_crypto(err, errlen) != 0)
        return -1;
    if (len > 1024 * 1024) {
        snprintf(err, errlen, "not a PEM key: %lu bytes is too long", (unsigned long)len);
        return -1;
    }
    bio = C.bio_new_mem_buf(pem, (int)len);
    if (bio == NULL)
        return fail(err, errlen, "out of memory");
    if (is_public)
        pkey = C.pem_read_public(bio, NULL, give_passphrase, &pw);
    else
        pkey = C.pem_read_private(bio, NULL, give_passphrase, &pw);
    C.bio_free(bio);
    if (pkey == NULL) {
        if (pw.asked && pass == NULL) {
            C.err_clear();
            snprintf(err, errlen, "the private key is encrypted: a passphrase is needed");
            return -1;
        }
        if (pw.asked)
            return fail(err, errlen, "cannot decrypt the private key: wrong passphrase?");
        if (!contains(pem, len, "-----BEGIN ")) {
            C.err_clear();
            snprintf(err, errlen, "not a PEM key (no -----BEGIN line)");
            return -1;
        }
        return fail(err, errlen,
                    is_public ? "cannot read the PEM public key"
                              : "cannot read the PEM private key");
    }
    return wrap(pkey, !is_public, out, err, errlen);
}

int mcp_pkey_kind(const mcp_pkey *k) { return k->kind; }

int mcp_pkey_bits(const mcp_pkey *k) { return k->bits; }

int mcp_pkey_is_private(const mcp_pkey *k) { return k->is_private; }

void mcp_pkey_public_ec(const mcp_pkey *k, const unsigned char **x, const unsigned char **y)
{
    *x = k->a;
    *y = k->b;
}

void mcp_pkey_public_rsa(const mcp_pkey *k, const unsigned char **n, size_t *nlen,
                         const unsigned char **e, size_t *elen)
{
    *n = k->a;
    *nlen = k->alen;
    *e = k->b;
    *elen = k->blen;
}

static int alg_fits(const mcp_pkey *k, int alg, char *err, size_t errlen)
{
    if ((alg == MCP_ALG_ES256 && k->kind == MCP_PKEY_EC_P256) ||
        (alg == MCP_ALG_RS256 && k->kind == MCP_PKEY_RSA))
        return 0;
    snprintf(err, errlen, "%s does not fit %s key", alg == MCP_ALG_ES256 ? "ES256" : "RS256",
             k->kind == MCP_PKEY_RSA ? "an RSA" : "an EC P-256");
    return -1;
}

int mcp_pkey_sign(const mcp_pkey *k, int alg, const void *data, size_t len, unsigned char **sig,
                  size_t *siglen, char *err, size_t errlen)
{
    EVP_MD_CTX *ctx;
    unsigned char *buf;
    size_t cap = k->kind == MCP_PKEY_RSA ? k->alen : 2 * 32 + 16; /* ECDSA DER: at most 72 bytes */
    size_t n = cap;
    int ok;
    *sig = NULL;
    if (alg_fits(k, alg, err, errlen) != 0)
        return -1;
    if (!k->is_private) {
        snprintf(err, errlen, "a public key cannot sign");
        return -1;
    }
    buf = malloc(cap);
    ctx = C.md_ctx_new();
    if (buf == NULL || ctx == NULL) {
        free(buf);
        C.md_ctx_free(ctx);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ok = C.sign_init(ctx, NULL, C.sha256(), NULL, k->pkey) == 1 &&
         C.sign(ctx, buf, &n, (const unsigned char *)data, len) == 1;
    C.md_ctx_free(ctx);
    if (!ok) {
        free(buf);
        return fail(err, errlen, "signing failed");
    }
    if (alg == MCP_ALG_ES256) {
        /* JWS (RFC 7518 3.4) wants r || s, each 32 bytes big-endian, not the DER SEQUENCE. */
        const unsigned char *p = buf;
        ECDSA_SIG *es = C.d2i_ecdsa_sig(NULL, &p, (long)n);
        const BIGNUM *r = NULL, *s = NULL;
        unsigned char *raw = malloc(64);
        ok = es != NULL && raw != NULL;
        if (ok) {
            C.ecdsa_sig_get0(es, &r, &s);
            ok = C.bn_bn2binpad(r, raw, 32) == 32 && C.bn_bn2binpad(s, raw + 32, 32) == 32;
        }
        if (es != NULL)
            C.ecdsa_sig_free(es);
        free(buf);
        if (!ok) {
            free(raw);
            return fail(err, errlen, "signing failed (ECDSA signature conversion)");
        }
        buf = raw;
        n = 64;
    }
    *sig = buf;
    *siglen = n;
    return 0;
}

/* The DER form libcrypto verifies, from JOSE's r || s. */
static unsigned char *ecdsa_der(const unsigned char *raw, int *derlen)
{
    ECDSA_SIG *es = C.ecdsa_sig_new();
    BIGNUM *r = C.bn_bin2bn(raw, 32, NULL), *s = C.bn_bin2bn(raw + 32, 32, NULL);
    unsigned char *der = NULL, *q;
    int n;
    if (es == NULL || r == NULL || s == NULL || C.ecdsa_sig_set0(es, r, s) != 1) {
        C.bn_free(r);
        C.bn_free(s);
        if (es != NULL)
            C.ecdsa_sig_free(es);
        return NULL;
    }
    n = C.i2d_ecdsa_sig(es, NULL);
    if (n > 0 && (der = malloc((size_t)n)) != NULL) {
        q = der;
        if (C.i2d_ecdsa_sig(es, &q) != n) {
            free(der);
            der = NULL;
        }
    }
    C.ecdsa_sig_free(es);
    *derlen = n;
    return der;
}

int mcp_pkey_verify(const mcp_pkey *k, int alg, const void *data, size_t len,
                    const unsigned char *sig, size_t siglen, char *err, size_t errlen)
{
    EVP_MD_CTX *ctx;
    unsigned char *der = NULL;
    int derlen = 0, rc;
    if (alg_fits(k, alg, err, errlen) != 0)
        return -1;
    if (alg == MCP_ALG_ES256) {
        if (siglen != 64)
            return 0;
        der = ecdsa_der(sig, &derlen);
        if (der == NULL)
            return fail(err, errlen, "verification failed (ECDSA signature conversion)");
        sig = der;
        siglen = (size_t)derlen;
    } else if (siglen != k->alen) {
        return 0;
    }
    ctx = C.md_ctx_new();
    if (ctx == NULL) {
        free(der);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (C.verify_init(ctx, NULL, C.sha256(), NULL, k->pkey) != 1) {
        C.md_ctx_free(ctx);
        free(der);
        return fail(err, errlen, "verification failed");
    }
    rc = C.verify(ctx, sig, siglen, (const unsigned char *)data, len) == 1;
    C.md_ctx_free(ctx);
    free(der);
    C.err_clear(); /* a bad signature leaves a reason in the queue */
    return rc;
}

int mcp_pkey_pem(const mcp_pkey *k, int private_part, char **pem, size_t *len, char *err,
                 size_t errlen)
{
    BIO *bio = C.bio_new(C.bio_s_mem());
    char *data = NULL;
    long n;
    int ok;
    *pem = NULL;
    if (private_part && !k->is_private) {
        if (bio != NULL)
            C.bio_free(bio);
        snprintf(err, errlen, "a public key has no private part");
        return -1;
    }
    if (bio == NULL)
        return fail(err, errlen, "out of memory");
    ok = private_part ? C.pem_write_private(bio, k->pkey, NULL, NULL, 0, NULL, NULL) == 1
                      : C.pem_write_public(bio, k->pkey) == 1;
    n = ok ? C.bio_ctrl(bio, BIO_CTRL_INFO, 0, (char *)&data) : 0;
    if (!ok || n <= 0 || data == NULL) {
        C.bio_free(bio); /* a memory BIO wipes its buffer when freed */
        return fail(err, errlen, "cannot write the key as PEM");
    }
    *pem = malloc((size_t)n);
    if (*pem != NULL) {
        memcpy(*pem, data, (size_t)n);
        *len = (size_t)n;
    }
    C.bio_free(bio);
    if (*pem == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
