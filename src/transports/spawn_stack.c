/* The children's stacks with their guard pages (spawn_stack.h). */
#include "spawn_stack.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_STACK
#define MAP_STACK 0
#endif

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* One slot per stack, each the stack and its guard: the guard below the stack where it grows
 * down (its lowest page), above it where it grows up. */
int mcp_spawn_stacks_map(mcp_spawn_stacks *s, int n, size_t size)
{
    size_t page = page_size(), slot;
    int i;
    memset(s, 0, sizeof *s);
    if (n < 1 || n > MCP_SPAWN_STACKS_MAX || size == 0 || size > ((size_t)-1) / 4 - page) {
        errno = EINVAL;
        return -1;
    }
    s->size = (size + page - 1) / page * page;
    s->guard = page;
    slot = s->guard + s->size;
    s->map_size = (size_t)n * slot;
    s->map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return -1;
    }
    for (i = 0; i < n; i++) {
        char *at = s->map + (size_t)i * slot;
        char *guard = MCP_STACK_GROWS_UP ? at + s->size : at;
        s->stack[i] = MCP_STACK_GROWS_UP ? at : at + s->guard;
        if (mprotect(guard, s->guard, PROT_NONE) != 0) {
            int e = errno;
            mcp_spawn_stacks_unmap(s);
            errno = e;
            return -1;
        }
    }
    return 0;
}

void mcp_spawn_stacks_unmap(mcp_spawn_stacks *s)
{
    if (s->map != NULL)
        munmap(s->map, s->map_size);
    memset(s, 0, sizeof *s);
}
