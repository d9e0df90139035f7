#ifndef MCP_SPAWN_FAST_H
#define MCP_SPAWN_FAST_H

#include <sys/types.h>

/* Starting a server without copying the host (issue 28): fork() copies the host's page tables,
 * which costs in proportion to its resident memory (a game with 2 GB resident: 68-191 ms per
 * server). posix_spawn, which glibc runs as clone(CLONE_VM|CLONE_VFORK), costs the same whatever
 * the heap. It cannot run code of ours in the child, so a sandboxed spawn (Landlock is entered
 * in the child) keeps the fork path in child.c. */
typedef struct mcp_spawn_fast {
    const char *file;  /* resolved path of the program */
    char *const *argv; /* argv[0] = command */
    char *const *envp; /* the complete environment */
    const char *cwd;   /* NULL: inherit */
    int fd0, fd1, fd2; /* become the child's stdin, stdout, stderr; fd2 -1: inherit */
} mcp_spawn_fast;

/* Whether f can be spawned that way: glibc >= 2.34 (the descriptor sweep in the child), and none
 * of the three descriptors already at 0-2 (the host closed its own; the fork path orders that). */
int mcp_spawn_fast_fits(const mcp_spawn_fast *f);

/* Start f in a new process group with default signals, an empty mask and no descriptor above
 * 2. 0 with *pid, or an errno (exec's failure included: glibc reports it to the parent). */
int mcp_spawn_fast_start(const mcp_spawn_fast *f, pid_t *pid);

#endif
