/* Shared libraries loaded on first use. libcurl and libcrypto cost a stdio-only host several
 * MiB of resident memory just by being mapped, so the module does not link them: it opens them
 * the first time an HTTP transport, a digest or a key is needed. Each library has one table of
 * entry points (curl_api.c, crypto_api.c), filled once per process under pthread_once from the
 * library's list of file names here, and read-only afterwards: the same state the dynamic linker
 * would hold had we linked the library. A missing library or entry point is an error at that
 * first use, naming it. */
#ifndef MCP_LAZYLIB_H
#define MCP_LAZYLIB_H

#include <pthread.h>
#include <stddef.h>

typedef enum { MCP_LIBCURL, MCP_LIBCRYPTO } mcp_lazylib_id;

typedef struct mcp_lazysym {
    const char *name;
    void **slot; /* where the address goes */
} mcp_lazysym;

/* One library: what its table owner defines with static storage (MCP_LAZYLIB_INIT). */
typedef struct mcp_lazylib {
    mcp_lazylib_id id;
    const mcp_lazysym *syms; /* ends with {NULL, NULL} */
    int (*init)(char *err,
                size_t n); /* run once the symbols are there (curl_global_init), or NULL */
    void (*once_fn)(void); /* the table owner's pthread_once routine: mcp_lazylib_fill */
    pthread_once_t once;
    int rc;
    char err[256];
} mcp_lazylib;

#define MCP_LAZYLIB_INIT(id, syms, init, once_fn)                                                  \
    {                                                                                              \
        (id), (syms), (init), (once_fn), PTHREAD_ONCE_INIT, -1, ""                                 \
    }

/* The file names tried for a library, in order, ending with NULL. */
const char *const *mcp_lazylib_names(mcp_lazylib_id id);
/* The body of a library's pthread_once routine: open the first of its file names that loads,
 * resolve every symbol, then run init. */
void mcp_lazylib_fill(mcp_lazylib *lib);
/* Fills lib on the first call in the process (pthread_once). Returns 0, or -1 with a message in
 * err naming the library or the entry point that was missing. */
int mcp_lazylib_open(mcp_lazylib *lib, char *err, size_t errlen);

#endif
