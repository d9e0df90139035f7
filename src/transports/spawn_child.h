/* The inside of mcp_spawn_start (spawn.h): what runs in the child between its creation and
 * execve, and the call that creates it. The child shares the host's memory (Linux), so it runs
 * only system calls that allocate nothing and take no lock, on a stack the parent mapped (with a
 * guard page where it would overflow: spawn_stack.h). */
#ifndef MCP_SPAWN_CHILD_H
#define MCP_SPAWN_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "spawn.h"

/* Code that runs in the child is not instrumented by AddressSanitizer: its fake stacks and
 * no-return bookkeeping belong to the host's thread, whose memory the child shares. */
#if defined(__GNUC__) || defined(__clang__)
#define MCP_IN_CHILD __attribute__((no_sanitize_address))
#else
#define MCP_IN_CHILD
#endif

/* What a failing child writes on the report pipe (one write, atomic on a pipe). */
typedef struct mcp_spawn_report {
    int step; /* MCP_SPAWN_STEP_* */
    int err;  /* its errno */
} mcp_spawn_report;

typedef struct mcp_spawn_ctx {
    const mcp_spawn_plan *plan;
    int report_fd; /* the write end of the report pipe (close-on-exec) */
    /* Where the memory is shared (a real CLONE_VM), the child also reports here: set to 1 first
     * thing, then a failure's step and errno. The parent, resumed once the child has exec'd or
     * exited, reads these and need not wait on the pipe, which closes only later in exec. Under
     * valgrind (the clone runs as a fork) or a fork elsewhere, shared stays 0: the pipe tells. */
    volatile int shared;
    volatile mcp_spawn_report report;
    void *stack2; /* detach: the grandchild's stack */
    size_t stack2_size;
} mcp_spawn_ctx;

typedef int (*mcp_spawn_fn)(void *arg);

/* The child: the setup of its plan, then execve; on failure a report and _exit(127). */
int mcp_spawn_child_exec(void *ctx);
/* The intermediate of a detached start: a new session, the program as its child, then exit. */
int mcp_spawn_child_detach(void *ctx);

/* fn(arg) in a new process that shares this one's memory until it execs or exits, this thread
 * waiting until then (Linux: clone(CLONE_VM | CLONE_VFORK) on stack; elsewhere fork, and stack
 * is not used). The pid, or -1 with errno. */
pid_t mcp_spawn_clone(mcp_spawn_fn fn, void *arg, void *stack, size_t size);

#endif
