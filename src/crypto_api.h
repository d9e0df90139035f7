/* OpenSSL's libcrypto as digest.c and pkey.c see it: its own headers, or, when built with
 * MCP_OWN_CRYPTO_ABI (`make nvim` on a machine without OpenSSL's development headers), lua-mcp's
 * own declarations (abi/crypto.h). Either way libcrypto is opened at run time (lazylib.h). */
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

#endif
