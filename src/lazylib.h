/* Shared libraries loaded on first use. libcurl and libcrypto cost a stdio-only host several
 * MiB of resident memory just by being mapped, so the module does not link them: it opens them
 * the first time an HTTP transport or a digest is needed. Each library's entry points form a
 * table filled once per process (pthread_once) and read-only afterwards: the same state the
 * dynamic linker would hold had we linked the library. */
#ifndef MCP_LAZYLIB_H
#define MCP_LAZYLIB_H

#include <stddef.h>

typedef struct mcp_lazysym {
    const char *name;
    void **slot; /* where the address goes */
} mcp_lazysym;

/* Open the first of names that loads, and resolve every symbol. Returns 0, or -1 with a
 * message in err naming what was missing. */
int mcp_lazylib_load(const char *const *names, const mcp_lazysym *syms, char *err, size_t errlen);

#endif
