/* libFuzzer target for the terminal escape of the C core (src/term_escape.c, which the lines the
 * core writes to stderr when a Lua callback raised go through), differential against
 * lua/mcp/util/term.lua's escape in an embedded Lua 5.4 with the module loaded from the tree.
 *   make fuzz FUZZ_TARGET=term / fuzz-smoke   (from the repository root)
 *
 * The input is the text. Checked for every input, newlines kept and not:
 * - the C escape equals mcp.util.term.escape's, byte for byte;
 * - it is safe for a terminal, by a check of its own: ASCII is TAB, 0x20-0x7E or (kept) LF; every
 *   other byte belongs to a well-formed UTF-8 sequence (Unicode table 3-7) of a code point from
 *   U+00A0 on that is no bidirectional formatting control;
 * - escaping it again changes nothing;
 * - mcp_term_report writes the prefix, the escape (newlines escaped) and one newline. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_embed.h"

#include "term_escape.h"

#define CHECK(cond, what) FUZZ_CHECK("term_fuzz", cond, what)

static lua_State *L;
static int escape_ref;

static void setup(void)
{
    static const struct fuzz_preload preload[] = {{NULL, NULL}};
    L = fuzz_lua_open("term_fuzz", preload, "lua/mcp/util/term.lua", "escape", &escape_ref);
}

/* The C escape of s[0..n) in a new block (*out_len bytes), which the caller frees. */
static char *c_escape(const char *s, size_t n, int keep, size_t *out_len)
{
    char *out = malloc(4 * n + MCP_TERM_UNIT_MAX);
    size_t i = 0, used = 0, took, len;
    CHECK(out != NULL, "memory");
    while (i < n) {
        took = mcp_term_escape_unit(s + i, n - i, keep, out + used, &len);
        CHECK(took >= 1 && took <= 4 && i + took <= n, "a unit takes 1 to 4 bytes of the input");
        CHECK(len >= 1 && len <= MCP_TERM_UNIT_MAX, "a unit's escape is 1 to 6 bytes");
        i += took;
        used += len;
    }
    *out_len = used;
    return out;
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (Unicode table 3-7), its code point
 * in *cp; 0 when there is none. */
static size_t well_formed(const unsigned char *s, size_t n, unsigned long *cp)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t len, k;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    *cp = s[0] & (0xFF >> (len + 1));
    for (k = 1; k < len; k++) {
        if (k > 1 && (s[k] < 0x80 || s[k] > 0xBF))
            return 0;
        *cp = *cp << 6 | (s[k] & 0x3F);
    }
    return len;
}

static int safe(const char *text, size_t n, int keep)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, len;
    unsigned long cp = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            if (!(s[i] == '\t' || (s[i] >= 0x20 && s[i] <= 0x7E) || (keep && s[i] == '\n')))
                return 0;
            i++;
            continue;
        }
        len = well_formed(s + i, n - i, &cp);
        if (len == 0 || cp < 0xA0 || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
            (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069))
            return 0;
        i += len;
    }
    return 1;
}

static void check_mode(const char *data, size_t size, int keep)
{
    size_t n, m, again_len;
    char *out = c_escape(data, size, keep, &n);
    char *again;
    const char *want;
    lua_rawgeti(L, LUA_REGISTRYINDEX, escape_ref);
    lua_pushlstring(L, data, size);
    lua_createtable(L, 0, 1);
    lua_pushboolean(L, keep);
    lua_setfield(L, -2, "keep_newlines");
    CHECK(lua_pcall(L, 2, 1, 0) == 0, "mcp.util.term.escape never raises on a string");
    want = lua_tolstring(L, -1, &m);
    CHECK(want != NULL && m == n && memcmp(want, out, n) == 0, "the C escape is the Lua one");
    lua_pop(L, 1);
    CHECK(safe(out, n, keep), "the escape is safe for a terminal");
    again = c_escape(out, n, keep, &again_len);
    CHECK(again_len == n && memcmp(again, out, n) == 0, "escaping twice is escaping once");
    free(again);
    free(out);
}

static void check_report(const char *data, size_t size)
{
    static const char prefix[] = "mcp: fuzz failed: ";
    size_t n, got_len = 0;
    char *out = c_escape(data, size, 0, &n);
    char *got = NULL;
    FILE *f = open_memstream(&got, &got_len);
    CHECK(f != NULL, "open_memstream");
    mcp_term_report(f, prefix, data, size);
    fclose(f);
    CHECK(got_len == sizeof prefix - 1 + n + 1 && memcmp(got, prefix, sizeof prefix - 1) == 0 &&
              memcmp(got + sizeof prefix - 1, out, n) == 0 && got[got_len - 1] == '\n',
          "a report is the prefix, the escape and a newline");
    free(got);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (L == NULL)
        setup();
    check_mode((const char *)data, size, 0);
    check_mode((const char *)data, size, 1);
    check_report((const char *)data, size);
    lua_gc(L, LUA_GCSTEP, 0);
    return 0;
}
