/* Between the child's creation and execve (spawn_child.h), and the call that creates it. Every
 * call in the child is one system call through a thin libc wrapper: no allocation, no lock, no
 * stdio; errno is the only memory of the host the child writes (its thread's, while that thread
 * waits). setrlimit is not on POSIX's async-signal-safe list, but it is one system call
 * (prlimit64) that takes no lock. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* clone; F_DUPFD_CLOEXEC on older headers */
#endif
#include "spawn_child.h"

#include "sandbox.h"
#include "spawn_stack.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __linux__
#include <sched.h>
#endif

#ifndef NSIG
#define NSIG 65
#endif

/* Tell the parent which step failed and why, and leave. */
MCP_IN_CHILD static void fail(mcp_spawn_ctx *c, int report_fd, int step, int err)
{
    mcp_spawn_report r;
    r.step = step;
    r.err = err;
    c->report.step = step; /* seen by the parent where the memory is shared */
    c->report.err = err;
    if (write(report_fd, &r, sizeof r) < 0) {
        /* nothing more to do */
    }
    _exit(127);
}

/* Every signal back to its default action, then none blocked (the parent blocked them all
 * across the clone, so no handler of the host ran here): the program does not inherit the
 * host's ignored SIGPIPE, its handlers or its mask. */
MCP_IN_CHILD static void default_signals(void)
{
    struct sigaction sa;
    sigset_t none;
    int sig;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &sa, NULL); /* refused for the libc's own: harmless */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* A descriptor the child needs that sits on 0-2 (the host had closed its own) moves above them,
 * so that putting the pipes on 0-2 cannot overwrite it. 0, or -1 with errno. */
MCP_IN_CHILD static int lift(int *fd)
{
    int moved;
    if (*fd < 0 || *fd > 2)
        return 0;
    moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
        return -1;
    *fd = moved;
    return 0;
}

/* closefrom-style sweep: every fd from lowfd up becomes close-on-exec, so the program inherits
 * nothing the host opened without FD_CLOEXEC (files from io.open, sockets of libraries, other
 * clients' connections). Marking instead of closing keeps the report pipe open until exec.
 * close_range(CLOSE_RANGE_CLOEXEC) does it in one call (Linux >= 5.11); otherwise one fcntl per
 * possible fd (EBADF on the unused ones). */
MCP_IN_CHILD static void cloexec_from(int lowfd, int maxfd)
{
    int fd;
#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) == 0)
        return;
#endif
    for (fd = lowfd; fd < maxfd; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* The plan's descriptors on 0-2 (dup2 clears their close-on-exec flag); *report_fd and
 * *sandbox_fd are lifted out of the way first. 0, or -1 with errno. */
MCP_IN_CHILD static int place_fds(const mcp_spawn_plan *p, int *report_fd, int *sandbox_fd)
{
    int fd[3], i;
    for (i = 0; i < 3; i++)
        fd[i] = p->fd[i];
    if (lift(report_fd) != 0 || lift(sandbox_fd) != 0 || lift(&fd[0]) != 0 || lift(&fd[1]) != 0 ||
        lift(&fd[2]) != 0)
        return -1;
    for (i = 0; i < 3; i++)
        if (fd[i] >= 0 && dup2(fd[i], i) < 0)
            return -1;
    return 0;
}

MCP_IN_CHILD int mcp_spawn_child_exec(void *arg)
{
    mcp_spawn_ctx *c = arg;
    const mcp_spawn_plan *p = c->plan;
    int report_fd = c->report_fd, sandbox_fd = p->sandbox_fd;
    c->shared = 1;
    /* A stop reaches the helpers it starts: a process group of its own (the parent does it too).
     * A confined server gets a session of its own, which is also that group: no controlling
     * terminal, so no TIOCSTI into the user's shell even where its rules grant /dev. */
    if (p->mode == MCP_SPAWN_NEW_GROUP && (sandbox_fd < 0 || setsid() < 0))
        setpgid(0, 0);
    default_signals();
    if (place_fds(p, &report_fd, &sandbox_fd) != 0)
        fail(c, report_fd, MCP_SPAWN_STEP_FDS, errno);
    if (p->cwd != NULL && chdir(p->cwd) != 0)
        fail(c, report_fd, MCP_SPAWN_STEP_CHDIR, errno);
    cloexec_from(3, p->maxfd);
    if (p->nofile != NULL)
        setrlimit(RLIMIT_NOFILE, p->nofile); /* the host's limit from before the core raised it */
    if (sandbox_fd >= 0 && mcp_sandbox_enter(sandbox_fd) != 0)
        fail(c, report_fd, MCP_SPAWN_STEP_SANDBOX, errno);
    execve(p->file, p->argv, p->envp);
    fail(c, report_fd, MCP_SPAWN_STEP_EXEC, errno);
    return 127;
}

MCP_IN_CHILD int mcp_spawn_child_detach(void *arg)
{
    mcp_spawn_ctx *c = arg;
    c->shared = 1;
    setsid();
    if (mcp_spawn_clone(mcp_spawn_child_exec, arg, c->stack2, c->stack2_size) < 0)
        fail(c, c->report_fd, MCP_SPAWN_STEP_CLONE, errno);
    _exit(0);
    return 0;
}

pid_t mcp_spawn_clone(mcp_spawn_fn fn, void *arg, void *stack, size_t size)
{
#ifdef __linux__
    /* clone takes the end the stack grows from (spawn_stack.h: its guard is at the other) */
    char *top = MCP_STACK_GROWS_UP ? (char *)stack : (char *)stack + size;
    /* SIGCHLD: reaped with waitpid like any child. Under valgrind this runs as a fork. */
    return clone(fn, top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
#else
    /* Not Linux (macOS, the BSDs): fork, which copies the host; the same child code runs. */
    pid_t pid = fork();
    (void)stack;
    (void)size;
    if (pid == 0)
        _exit(fn(arg));
    return pid;
#endif
}
