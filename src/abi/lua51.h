/* lua-mcp's own declarations of the part of the Lua 5.1 C API that the core uses, written from
 * the Lua 5.1 Reference Manual (section 3, "The Application Program Interface", and section 4,
 * "The Auxiliary Library"). LuaJIT 2.1 and PUC Lua 5.1 both export this ABI, so a core built on
 * these declarations loads into either. See README.md in this directory; `make check-abi`
 * compares every value and layout here with the installed lua.h and lauxlib.h.
 *
 * Only the prototypes are read by the proto-check (MCP_ABI_PROTOTYPES_ONLY): everything else is
 * then taken from the real headers, so each prototype below is checked against the real one. */
#ifndef MCP_ABI_LUA51_H
#define MCP_ABI_LUA51_H

#include <stddef.h>

#ifndef MCP_ABI_PROTOTYPES_ONLY

/* ---- version ---- */
#define LUA_VERSION "Lua 5.1"
#define LUA_VERSION_NUM 501

/* ---- types ---- */
typedef struct lua_State lua_State; /* opaque: only ever handled through a pointer */
typedef int (*lua_CFunction)(lua_State *L);
typedef double lua_Number;     /* LUA_NUMBER in the default configuration */
typedef ptrdiff_t lua_Integer; /* LUA_INTEGER in the default configuration */
typedef void *(*lua_Alloc)(void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct luaL_Reg {
    const char *name;
    lua_CFunction func;
} luaL_Reg;

/* ---- pseudo-index, type tags, references ---- */
#define LUA_REGISTRYINDEX (-10000)
#define LUA_GLOBALSINDEX (-10002)

#define LUA_TNIL 0
#define LUA_TBOOLEAN 1
#define LUA_TLIGHTUSERDATA 2
#define LUA_TNUMBER 3
#define LUA_TSTRING 4
#define LUA_TTABLE 5
#define LUA_TFUNCTION 6

#define LUA_NOREF (-2) /* luaL_ref's "no reference" */

/* ---- what the manual documents as macros, written here over the functions below ---- */
#define lua_pop(L, n) lua_settop((L), -(n)-1)
#define lua_upvalueindex(i) (LUA_GLOBALSINDEX - (i))
#define lua_newtable(L) lua_createtable((L), 0, 0)
#define lua_pushcfunction(L, f) lua_pushcclosure((L), (f), 0)
#define lua_pushliteral(L, s) lua_pushlstring((L), "" s, sizeof(s) - 1)
#define lua_tostring(L, i) lua_tolstring((L), (i), NULL)
#define lua_isnil(L, n) (lua_type((L), (n)) == LUA_TNIL)
#define lua_isboolean(L, n) (lua_type((L), (n)) == LUA_TBOOLEAN)
#define lua_islightuserdata(L, n) (lua_type((L), (n)) == LUA_TLIGHTUSERDATA)
#define lua_istable(L, n) (lua_type((L), (n)) == LUA_TTABLE)
#define lua_isfunction(L, n) (lua_type((L), (n)) == LUA_TFUNCTION)
#define lua_isnoneornil(L, n) (lua_type((L), (n)) <= LUA_TNIL) /* LUA_TNONE is -1 */

#define luaL_checkstring(L, n) luaL_checklstring((L), (n), NULL)
#define luaL_optstring(L, n, d) luaL_optlstring((L), (n), (d), NULL)
#define luaL_typename(L, i) lua_typename((L), lua_type((L), (i)))
#define luaL_getmetatable(L, name) lua_getfield((L), LUA_REGISTRYINDEX, (name))
#define luaL_argcheck(L, cond, n, msg) ((void)((cond) || luaL_argerror((L), (n), (msg))))

#endif /* MCP_ABI_PROTOTYPES_ONLY */

/* ---- the stack ---- */
int lua_gettop(lua_State *L);
void lua_settop(lua_State *L, int idx);
void lua_pushvalue(lua_State *L, int idx);
void lua_remove(lua_State *L, int idx);
void lua_insert(lua_State *L, int idx);
void lua_replace(lua_State *L, int idx);
int lua_checkstack(lua_State *L, int extra);

/* ---- reading values ---- */
int lua_type(lua_State *L, int idx);
const char *lua_typename(lua_State *L, int tp);
int lua_isstring(lua_State *L, int idx);
int lua_rawequal(lua_State *L, int idx1, int idx2);
lua_Number lua_tonumber(lua_State *L, int idx);
lua_Integer lua_tointeger(lua_State *L, int idx);
int lua_toboolean(lua_State *L, int idx);
const char *lua_tolstring(lua_State *L, int idx, size_t *len);
size_t lua_objlen(lua_State *L, int idx);
void *lua_touserdata(lua_State *L, int idx);

/* ---- pushing values ---- */
void lua_pushnil(lua_State *L);
void lua_pushnumber(lua_State *L, lua_Number n);
void lua_pushinteger(lua_State *L, lua_Integer n);
void lua_pushlstring(lua_State *L, const char *s, size_t len);
void lua_pushstring(lua_State *L, const char *s);
const char *lua_pushfstring(lua_State *L, const char *fmt, ...);
void lua_pushcclosure(lua_State *L, lua_CFunction fn, int n);
void lua_pushboolean(lua_State *L, int b);
void lua_pushlightuserdata(lua_State *L, void *p);

/* ---- tables, userdata, metatables, environments ---- */
void lua_getfield(lua_State *L, int idx, const char *k);
void lua_rawget(lua_State *L, int idx);
void lua_rawgeti(lua_State *L, int idx, int n);
void lua_createtable(lua_State *L, int narr, int nrec);
void *lua_newuserdata(lua_State *L, size_t size);
int lua_getmetatable(lua_State *L, int objindex);
void lua_getfenv(lua_State *L, int idx);
void lua_setfield(lua_State *L, int idx, const char *k);
void lua_rawset(lua_State *L, int idx);
void lua_rawseti(lua_State *L, int idx, int n);
int lua_setmetatable(lua_State *L, int objindex);
int lua_setfenv(lua_State *L, int idx);
int lua_next(lua_State *L, int idx);

/* ---- calls and strings ---- */
int lua_pcall(lua_State *L, int nargs, int nresults, int errfunc);
int lua_error(lua_State *L);

/* ---- the garbage collector (lua_gc's options) ---- */
#define LUA_GCSTOP 0
#define LUA_GCRESTART 1
#define LUA_GCCOLLECT 2
#define LUA_GCCOUNT 3
int lua_gc(lua_State *L, int what, int data);
lua_Alloc lua_getallocf(lua_State *L, void **ud);
void lua_setallocf(lua_State *L, lua_Alloc f, void *ud);
void lua_concat(lua_State *L, int n);

/* ---- the auxiliary library ---- */
int luaL_argerror(lua_State *L, int narg, const char *extramsg);
void luaL_checkany(lua_State *L, int narg);
void luaL_checktype(lua_State *L, int narg, int t);
void luaL_checkstack(lua_State *L, int sz, const char *msg);
const char *luaL_checklstring(lua_State *L, int narg, size_t *l);
const char *luaL_optlstring(lua_State *L, int narg, const char *def, size_t *l);
lua_Number luaL_checknumber(lua_State *L, int narg);
lua_Number luaL_optnumber(lua_State *L, int narg, lua_Number def);
lua_Integer luaL_checkinteger(lua_State *L, int narg);
lua_Integer luaL_optinteger(lua_State *L, int narg, lua_Integer def);
int luaL_checkoption(lua_State *L, int narg, const char *def, const char *const lst[]);
int luaL_newmetatable(lua_State *L, const char *tname);
void *luaL_checkudata(lua_State *L, int ud, const char *tname);
int luaL_error(lua_State *L, const char *fmt, ...);
int luaL_ref(lua_State *L, int t);
void luaL_unref(lua_State *L, int t, int ref);

#endif
