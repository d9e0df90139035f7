/* NULL-ended vectors of strings copied into blocks their owner frees whole (a helper thread's
 * own copy of what it runs: spawn_job.c, run_job.c). No Lua. */
#ifndef MCP_STRVEC_H
#define MCP_STRVEC_H

#include <stddef.h>

/* The bytes of v's strings with their NULs; *count: how many (v may be NULL: none). */
size_t mcp_strvec_size(char *const *v, size_t *count);
/* v's strings copied to *at (advanced past them), a NULL-ended vector of them at slots (room for
 * count + 1); returns slots. */
char **mcp_strvec_copy(char *const *v, char **slots, char **at);
/* A NULL-ended copy of v in one block (free() frees it all), or NULL when out of memory. */
char **mcp_strvec_dup(char *const *v);

#endif
