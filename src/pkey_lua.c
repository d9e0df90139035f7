/* Lua binding of pkey.c: key objects for JWS (the Lua layer is lua/mcp/jose.lua).
 *
 * core.pkey_generate("EC" | "RSA" [, bits])  -> key            (EC: P-256; RSA: bits, default 2048)
 * core.pkey_load(pem [, passphrase])         -> key | nil, msg  (private or public PEM key)
 * core.is_pkey(v)                            -> true for a key
 * key:kind()          -> "EC" | "RSA"
 * key:bits()          -> 256, or the RSA modulus size
 * key:is_private()    -> boolean
 * key:public_numbers() -> { kty = "EC", crv = "P-256", x = bytes, y = bytes } | { kty = "RSA", n, e }
 * key:sign(alg, data) -> signature bytes ("ES256": 64-byte r||s; "RS256": PKCS#1 v1.5)
 * key:verify(alg, data, sig) -> boolean
 * key:pem([private])  -> PEM text (PKCS#8 private key, or the public key)
 * tostring(key)       -> "mcp.pkey (EC P-256, private)": never key material.
 *
 * Misuse raises (wrong argument, an algorithm that does not fit the key, a public key asked to
 * sign); a PEM that cannot be read returns nil and a message. */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "class_lua.h"
#include "compat.h"
#include "pkey.h"

#define PKEY_MT "mcp.pkey"
#define BUF_MT "mcp.pkey.buffer"

typedef struct pkey_box {
    mcp_pkey *k;
} pkey_box;

/* A malloc'ed buffer owned by a userdata while its bytes are copied into a Lua string, so a
 * raising push (out of memory) leaks nothing: the collector wipes and frees it. */
typedef struct buf_guard {
    void *p;
    size_t len;
} buf_guard;

static buf_guard *new_guard(lua_State *L)
{
    buf_guard *g = mcp_newuserdata(L, sizeof *g);
    g->p = NULL;
    g->len = 0;
    luaL_getmetatable(L, BUF_MT);
    lua_setmetatable(L, -2);
    return g;
}

static void guard_release(buf_guard *g)
{
    mcp_pkey_wipe_free(g->p, g->len);
    g->p = NULL;
    g->len = 0;
}

static int l_guard_gc(lua_State *L)
{
    guard_release(luaL_checkudata(L, 1, BUF_MT));
    return 0;
}

static mcp_pkey *check_key(lua_State *L)
{
    pkey_box *box = luaL_checkudata(L, 1, PKEY_MT);
    if (box->k == NULL)
        luaL_error(L, "mcp: the key is gone");
    return box->k;
}

/* A box first (so the key is collected whatever happens next), then the key. */
static pkey_box *new_box(lua_State *L)
{
    pkey_box *box = mcp_newuserdata(L, sizeof *box);
    box->k = NULL;
    luaL_getmetatable(L, PKEY_MT);
    lua_setmetatable(L, -2);
    return box;
}

static int l_generate(lua_State *L)
{
    static const char *const kinds[] = {"EC", "RSA", NULL};
    int kind = luaL_checkoption(L, 1, NULL, kinds) == 0 ? MCP_PKEY_EC_P256 : MCP_PKEY_RSA;
    lua_Integer bits = luaL_optinteger(L, 2, 2048);
    char err[MCP_PKEY_ERRLEN];
    pkey_box *box;
    if (kind == MCP_PKEY_RSA && (bits < MCP_PKEY_RSA_MIN_BITS || bits > MCP_PKEY_RSA_MAX_BITS))
        return luaL_argerror(L, 2, "RSA keys have 2048 to 16384 bits");
    box = new_box(L);
    if (mcp_pkey_generate(kind, (int)bits, &box->k, err, sizeof err) != 0)
        return luaL_error(L, "mcp: %s", err);
    return 1;
}

