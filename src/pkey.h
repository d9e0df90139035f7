/* Asymmetric keys for JOSE (JWS ES256 / RS256) over OpenSSL's libcrypto, opened on first use.
 *
 * Every cryptographic operation is libcrypto's: key generation, PEM parsing and writing,
 * signing, verification, and the DER <-> raw r||s conversion of ECDSA signatures. This file only
 * reads the public key's SubjectPublicKeyInfo (as libcrypto writes it) to know the key's kind
 * and its public numbers. No message ever contains key material. */
#ifndef MCP_PKEY_H
#define MCP_PKEY_H

#include <stddef.h>

typedef struct mcp_pkey mcp_pkey;

enum { MCP_PKEY_EC_P256 = 1, MCP_PKEY_RSA = 2 };
enum { MCP_ALG_ES256 = 1, MCP_ALG_RS256 = 2 };

#define MCP_PKEY_RSA_MIN_BITS 2048 /* RFC 7518 3.3: RS256 keys of 2048 bits or more */
#define MCP_PKEY_RSA_MAX_BITS 16384
#define MCP_PKEY_ERRLEN 256

/* A new key of that kind (bits: RSA only). 0, or -1 with a message in err. */
int mcp_pkey_generate(int kind, int bits, mcp_pkey **out, char *err, size_t errlen);

/* A key from PEM text: a private key (PKCS#8, encrypted PKCS#8 with passphrase, SEC1 "EC PRIVATE
 * KEY", PKCS#1 "RSA PRIVATE KEY") or a public key ("PUBLIC KEY"). Only EC P-256 and RSA keys of
 * MCP_PKEY_RSA_MIN_BITS or more are accepted. passphrase may be NULL (never prompts). */
int mcp_pkey_load_pem(const char *pem, size_t len, const char *passphrase, mcp_pkey **out,
                      char *err, size_t errlen);

void mcp_pkey_free(mcp_pkey *k);

int mcp_pkey_kind(const mcp_pkey *k);       /* MCP_PKEY_EC_P256 or MCP_PKEY_RSA */
int mcp_pkey_bits(const mcp_pkey *k);       /* 256, or the RSA modulus size */
int mcp_pkey_is_private(const mcp_pkey *k); /* 1 when it can sign */

/* The public numbers, big-endian without leading zeros (EC: x and y, 32 bytes each, kept as
 * they are). Point into k, valid while k lives. */
void mcp_pkey_public_ec(const mcp_pkey *k, const unsigned char **x, const unsigned char **y);
void mcp_pkey_public_rsa(const mcp_pkey *k, const unsigned char **n, size_t *nlen,
                         const unsigned char **e, size_t *elen);

/* Sign data with SHA-256: ES256 gives the 64-byte JOSE form (r||s), RS256 PKCS#1 v1.5.
 * *sig is malloc'ed (free it). 0, or -1 with a message in err. */
int mcp_pkey_sign(const mcp_pkey *k, int alg, const void *data, size_t len, unsigned char **sig,
                  size_t *siglen, char *err, size_t errlen);

/* 1 when sig is a valid alg signature of data by k, 0 when not, -1 on failure (message in err). */
int mcp_pkey_verify(const mcp_pkey *k, int alg, const void *data, size_t len,
                    const unsigned char *sig, size_t siglen, char *err, size_t errlen);

/* PEM text of the key: PKCS#8 private key (private != 0) or SubjectPublicKeyInfo. *pem is
 * malloc'ed (free it; the private form is wiped first by mcp_pkey_wipe_free). */
int mcp_pkey_pem(const mcp_pkey *k, int private_part, char **pem, size_t *len, char *err,
                 size_t errlen);

/* Zero then free a buffer that held key material. */
void mcp_pkey_wipe_free(void *p, size_t len);

#endif
