/* Starting a program without copying the host (issue 28). fork() copies the host's page tables,
 * a cost that grows with its resident memory (a game with 2 GB resident: 68-191 ms per server).
 * On Linux a process is started with clone(CLONE_VM | CLONE_VFORK) on a small stack of its own:
 * the child shares the host's memory until it calls execve, and the host's thread waits for that,
 * so the start costs the same whatever the heap. The child runs only system calls that take no
 * lock and allocate nothing (spawn_child.c); everything they need (the resolved program path,
 * argv, the environment, the sandbox's ruleset, the limit to restore) is prepared here before.
 * A failing step reaches the parent through a close-on-exec pipe (which step and its errno).
 * Elsewhere (macOS, the BSDs) the same child code runs after fork(). */
#ifndef MCP_SPAWN_H
#define MCP_SPAWN_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef struct mcp_spawn_plan {
    const char *file;            /* the program's path, resolved (mcp_spawn_resolve) */
    char *const *argv;           /* argv[0] = the command as given */
    char *const *envp;           /* the complete environment */
    const char *cwd;             /* NULL: inherit */
    int fd[3];                   /* become the child's 0, 1, 2; -1: that one is inherited */
    int mode;                    /* MCP_SPAWN_* below */
    const struct rlimit *nofile; /* RLIMIT_NOFILE to set before exec; NULL: the host's */
    int sandbox_fd;              /* a Landlock ruleset to enter (sandbox.h), or -1 */
    int maxfd;                   /* where the descriptor sweep's fallback stops (mcp_fd_limit) */
} mcp_spawn_plan;

/* Where the program runs (mcp_spawn_plan.mode). */
enum {
    MCP_SPAWN_SAME_GROUP, /* in the host's process group */
    MCP_SPAWN_NEW_GROUP,  /* leading a process group of its own (a stop reaches its helpers) */
    MCP_SPAWN_DETACHED    /* a new session, a grandchild handed to init at once: not waited for */
};

/* The step of the child that failed (mcp_spawn_start's *step). */
enum {
    MCP_SPAWN_STEP_CLONE = 1, /* creating the process */
    MCP_SPAWN_STEP_FDS,       /* putting the descriptors on 0-2 */
    MCP_SPAWN_STEP_CHDIR,
    MCP_SPAWN_STEP_SANDBOX,
    MCP_SPAWN_STEP_EXEC
};

/* Start p. 0 with *pid once the program runs (MCP_SPAWN_DETACHED: *pid is the intermediate process, already
 * reaped), or an errno with *step: then no child is left to reap. */
int mcp_spawn_start(const mcp_spawn_plan *p, pid_t *pid, int *step);

/* mcp_spawn_start with the report pipe rep made by the caller (mcp_pipe_cloexec), which it
 * closes whatever the outcome: a start on another thread has its pipe made where running out of
 * descriptors can be answered (spawn_job.c). */
int mcp_spawn_start_with(const mcp_spawn_plan *p, int rep[2], pid_t *pid, int *step);

/* The program for command: checked as given when it has a '/', else searched in the PATH of envp
 * (the default path when it has none). 0 with the path in out, or an errno. */
int mcp_spawn_resolve(const char *command, char *const *envp, char *out, size_t outlen);

/* Before spawning: the highest fd number a child may hold (the soft RLIMIT_NOFILE, capped). */
int mcp_fd_limit(void);

/* pipe(2) with both ends close-on-exec from birth; 0 or -1 (errno). */
int mcp_pipe_cloexec(int p[2]);

#endif
