/* Digest and base64 helpers of mcp.core: SHA-256 from OpenSSL's libcrypto, strict base64 codecs. */
#ifndef MCP_DIGEST_H
#define MCP_DIGEST_H

#include "compat.h"

int mcp_digest_sha256(lua_State *L);        /* sha256(bytes) -> 32 raw bytes */
int mcp_digest_random_bytes(lua_State *L);  /* random_bytes(n) -> n bytes (RAND_bytes) */
int mcp_digest_base64_encode(lua_State *L); /* base64_encode(bytes [, "std"|"url"]) -> text */
int mcp_digest_base64_decode(
    lua_State *L); /* base64_decode(text [, "std"|"url"|"any"]) -> bytes | nil, msg */

#endif
