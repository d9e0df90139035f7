/* Arrays of strings in a Lua config table (strv_lua.h). */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "compat.h"
#include "strv_lua.h"

void mcp_strv_check(lua_State *L, int t, const char *field, const char *label, int nonempty)
{
    size_t n, i;
    lua_getfield(L, t, field);
    if (!lua_isnil(L, -1) && !lua_istable(L, -1))
        luaL_error(L, "mcp.stdio_transport: '%s' must be an array of strings", label);
    n = lua_istable(L, -1) ? mcp_rawlen(L, -1) : 0;
    for (i = 1; i <= n; i++) {
        size_t len = 0;
        const char *s;
        lua_rawgeti(L, -1, (int)i);
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (s == NULL || (nonempty && len == 0) || memchr(s, '\0', len) != NULL)
            luaL_error(L, "mcp.stdio_transport: %s[%d] must be a %sstring without NUL bytes", label,
                       (int)i, nonempty ? "non-empty " : "");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Free the first n strings of out, then out. */
static void free_first(char **out, size_t n)
{
    while (n > 0)
        free(out[--n]);
    free(out);
}

char **mcp_strv_copy(lua_State *L, int t, const char *field, const char *first)
{
    size_t n, i, k = 0;
    char **out;
    lua_getfield(L, t, field);
    n = lua_istable(L, -1) ? mcp_rawlen(L, -1) : 0;
    out = calloc(n + 2, sizeof *out);
    if (out != NULL && first != NULL && (out[k++] = strdup(first)) == NULL) {
        free(out);
        out = NULL;
    }
    for (i = 1; out != NULL && i <= n; i++) {
        lua_rawgeti(L, -1, (int)i);
        out[k] = strdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        if (out[k++] == NULL) {
            free_first(out, k);
            out = NULL;
        }
    }
    lua_pop(L, 1);
    return out;
}
