#include "transport_lua.h"

#include "lua_api.h"

#include "class_lua.h"
#include "compat.h"

/* The box at idx, whatever kind of transport it holds (NULL inside once finalized). */
static mcp_transport_box *check_box(lua_State *L, int idx)
{
    mcp_transport_box *box = lua_touserdata(L, idx);
    int ok = 0;
    if (box != NULL && lua_getmetatable(L, idx)) {
        lua_getfield(L, -1, "__mcp_transport");
        ok = lua_toboolean(L, -1);
        lua_pop(L, 2);
    }
    if (!ok)
        luaL_argerror(L, idx, "mcp transport expected");
    return box;
}

mcp_transport *mcp_transport_check(lua_State *L, int idx)
{
    mcp_transport_box *box = check_box(L, idx);
    if (box->t == NULL)
        luaL_argerror(L, idx, "transport was finalized");
    return box->t;
}

int mcp_transport_lua_start(lua_State *L)
{
    mcp_transport *t = mcp_transport_check(L, 1);
    char err[512];
    if (t->vt->start(t, err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

int mcp_transport_lua_close(lua_State *L)
{
    mcp_transport_box *box = check_box(L, 1);
    if (box->t != NULL)
        box->t->vt->close(box->t);
    return 0;
}

int mcp_transport_lua_is_open(lua_State *L)
{
    mcp_transport_box *box = check_box(L, 1);
    lua_pushboolean(L, box->t != NULL && box->t->vt->is_open(box->t));
    return 1;
}

mcp_transport_box *mcp_transport_push(lua_State *L, mcp_transport *t, const char *mt)
{
    mcp_transport_box *box = mcp_newuserdata(L, sizeof *box);
    box->t = t;
    luaL_getmetatable(L, mt);
    lua_setmetatable(L, -2);
    return box;
}

int mcp_transport_lua_gc(lua_State *L)
{
    mcp_transport_box *box = lua_touserdata(L, 1);
    if (box != NULL && box->t != NULL) {
        mcp_transport *t = box->t;
        box->t = NULL;
        t->sink = NULL; /* no Lua callbacks from a finalizer */
        t->vt->close(t);
        mcp_transport_unref(t);
    }
    return 0;
}

int mcp_transport_lua_class(lua_State *L, const char *name, const luaL_Reg *methods,
                            lua_CFunction gc)
{
    if (!mcp_class_metatable(L, name, methods, gc))
        return 0;
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "__mcp_transport");
    return 1;
}
