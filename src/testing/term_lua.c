/* Test hooks for spec/term_escape_spec.lua (built only into test builds: -DMCP_TEST_HOOKS):
 *   core._term_escape(s, keep_newlines) -> s escaped by src/term_escape.c (to compare with
 *   mcp.util.term.escape);
 *   core._term_report(prefix, s) -> what mcp_term_report writes for them (nil: s not a string);
 *   core._stderr_capture(path) -> true: the process's stderr (descriptor 2) goes to path, a new
 *   file, until core._stderr_restore(), so a spec sees what the C core writes there. */
#include "lua_api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_loop.h"
#include "term_escape.h"

#define SAVED_KEY "mcp.test_stderr_saved" /* the real stderr's descriptor, while captured */

/* (s is copied to a block of its exact length, no NUL after it: under ASan a read past its end
 * is caught, where a Lua string's terminating NUL would hide it. An escape is at most 4 times as
 * long as what it stands for: `\xHH` for a byte.) */
static int l_term_escape(lua_State *L)
{
    size_t len, i = 0, used = 0, n;
    const char *arg = luaL_checklstring(L, 1, &len);
    int keep = lua_toboolean(L, 2);
    char *s = lua_newuserdata(L, len);
    char *out = lua_newuserdata(L, 4 * len + MCP_TERM_UNIT_MAX);
    memcpy(s, arg, len);
    while (i < len) {
        i += mcp_term_escape_unit(s + i, len - i, keep, out + used, &n);
        used += n;
    }
    lua_pushlstring(L, out, used);
    return 1;
}

static int l_term_report(lua_State *L)
{
    size_t len = 0, size = 0;
    const char *prefix = luaL_checkstring(L, 1);
    const char *s = lua_type(L, 2) == LUA_TSTRING ? lua_tolstring(L, 2, &len) : NULL;
    char *text = NULL;
    FILE *f = open_memstream(&text, &size);
    if (f == NULL)
        return luaL_error(L, "open_memstream: %s", strerror(errno));
    mcp_term_report(f, prefix, s, len);
    fclose(f);
    lua_pushlstring(L, text, size);
    free(text);
    return 1;
}

static int l_stderr_capture(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd, saved;
    lua_getfield(L, LUA_REGISTRYINDEX, SAVED_KEY);
    if (!lua_isnil(L, -1))
        return luaL_error(L, "stderr is captured already");
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return luaL_error(L, "%s: %s", path, strerror(errno));
    fflush(stderr);
    saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (saved < 0 || dup2(fd, 2) < 0) {
        int e = errno;
        close(fd);
        if (saved >= 0)
            close(saved);
        return luaL_error(L, "redirecting stderr: %s", strerror(e));
    }
    close(fd);
    lua_pushinteger(L, saved);
    lua_setfield(L, LUA_REGISTRYINDEX, SAVED_KEY);
    lua_pushboolean(L, 1);
    return 1;
}

static int l_stderr_restore(lua_State *L)
{
    int saved;
    lua_getfield(L, LUA_REGISTRYINDEX, SAVED_KEY);
    if (lua_isnil(L, -1))
        return 0;
    saved = (int)lua_tointeger(L, -1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, SAVED_KEY);
    return 0;
}

void mcp_term_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_term_escape);
    lua_setfield(L, -2, "_term_escape");
    lua_pushcfunction(L, l_term_report);
    lua_setfield(L, -2, "_term_report");
    lua_pushcfunction(L, l_stderr_capture);
    lua_setfield(L, -2, "_stderr_capture");
    lua_pushcfunction(L, l_stderr_restore);
    lua_setfield(L, -2, "_stderr_restore");
}
