/* The stacks a start's children run on (spawn.c): mapped by the parent, one for the child, and
 * for a detached start a second for the grandchild. Each has a PROT_NONE guard page on the side
 * it grows toward, so that a child which overflows its stack faults there instead of writing
 * into the host's memory, which it shares until it execs (CLONE_VM). */
#ifndef MCP_SPAWN_STACK_H
#define MCP_SPAWN_STACK_H

#include <stddef.h>

/* PA-RISC is the one architecture Linux runs on whose stack grows up. */
#if defined(__hppa__)
#define MCP_STACK_GROWS_UP 1
#else
#define MCP_STACK_GROWS_UP 0
#endif

#define MCP_SPAWN_STACKS_MAX 2

typedef struct mcp_spawn_stacks {
    char *map;       /* the whole mapping: the stacks and their guards (NULL: none) */
    size_t map_size; /* its size, for munmap */
    char *stack[MCP_SPAWN_STACKS_MAX]; /* each stack's lowest byte */
    size_t size;                       /* each stack's usable bytes */
    size_t guard;                      /* the guard's bytes (one page) */
} mcp_spawn_stacks;

/* n stacks (1 or MCP_SPAWN_STACKS_MAX) of at least size bytes each (a whole number of pages),
 * each with its guard page. 0, or -1 with errno (then nothing is mapped). */
int mcp_spawn_stacks_map(mcp_spawn_stacks *s, int n, size_t size);

/* Give the mapping back (nothing when none is held); s then holds none. */
void mcp_spawn_stacks_unmap(mcp_spawn_stacks *s);

#endif
