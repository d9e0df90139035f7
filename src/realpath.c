/* realpath(path) -> the absolute path with every symbolic link, "." and ".." resolved (the file
 * the kernel would open), or nil, message (a missing component, a loop, no permission). Used where
 * a path a stranger wrote must stay inside a directory (lua/mcp/config.lua: a workspace file's
 * envFile), where a lexical check is fooled by a symbolic link. */
#include "realpath.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

int mcp_realpath(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char buf[PATH_MAX]; /* no allocation that a raising lua_push* could leak */
    if (realpath(path, buf) == NULL) {
        int e = errno;
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(e));
        return 2;
    }
    lua_pushstring(L, buf);
    return 1;
}
