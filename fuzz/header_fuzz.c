/* libFuzzer target for header value encoding (lua/mcp/tools/headers.lua encode_header_value,
 * the x-mcp-header rule), run in an embedded Lua 5.4 with the module loaded from the tree.
 *   make fuzz FUZZ_TARGET=header / fuzz-smoke   (from the repository root)
 *
 * The input is the value. Checked for every input:
 * - the encoded value is a valid header value: only TAB and 0x20-0x7E, no leading or trailing
 *   space or TAB, so it can never split or smuggle a header (no CR, LF or NUL);
 * - it is the value itself, or "=?base64?<b64>?=" whose payload decodes (src/digest.c's decoder,
 *   independent of the Lua encoder's caller) back to exactly the input;
 * - a value that is already a valid plain header value and does not look like an encoded one is
 *   sent unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_embed.h"

#include "digest.h"

#define CHECK(cond, what) FUZZ_CHECK("header_fuzz", cond, what)

static lua_State *L;
static int encode_ref;

static int core_module(lua_State *S)
{
    lua_newtable(S);
    lua_pushcfunction(S, mcp_digest_base64_encode);
    lua_setfield(S, -2, "base64_encode");
    return 1;
}

static void setup(void)
{
    static const struct fuzz_preload preload[] = {
        {"mcp.core", core_module}, {"mcp.errors", NULL}, {"mcp.schema", NULL}, {NULL, NULL}};
    L = fuzz_lua_open("header_fuzz", preload, "lua/mcp/tools/headers.lua", "encode_header_value",
                      &encode_ref);
}

static int plain(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != '\t' && (s[i] < 0x20 || s[i] > 0x7e))
            return 0;
    return n == 0 || (s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' && s[n - 1] != '\t');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *out;
    size_t n;
    int looks_encoded =
        size >= 11 && memcmp(data, "=?base64?", 9) == 0 && memcmp(data + size - 2, "?=", 2) == 0;
    if (L == NULL)
        setup();
    lua_rawgeti(L, LUA_REGISTRYINDEX, encode_ref);
    lua_pushlstring(L, (const char *)data, size);
    CHECK(lua_pcall(L, 1, 1, 0) == 0, "encode_header_value never raises on a string");
    out = lua_tolstring(L, -1, &n);
    CHECK(out != NULL, "a string");
    CHECK(plain(out, n), "a valid header value");
    if (n == size && memcmp(out, data, size) == 0) {
        CHECK(plain((const char *)data, size) && !looks_encoded, "sent as is only when plain");
    } else {
        CHECK(n >= 11 && memcmp(out, "=?base64?", 9) == 0 && memcmp(out + n - 2, "?=", 2) == 0,
              "otherwise encoded");
        lua_pushcfunction(L, mcp_digest_base64_decode);
        lua_pushlstring(L, out + 9, n - 11);
        CHECK(lua_pcall(L, 1, 1, 0) == 0, "the decoder runs");
        {
            size_t m;
            const char *back = lua_tolstring(L, -1, &m);
            CHECK(back != NULL && m == size && memcmp(back, data, size) == 0,
                  "the payload decodes to the input");
        }
        lua_pop(L, 1);
        CHECK(!plain((const char *)data, size) || looks_encoded, "a plain value is not encoded");
    }
    lua_pop(L, 1);
    return 0;
}
