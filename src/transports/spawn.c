/* Starting a program without copying the host (spawn.h): the stacks (spawn_stack.h), the signals
 * blocked across the clone, the report pipe read once the child has gone on to execve or failed. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* pipe2 */
#endif
#include "spawn.h"
#include "spawn_child.h"
#include "spawn_stack.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's stack: its few frames (spawn_child.c: system calls' wrappers, a sigaction and a
 * sigset_t; well under 4 KB), and a sanitizer's interceptors under a checked build. */
#define MCP_SPAWN_STACK (64 * 1024)

int mcp_pipe_cloexec(int p[2])
{
#ifdef __linux__
    return pipe2(p, O_CLOEXEC);
#else
    if (pipe(p) != 0)
        return -1;
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int mcp_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur == 0 ||
        rl.rlim_cur > ((rlim_t)1 << 20))
        return 1 << 20;
    return (int)rl.rlim_cur;
}

/* The child's report, once it has gone: 0 after a successful exec, else the errno it sent with
 * *step. Read from the shared memory where there was one, else from the pipe (closed by a
 * successful exec). */
static int read_report(const mcp_spawn_ctx *c, int fd, int *step)
{
    mcp_spawn_report r;
    ssize_t n;
    if (c->shared) {
        r.step = c->report.step;
        r.err = c->report.err;
    } else {
        do
            n = read(fd, &r, sizeof r);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof r)
            return 0;
    }
    if (r.step == 0)
        return 0;
    *step = r.step;
    return r.err != 0 ? r.err : EIO;
}

/* Create the child running fn on a fresh stack (a detached start: and one for the grandchild),
 * every signal blocked meanwhile: no handler of the host may run in a child that shares its
 * memory (the child sets them to default before it unblocks). The pid, or -1 with errno. */
static pid_t start_child(mcp_spawn_fn fn, mcp_spawn_ctx *c, int detach)
{
    mcp_spawn_stacks st;
    sigset_t all, old;
    pid_t pid;
    int e;
    if (mcp_spawn_stacks_map(&st, detach ? 2 : 1, MCP_SPAWN_STACK) != 0)
        return -1;
    c->stack2 = detach ? st.stack[1] : NULL;
    c->stack2_size = detach ? st.size : 0;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid = mcp_spawn_clone(fn, c, st.stack[0], st.size);
    e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    mcp_spawn_stacks_unmap(&st); /* the child has exec'd or exited: it runs on it no more */
    errno = e;
    return pid;
}

int mcp_spawn_start(const mcp_spawn_plan *p, pid_t *pid, int *step)
{
    int rep[2];
    *step = MCP_SPAWN_STEP_CLONE;
    if (mcp_pipe_cloexec(rep) != 0)
        return errno;
    return mcp_spawn_start_with(p, rep, pid, step);
}

int mcp_spawn_start_with(const mcp_spawn_plan *p, int rep[2], pid_t *pid, int *step)
{
    mcp_spawn_ctx c;
    int e, detach = p->mode == MCP_SPAWN_DETACHED;
    *step = MCP_SPAWN_STEP_CLONE;
    c.plan = p;
    c.report_fd = rep[1];
    c.shared = 0;
    c.report.step = 0;
    c.report.err = 0;
    *pid = start_child(detach ? mcp_spawn_child_detach : mcp_spawn_child_exec, &c, detach);
    e = errno;
    close(rep[1]);
    if (*pid < 0) {
        close(rep[0]);
        return e;
    }
    e = read_report(&c, rep[0], step);
    close(rep[0]);
    if (e != 0 || detach) /* a failed child, or the intermediate: reaped here */
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return e;
}
