/* Child processes: spawn with pipes, detect exit without SIGCHLD (pidfd, else waitpid polling),
 * stop gracefully (stdin closed -> grace -> SIGTERM -> grace -> SIGKILL) and always reap.
 * Every child sits in its loop's list until it is both reaped and let go by its owner, so a
 * transport collected by the GC still gets its server stopped and no zombie is left. */
#ifndef MCP_CHILD_H
#define MCP_CHILD_H

#include <stdint.h>
#include <sys/types.h>

#include "loop.h"

enum { MCP_STDERR_INHERIT, MCP_STDERR_DISCARD, MCP_STDERR_PIPE };

/* Where a child is in its stop sequence. */
typedef enum mcp_child_stage {
    MCP_CHILD_RUNNING,    /* not asked to stop */
    MCP_CHILD_GRACE,      /* stdin closed, waiting out the grace period */
    MCP_CHILD_TERMINATED, /* SIGTERM sent */
    MCP_CHILD_KILLED      /* SIGKILL sent */
} mcp_child_stage;

typedef struct mcp_child mcp_child;
typedef void (*mcp_child_exit_cb)(mcp_child *c, void *owner);
/* A start in the background is done: why is NULL when the program runs, else why it did not. */
typedef void (*mcp_child_started_cb)(mcp_child *c, void *owner, const char *why);

struct mcp_child {
    mcp_child *next, **pprev;
    mcp_loop *loop;
    pid_t pid;
    int pidfd;
    mcp_watch pidw;
    mcp_timer timer;
    mcp_child_stage stage;
    uint64_t grace_ms, poll_ms, stage_deadline;
    int exited;
    int status; /* waitpid status */
    void *owner;
    mcp_child_exit_cb on_exit;
    mcp_child_started_cb on_started;
    /* A start in the background (mcp_spawn_opts.background) still in flight: the job, the
     * watch on its pipe, the command for a failure's text. pid is 0 until it is done. */
    struct mcp_spawn_job *job;
    mcp_watch jobw;
    char *command;
    char *failure; /* why a start in the background failed, else NULL */
};

typedef struct mcp_spawn_opts {
    const char *command; /* resolved through the PATH in envp when it has no '/' */
    char *const *argv;   /* argv[0] = command */
    char *const *envp;   /* the complete environment of the child */
    const char *cwd;     /* NULL: inherit */
    int stderr_mode;
    const struct mcp_sandbox *sandbox; /* NULL: not confined (sandbox.h) */
    /* The program is started on a helper thread (spawn_job.h): mcp_child_spawn returns before it
     * runs, and the owner's on_started tells the end. 0: the calling thread waits for it. */
    int background;
} mcp_spawn_opts;

/* Spawn; on success fill fds (stdin write end, stdout read end, stderr read end or -1), all
 * non-blocking and close-on-exec. Returns 0, or -1 with a message in err. */
int mcp_child_spawn(mcp_loop *loop, const mcp_spawn_opts *o, mcp_child **out, int fds[3], char *err,
                    size_t errlen);
void mcp_child_set_owner(mcp_child *c, void *owner, mcp_child_exit_cb on_exit,
                         mcp_child_started_cb on_started);
/* A start in the background finished now, waiting for the rest of it (pid known after). */
void mcp_child_settle(mcp_child *c);
/* Begin the graceful stop; the owner has already closed the child's stdin. Idempotent. */
void mcp_child_stop(mcp_child *c, uint64_t grace_ms);
/* Check now whether it has exited (non-blocking); runs on_exit when it has. */
int mcp_child_poll(mcp_child *c);
/* The owner lets go; the loop frees the child once it is reaped. */
void mcp_child_detach(mcp_child *c);
/* Blocking, bounded: stop and reap every child of the loop (Lua state closing). */
void mcp_child_reap_all(mcp_loop *loop);
/* Children not yet reaped. */
int mcp_child_count(mcp_loop *loop);
/* Children being stopped (stop sequence started) and not yet reaped. */
int mcp_child_stopping(mcp_loop *loop);
/* A readable text for an exit status: "exited with status 3", "killed by signal 9". */
void mcp_child_describe(const mcp_child *c, char *out, size_t outlen);

#endif
