/* Test hook (built only into test builds: -DMCP_TEST_HOOKS, see Makefile):
 *   core._lazylib_names("curl" | "crypto") -> the file names src/lazylib.c tries, in order.
 * The macOS names are never loaded on Linux; the spec reads the list instead. */
#include "lua_api.h"

#include <string.h>

#include "compat.h"
#include "core_loop.h"
#include "lazylib.h"

static int l_lazylib_names(lua_State *L)
{
    const char *which = luaL_checkstring(L, 1);
    const char *const *n;
    int i = 0;
    if (strcmp(which, "curl") != 0 && strcmp(which, "crypto") != 0)
        return luaL_argerror(L, 1, "\"curl\" or \"crypto\" expected");
    n = mcp_lazylib_names(strcmp(which, "curl") == 0 ? MCP_LIBCURL : MCP_LIBCRYPTO);
    lua_newtable(L);
    for (; *n != NULL; n++) {
        lua_pushstring(L, *n);
        lua_rawseti(L, -2, ++i);
    }
    return 1;
}

void mcp_lazylib_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_lazylib_names);
    lua_setfield(L, -2, "_lazylib_names");
}
