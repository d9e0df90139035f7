/* The C core's last resort when a Lua callback raised (a timer, a session handler, a transport's
 * callbacks, the redirect listener): one line on stderr, prefix then the error escaped for the
 * terminal (term_escape.h; the error may quote a server's text). The error stays on the stack. */
#ifndef MCP_TERM_ESCAPE_LUA_H
#define MCP_TERM_ESCAPE_LUA_H

#include <stdio.h>

#include "lua_api.h"
#include "term_escape.h"

static inline void mcp_term_report_lua(lua_State *L, const char *prefix)
{
    size_t len = 0;
    const char *msg = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER
                          ? lua_tolstring(L, -1, &len)
                          : NULL;
    mcp_term_report(stderr, prefix, msg, len);
}

#endif
