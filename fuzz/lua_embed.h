/* The embedded Lua 5.4 state of the fuzz targets that run a module of the tree (header_fuzz.c,
 * wwwauth_fuzz.c, term_fuzz.c): a fresh state whose modules come from lua/ (run from the
 * repository root), with the modules the tested one requires but the fuzz target does not need
 * replaced. */
#ifndef MCP_FUZZ_LUA_EMBED_H
#define MCP_FUZZ_LUA_EMBED_H

#include <stdio.h>
#include <stdlib.h>

#include <lua.h>

/* A property every input must have; a failed one aborts (libFuzzer keeps the input). */
#define FUZZ_CHECK(who, cond, what)                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s: check failed: %s (%s)\n", who, what, #cond);                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* One entry of package.preload; open NULL preloads an empty table. The list ends at name NULL. */
struct fuzz_preload {
    const char *name;
    lua_CFunction open;
};

/* Opens a state with the standard libraries, package.path "lua/?.lua", no C modules and the
 * given preloads, runs file (a module of the tree) and returns a registry reference to the
 * function `field` of the table it returns, in *out. Aborts with a message naming who (the fuzz
 * target) on any failure. */
lua_State *fuzz_lua_open(const char *who, const struct fuzz_preload *preload, const char *file,
                         const char *field, int *out);

#endif
