/* EC P-256 and RSA keys for JWS (ES256, RS256) through OpenSSL's libcrypto (see pkey.h).
 *
 * libcrypto is opened on the first key operation (crypto_api.h), as for a digest. Only entry
 * points present, as functions, in both OpenSSL 1.1.1 and 3.x are used. The key's kind and public
 * numbers come from the SubjectPublicKeyInfo that libcrypto encodes (i2d_PUBKEY): reading those
 * few DER headers here avoids the accessors that differ between 1.1 and 3.x. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto_api.h"

#include "pkey.h"

static int need_crypto(char *err, size_t errlen)
{
    char why[256];
    if (mcp_crypto_load(why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "keys and signatures need OpenSSL's libcrypto: %s", why);
    return -1;
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
    unsigned long e = ERR_peek_last_error();
    const char *why = e != 0 ? ERR_reason_error_string(e) : NULL;
    if (why != NULL)
        snprintf(err, errlen, "%s (%s)", what, why);
    else
        snprintf(err, errlen, "%s", what);
    ERR_clear_error();
    return -1;
}

void mcp_pkey_wipe_free(void *p, size_t len)
{
    if (p == NULL)
        return;
    if (len > 0)
        OPENSSL_cleanse(p, len);
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
        EVP_PKEY_free(pkey);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    k->pkey = pkey;
    k->is_private = is_private;
    n = i2d_PUBKEY(pkey, NULL);
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
    if (i2d_PUBKEY(pkey, &q) != n) {
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
        EVP_PKEY_free(k->pkey);
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
    ctx = EVP_PKEY_CTX_new_id(kind == MCP_PKEY_RSA ? EVP_PKEY_RSA : EVP_PKEY_EC, NULL);
    if (ctx == NULL)
        return fail(err, errlen, "cannot generate a key");
    ok = EVP_PKEY_keygen_init(ctx) == 1;
    if (ok && kind == MCP_PKEY_RSA)
        ok = EVP_PKEY_CTX_ctrl(ctx, EVP_PKEY_RSA, EVP_PKEY_OP_KEYGEN, EVP_PKEY_CTRL_RSA_KEYGEN_BITS,
                               bits, NULL) > 0;
    else if (ok)
        ok = EVP_PKEY_CTX_ctrl(ctx, EVP_PKEY_EC, EVP_PKEY_OP_PARAMGEN | EVP_PKEY_OP_KEYGEN,
                               EVP_PKEY_CTRL_EC_PARAMGEN_CURVE_NID, NID_X9_62_prime256v1, NULL) > 0;
    ok = ok && EVP_PKEY_keygen(ctx, &pkey) == 1 && pkey != NULL;
    EVP_PKEY_CTX_free(ctx);
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
    bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL)
        return fail(err, errlen, "out of memory");
    if (is_public)
        pkey = PEM_read_bio_PUBKEY(bio, NULL, give_passphrase, &pw);
    else
        pkey = PEM_read_bio_PrivateKey(bio, NULL, give_passphrase, &pw);
    BIO_free(bio);
    if (pkey == NULL) {
        if (pw.asked && pass == NULL) {
            ERR_clear_error();
            snprintf(err, errlen, "the private key is encrypted: a passphrase is needed");
            return -1;
        }
        if (pw.asked)
            return fail(err, errlen, "cannot decrypt the private key: wrong passphrase?");
        if (!contains(pem, len, "-----BEGIN ")) {
            ERR_clear_error();
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
    ctx = EVP_MD_CTX_new();
    if (buf == NULL || ctx == NULL) {
        free(buf);
        EVP_MD_CTX_free(ctx);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ok = EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k->pkey) == 1 &&
         EVP_DigestSign(ctx, buf, &n, (const unsigned char *)data, len) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        free(buf);
        return fail(err, errlen, "signing failed");
    }
    if (alg == MCP_ALG_ES256) {
        /* JWS (RFC 7518 3.4) wants r || s, each 32 bytes big-endian, not the DER SEQUENCE. */
        const unsigned char *p = buf;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)n);
        const BIGNUM *r = NULL, *s = NULL;
        unsigned char *raw = malloc(64);
        ok = es != NULL && raw != NULL;
        if (ok) {
            ECDSA_SIG_get0(es, &r, &s);
            ok = BN_bn2binpad(r, raw, 32) == 32 && BN_bn2binpad(s, raw + 32, 32) == 32;
        }
        if (es != NULL)
            ECDSA_SIG_free(es);
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
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL), *s = BN_bin2bn(raw + 32, 32, NULL);
    unsigned char *der = NULL, *q;
    int n;
    if (es == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        if (es != NULL)
            ECDSA_SIG_free(es);
        return NULL;
    }
    n = i2d_ECDSA_SIG(es, NULL);
    if (n > 0 && (der = malloc((size_t)n)) != NULL) {
        q = der;
        if (i2d_ECDSA_SIG(es, &q) != n) {
            free(der);
            der = NULL;
        }
    }
    ECDSA_SIG_free(es);
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
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) {
        free(der);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k->pkey) != 1) {
        EVP_MD_CTX_free(ctx);
        free(der);
        return fail(err, errlen, "verification failed");
    }
    rc = EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)data, len) == 1;
    EVP_MD_CTX_free(ctx);
    free(der);
    ERR_clear_error(); /* a bad signature leaves a reason in the queue */
    return rc;
}

int mcp_pkey_pem(const mcp_pkey *k, int private_part, char **pem, size_t *len, char *err,
                 size_t errlen)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *data = NULL;
    long n;
    int ok;
    *pem = NULL;
    if (private_part && !k->is_private) {
        if (bio != NULL)
            BIO_free(bio);
        snprintf(err, errlen, "a public key has no private part");
        return -1;
    }
    if (bio == NULL)
        return fail(err, errlen, "out of memory");
    ok = private_part ? PEM_write_bio_PrivateKey(bio, k->pkey, NULL, NULL, 0, NULL, NULL) == 1
                      : PEM_write_bio_PUBKEY(bio, k->pkey) == 1;
    n = ok ? BIO_ctrl(bio, BIO_CTRL_INFO, 0, (char *)&data) : 0;
    if (!ok || n <= 0 || data == NULL) {
        BIO_free(bio); /* a memory BIO wipes its buffer when freed */
        return fail(err, errlen, "cannot write the key as PEM");
    }
    *pem = malloc((size_t)n);
    if (*pem != NULL) {
        memcpy(*pem, data, (size_t)n);
        *len = (size_t)n;
    }
    BIO_free(bio);
    if (*pem == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