static int l_load(lua_State *L)
{
    size_t len;
    const char *pem = luaL_checklstring(L, 1, &len);
    const char *pass = luaL_optstring(L, 2, NULL);
    char err[MCP_PKEY_ERRLEN];
    pkey_box *box = new_box(L);
    if (mcp_pkey_load_pem(pem, len, pass, &box->k, err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

static int l_is_pkey(lua_State *L)
{
    lua_pushboolean(L, mcp_testudata(L, 1, PKEY_MT) != NULL);
    return 1;
}

static int check_alg(lua_State *L, int idx)
{
    static const char *const algs[] = {"ES256", "RS256", NULL};
    return luaL_checkoption(L, idx, NULL, algs) == 0 ? MCP_ALG_ES256 : MCP_ALG_RS256;
}

static int l_kind(lua_State *L)
{
    lua_pushstring(L, mcp_pkey_kind(check_key(L)) == MCP_PKEY_RSA ? "RSA" : "EC");
    return 1;
}

static int l_bits(lua_State *L)
{
    lua_pushinteger(L, mcp_pkey_bits(check_key(L)));
    return 1;
}

static int l_is_private(lua_State *L)
{
    lua_pushboolean(L, mcp_pkey_is_private(check_key(L)));
    return 1;
}

static int l_public_numbers(lua_State *L)
{
    mcp_pkey *k = check_key(L);
    lua_createtable(L, 0, 4);
    if (mcp_pkey_kind(k) == MCP_PKEY_EC_P256) {
        const unsigned char *x, *y;
        mcp_pkey_public_ec(k, &x, &y);
        lua_pushliteral(L, "EC");
        lua_setfield(L, -2, "kty");
        lua_pushliteral(L, "P-256");
        lua_setfield(L, -2, "crv");
        lua_pushlstring(L, (const char *)x, 32);
        lua_setfield(L, -2, "x");
        lua_pushlstring(L, (const char *)y, 32);
        lua_setfield(L, -2, "y");
    } else {
        const unsigned char *n, *e;
        size_t nlen, elen;
        mcp_pkey_public_rsa(k, &n, &nlen, &e, &elen);
        lua_pushliteral(L, "RSA");
        lua_setfield(L, -2, "kty");
        lua_pushlstring(L, (const char *)n, nlen);
        lua_setfield(L, -2, "n");
        lua_pushlstring(L, (const char *)e, elen);
        lua_setfield(L, -2, "e");
    }
    return 1;
}

static int l_sign(lua_State *L)
{
    mcp_pkey *k = check_key(L);
    int alg = check_alg(L, 2);
    size_t len;
    const char *data = luaL_checklstring(L, 3, &len);
    buf_guard *g = new_guard(L);
    unsigned char *sig = NULL;
    char err[MCP_PKEY_ERRLEN];
    if (mcp_pkey_sign(k, alg, data, len, &sig, &g->len, err, sizeof err) != 0)
        return luaL_error(L, "mcp: %s", err);
    g->p = sig;
    lua_pushlstring(L, (const char *)sig, g->len);
    guard_release(g);
    return 1;
}

static int l_verify(lua_State *L)
{
    mcp_pkey *k = check_key(L);
    int alg = check_alg(L, 2), rc;
    size_t len, siglen;
    const char *data = luaL_checklstring(L, 3, &len);
    const char *sig = luaL_checklstring(L, 4, &siglen);
    char err[MCP_PKEY_ERRLEN];
    rc = mcp_pkey_verify(k, alg, data, len, (const unsigned char *)sig, siglen, err, sizeof err);
    if (rc < 0)
        return luaL_error(L, "mcp: %s", err);
    lua_pushboolean(L, rc);
    return 1;
}

static int l_pem(lua_State *L)
{
    mcp_pkey *k = check_key(L);
    int private_part = lua_toboolean(L, 2);
    buf_guard *g = new_guard(L);
    char *pem = NULL;
    char err[MCP_PKEY_ERRLEN];
    if (mcp_pkey_pem(k, private_part, &pem, &g->len, err, sizeof err) != 0)
        return luaL_error(L, "mcp: %s", err);
    g->p = pem;
    lua_pushlstring(L, pem, g->len);
    guard_release(g);
    return 1;
}

static int l_tostring(lua_State *L)
{
    pkey_box *box = luaL_checkudata(L, 1, PKEY_MT);
    if (box->k == NULL) {
        lua_pushliteral(L, "mcp.pkey (gone)");
    } else if (mcp_pkey_kind(box->k) == MCP_PKEY_RSA) {
        lua_pushfstring(L, "mcp.pkey (RSA %d bits, %s)", mcp_pkey_bits(box->k),
                        mcp_pkey_is_private(box->k) ? "private" : "public");
    } else {
        lua_pushfstring(L, "mcp.pkey (EC P-256, %s)",
                        mcp_pkey_is_private(box->k) ? "private" : "public");
    }
    return 1;
}

static int l_gc(lua_State *L)
{
    pkey_box *box = luaL_checkudata(L, 1, PKEY_MT);
    mcp_pkey_free(box->k);
    box->k = NULL;
    return 0;
}

void mcp_pkey_lua_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"kind", l_kind},
        {"bits", l_bits},
        {"is_private", l_is_private},
        {"public_numbers", l_public_numbers},
        {"sign", l_sign},
        {"verify", l_verify},
        {"pem", l_pem},
        {NULL, NULL},
    };
    if (mcp_class_metatable(L, PKEY_MT, methods, l_gc)) {
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushliteral(L, "mcp.pkey");
        lua_setfield(L, -2, "__name");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, BUF_MT)) {
        lua_pushcfunction(L, l_guard_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_generate);
    lua_setfield(L, -2, "pkey_generate");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, -2, "pkey_load");
    lua_pushcfunction(L, l_is_pkey);
    lua_setfield(L, -2, "is_pkey");
}
