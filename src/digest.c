/* SHA-256 and random bytes (OpenSSL libcrypto) and base64 for the Lua layer.
 *
 * sha256(s)               -> the 32-byte digest of s
 * random_bytes(n)         -> n bytes from libcrypto's CSPRNG (RAND_bytes), 1 <= n <= 4096
 * base64_encode(s, v)     -> v "std" (default): RFC 4648 alphabet with '=' padding;
 *                            v "url": the URL-safe alphabet, no padding
 * base64_decode(s, v)     -> bytes, or nil and "invalid base64 at byte N: ..." (N 0-based)
 *                            v "std" (default) accepts + and /, "url" accepts - and _, "any" both.
 *                            Padding is optional, but when present it must be complete and last;
 *                            CR and LF are skipped (MIME line breaks); anything else is an error. */
#include <string.h>

#include "crypto_api.h"

#include "digest.h"

int mcp_digest_sha256(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    char why[256];
    if (mcp_crypto_load(why, sizeof why) != 0)
        return luaL_error(L, "mcp: SHA-256 needs OpenSSL's libcrypto: %s", why);
    if (EVP_Digest(s, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
        return luaL_error(L, "mcp: SHA-256 failed (libcrypto)");
    lua_pushlstring(L, (const char *)md, len);
    return 1;
}

int mcp_digest_random_bytes(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    unsigned char *out;
    luaL_argcheck(L, n >= 1 && n <= 4096, 1, "expected 1 to 4096 bytes");
    char why[256];
    if (mcp_crypto_load(why, sizeof why) != 0)
        return luaL_error(L, "mcp: random bytes need OpenSSL's libcrypto: %s", why);
    out = mcp_newuserdata(L, (size_t)n); /* collected: no leak if pushing raises */
    if (RAND_bytes(out, (int)n) != 1)
        return luaL_error(L, "mcp: libcrypto's RAND_bytes failed");
    lua_pushlstring(L, (const char *)out, (size_t)n);
    memset(out, 0, (size_t)n);
    return 1;
}

static const char STD_ALPHABET[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char URL_ALPHABET[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

enum { V_STD = 1, V_URL = 2 };

static int variant(lua_State *L, int idx, int allow_any)
{
    const char *v = luaL_optstring(L, idx, "std");
    if (strcmp(v, "std") == 0)
        return V_STD;
    if (strcmp(v, "url") == 0)
        return V_URL;
    if (allow_any && strcmp(v, "any") == 0)
        return V_STD | V_URL;
    return luaL_argerror(
        L, idx, allow_any ? "expected \"std\", \"url\" or \"any\"" : "expected \"std\" or \"url\"");
}

int mcp_digest_base64_encode(lua_State *L)
{
    size_t n, i, o = 0;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    int v = variant(L, 2, 0);
    const char *abc = v == V_URL ? URL_ALPHABET : STD_ALPHABET;
    size_t cap = (n / 3 + 1) * 4;
    char *out = mcp_newuserdata(L, cap > 0 ? cap : 1); /* collected: no leak if pushing raises */
    for (i = 0; i + 2 < n; i += 3) {
        unsigned long w = ((unsigned long)s[i] << 16) | ((unsigned long)s[i + 1] << 8) | s[i + 2];
        out[o++] = abc[(w >> 18) & 63];
        out[o++] = abc[(w >> 12) & 63];
        out[o++] = abc[(w >> 6) & 63];
        out[o++] = abc[w & 63];
    }
    if (i < n) {
        unsigned long w = (unsigned long)s[i] << 16;
        if (i + 1 < n)
            w |= (unsigned long)s[i + 1] << 8;
        out[o++] = abc[(w >> 18) & 63];
        out[o++] = abc[(w >> 12) & 63];
        if (i + 1 < n)
            out[o++] = abc[(w >> 6) & 63];
        else if (v == V_STD)
            out[o++] = '=';
        if (v == V_STD)
            out[o++] = '=';
    }
    lua_pushlstring(L, out, o);
    return 1;
}

static int value_of(unsigned char c, int v)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if ((v & V_STD) && c == '+')
        return 62;
    if ((v & V_STD) && c == '/')
        return 63;
    if ((v & V_URL) && c == '-')
        return 62;
    if ((v & V_URL) && c == '_')
        return 63;
    return -1;
}

static int decode_error(lua_State *L, size_t at, const char *what)
{
    lua_pushnil(L);
    lua_pushfstring(L, "invalid base64 at byte %d: %s", (int)at, what);
    return 2;
}

int mcp_digest_base64_decode(lua_State *L)
{
    size_t n, i, o = 0, pad_at = 0;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    int v = variant(L, 2, 1);
    unsigned long acc = 0;
    int nacc = 0, pads = 0;
    char *out = mcp_newuserdata(L, n / 4 * 3 + 3);
    for (i = 0; i < n; i++) {
        unsigned char c = s[i];
        int d;
        if (c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            if (pads == 0)
                pad_at = i;
            pads++;
            continue;
        }
        if (pads > 0)
            return decode_error(L, i, "data after padding");
        d = value_of(c, v);
        if (d < 0)
            return decode_error(L, i, "not a base64 character");
        acc = (acc << 6) | (unsigned long)d;
        if (++nacc == 4) {
            out[o++] = (char)((acc >> 16) & 0xff);
            out[o++] = (char)((acc >> 8) & 0xff);
            out[o++] = (char)(acc & 0xff);
            acc = 0;
            nacc = 0;
        }
    }
    if (nacc == 1)
        return decode_error(L, n, "truncated data (a lone final character)");
    if (pads > 0 && (nacc == 0 || nacc + pads != 4))
        return decode_error(L, pad_at, "wrong padding");
    if (nacc == 2) {
        out[o++] = (char)((acc >> 4) & 0xff);
    } else if (nacc == 3) {
        out[o++] = (char)((acc >> 10) & 0xff);
        out[o++] = (char)((acc >> 2) & 0xff);
    }
    lua_pushlstring(L, out, o);
    return 1;
}
