#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* pipe2 */
#endif
#include "child.h"

#include "fdlimit.h"
#include "sandbox.h"
#include "spawn_fast.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MCP_CHILD_POLL_MIN_MS 5
#define MCP_CHILD_POLL_MAX_MS 200

/* The children of a loop, kept in a loop hook whose shutdown reaps them. */
typedef struct child_list {
    mcp_child *head;
} child_list;

static const char children_key = 0; /* its address is the hook's key */

static void children_shutdown(mcp_loop *loop, void *data)
{
    (void)data;
    mcp_child_reap_all(loop);
}

static void children_release(mcp_loop *loop, void *data)
{
    (void)loop;
    free(data);
}

/* The loop's list head, created on first use; NULL when out of memory. */
static mcp_child **children(mcp_loop *loop)
{
    child_list *l = mcp_loop_hook_data(loop, &children_key);
    if (l == NULL) {
        l = calloc(1, sizeof *l);
        if (l == NULL)
            return NULL;
        if (mcp_loop_add_hook(loop, &children_key, l, children_shutdown, children_release) != 0) {
            free(l);
            return NULL;
        }
    }
    return &l->head;
}

static mcp_child *first_child(mcp_loop *loop)
{
    child_list *l = mcp_loop_hook_data(loop, &children_key);
    return l != NULL ? l->head : NULL;
}

static void child_free(mcp_child *c)
{
    mcp_loop *loop = c->loop;
    if (c->next)
        c->next->pprev = c->pprev;
    *c->pprev = c->next;
    mcp_watch_stop(loop, &c->pidw);
    mcp_timer_stop(loop, &c->timer);
    if (c->pidfd >= 0)
        close(c->pidfd);
    free(c);
    mcp_loop_unref(loop);
}

/* Without a pidfd (old kernel, or out of descriptors at the hard limit) the exit is polled for. */
static int open_pidfd(mcp_loop *loop, pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0 && mcp_fdlimit_retry(loop, errno))
        fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#else
    (void)loop;
    (void)pid;
    return -1;
#endif
}

/* Signal the child's process group (it leads one), so helpers it started go too. */
static void child_signal(mcp_child *c, int sig)
{
    if (c->exited)
        return;
    if (kill(-c->pid, sig) != 0)
        kill(c->pid, sig);
}

static void child_reaped(mcp_child *c, int status)
{
    void *owner = c->owner;
    c->exited = 1;
    c->status = status;
    mcp_watch_stop(c->loop, &c->pidw);
    mcp_timer_stop(c->loop, &c->timer);
    if (c->pidfd >= 0) { /* not kept until the transport is collected: close() then frees it */
        close(c->pidfd);
        c->pidfd = -1;
    }
    /* A stop was asked for (close, collection): whatever is left in the server's process group
     * (helpers it started, some that ignored SIGTERM) must not outlive it, also when the server
     * itself left gracefully on stdin EOF. The group id stays reserved while a member lives, so
     * this cannot reach an unrelated process. */
    if (c->stage >= MCP_CHILD_GRACE)
        kill(-c->pid, SIGKILL);
    if (owner != NULL && c->on_exit != NULL)
        c->on_exit(c, owner);
    else if (owner == NULL)
        child_free(c);
}

int mcp_child_poll(mcp_child *c)
{
    int status;
    pid_t r;
    if (c->exited)
        return 1;
    do
        r = waitpid(c->pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == c->pid || (r < 0 && errno == ECHILD)) {
        child_reaped(c, r == c->pid ? status : 0);
        return 1;
    }
    return 0;
}

static void on_pidfd(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    (void)loop;
    (void)events;
    mcp_child_poll(w->data);
}

static void arm_stage_timer(mcp_child *c)
{
    uint64_t now = mcp_now_ms(), wait;
    if (c->stage == MCP_CHILD_RUNNING)
        return;
    wait = c->stage_deadline > now ? c->stage_deadline - now : 0;
    /* Without a pidfd we learn of the exit only by asking: ask with a growing interval. */
    if (c->pidfd < 0 && c->poll_ms < wait)
        wait = c->poll_ms;
    mcp_timer_start(c->loop, &c->timer, wait ? wait : 1);
}

static void on_stage_timer(mcp_loop *loop, mcp_timer *t)
{
    mcp_child *c = t->data;
    (void)loop;
    if (mcp_child_poll(c))
        return;
    if (mcp_now_ms() >= c->stage_deadline) {
        if (c->stage == MCP_CHILD_GRACE) {
            child_signal(c, SIGTERM);
            c->stage = MCP_CHILD_TERMINATED;
        } else {
            child_signal(c, SIGKILL);
            c->stage = MCP_CHILD_KILLED;
        }
        c->stage_deadline = mcp_now_ms() + (c->stage == MCP_CHILD_KILLED ? 1000 : c->grace_ms);
        c->poll_ms = MCP_CHILD_POLL_MIN_MS;
    } else if (c->poll_ms < MCP_CHILD_POLL_MAX_MS) {
        c->poll_ms *= 2;
    }
    arm_stage_timer(c);
}

void mcp_child_stop(mcp_child *c, uint64_t grace_ms)
{
    if (c->exited || c->stage != MCP_CHILD_RUNNING)
        return;
    c->stage = MCP_CHILD_GRACE;
    c->grace_ms = grace_ms;
    c->poll_ms = MCP_CHILD_POLL_MIN_MS;
    c->stage_deadline = mcp_now_ms() + grace_ms;
    if (mcp_child_poll(c))
        return;
    arm_stage_timer(c);
}

void mcp_child_set_owner(mcp_child *c, void *owner, mcp_child_exit_cb on_exit)
{
    c->owner = owner;
    c->on_exit = on_exit;
}

void mcp_child_detach(mcp_child *c)
{
    c->owner = NULL;
    c->on_exit = NULL;
    if (c->exited) {
        child_free(c);
        return;
    }
    mcp_child_stop(c, c->grace_ms ? c->grace_ms : 2000);
}

int mcp_child_count(mcp_loop *loop)
{
    int n = 0;
    mcp_child *c;
    for (c = first_child(loop); c != NULL; c = c->next)
        n += !c->exited;
    return n;
}

int mcp_child_stopping(mcp_loop *loop)
{
    int n = 0;
    mcp_child *c;
    for (c = first_child(loop); c != NULL; c = c->next)
        n += !c->exited && c->stage != MCP_CHILD_RUNNING;
    return n;
}

void mcp_child_describe(const mcp_child *c, char *out, size_t outlen)
{
    if (!c->exited)
        snprintf(out, outlen, "is still running");
    else if (WIFEXITED(c->status))
        snprintf(out, outlen, "exited with status %d", WEXITSTATUS(c->status));
    else if (WIFSIGNALED(c->status))
        snprintf(out, outlen, "was killed by signal %d", WTERMSIG(c->status));
    else
        snprintf(out, outlen, "exited");
}

/* Wait for every live child to exit, up to ms; returns how many are still alive. */
static int wait_all(mcp_loop *loop, int ms)
{
    uint64_t deadline = mcp_now_ms() + (uint64_t)ms;
    for (;;) {
        int alive = 0;
        mcp_child *c, *next;
        for (c = first_child(loop); c != NULL; c = next) {
            next = c->next;
            if (!c->exited && !mcp_child_poll(c))
                alive++;
        }
        if (alive == 0 || mcp_now_ms() >= deadline)
            return alive;
        /* Teardown only: a short sleep between checks is fine here. */
        poll(NULL, 0, 10);
    }
}

void mcp_child_reap_all(mcp_loop *loop)
{
    mcp_child *c, *next;
    if (wait_all(loop, 2000) > 0) {
        for (c = first_child(loop); c != NULL; c = c->next)
            if (!c->exited) {
                c->stage = MCP_CHILD_TERMINATED;
                child_signal(c, SIGTERM);
            }
        if (wait_all(loop, 2000) > 0)
            for (c = first_child(loop); c != NULL; c = next) {
                int status = 0;
                next = c->next;
                if (c->exited)
                    continue;
                child_signal(c, SIGKILL);
                while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
                    ;
                child_reaped(c, status);
            }
    }
}

/* ---- spawning ----------------------------------------------------------------------------- */

static const char *env_lookup(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

/* Resolve the command through the child's PATH before fork: the child may only call
 * async-signal-safe functions, and execvp is not one. */
static int resolve_command(const mcp_spawn_opts *o, char *out, size_t outlen)
{
    const char *path, *p;
    struct stat st;
    if (strchr(o->command, '/') != NULL) {
        /* checked here, not left to exec: posix_spawn under valgrind (no shared-memory vfork)
         * cannot report exec's errno, and the missing file would show as a child exiting 127 */
        if (strlen(o->command) >= outlen)
            return ENAMETOOLONG;
        if (stat(o->command, &st) != 0)
            return errno;
        if (!S_ISREG(st.st_mode))
            return EACCES;
        if (access(o->command, X_OK) != 0)
            return errno;
        strcpy(out, o->command);
        return 0;
    }
    path = env_lookup(o->envp, "PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        int n = snprintf(out, outlen, "%.*s%s%s", (int)dlen, p, dlen ? "/" : "", o->command);
        if (n > 0 && (size_t)n < outlen && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            access(out, X_OK) == 0)
            return 0;
        if (end == NULL)
            break;
        p = end;
    }
    return ENOENT;
}

/* A pipe whose two ends are close-on-exec from birth (shared with the other spawners). */
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

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_pair(int p[2])
{
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    p[0] = p[1] = -1;
}

/* The highest fd number the child might hold, found before fork (sysconf and getrlimit are not
 * async-signal-safe). */
int mcp_fd_limit(void)
{
    struct rlimit rl;
    long n = sysconf(_SC_OPEN_MAX);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur > n)
        n = (long)rl.rlim_cur;
    if (n <= 0 || n > (1L << 20))
        n = 1L << 20;
    return (int)n;
}

/* closefrom-style sweep in the child: every fd from 3 up becomes close-on-exec, so the server
 * inherits nothing the host opened without FD_CLOEXEC (files from io.open, sockets of libraries,
 * other clients' connections). Marking instead of closing keeps report_fd open until exec.
 * close_range(CLOSE_RANGE_CLOEXEC) does it in one call (Linux >= 5.11); otherwise one fcntl per
 * possible fd (EBADF on the unused ones). */
void mcp_cloexec_from(int lowfd, int maxfd)
{
    int fd;
#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) == 0)
        return;
#endif
    for (fd = lowfd; fd < maxfd; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Between fork and exec: every signal back to its default action and none blocked, so the
 * program does not inherit the host's ignored SIGPIPE or its mask. */
void mcp_default_signals(void)
{
    int sig;
    sigset_t none;
    for (sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* dup2 that also works when the fd already has its number (dup2 then keeps FD_CLOEXEC). */
static int move_fd(int from, int to)
{
    if (from == to)
        return fcntl(to, F_SETFD, 0);
    return dup2(from, to);
}

/* What the child needs between fork and exec, all prepared before fork. */
typedef struct exec_plan {
    const mcp_spawn_opts *o;
    const char *file;
    int report_fd, maxfd, sandbox_fd;
    const struct rlimit *nofile;
} exec_plan;

/* An errno the child reports when entering the sandbox failed (told apart from exec's). */
#define SANDBOX_ERRNO_BASE 0x10000

/* Between fork and exec: async-signal-safe calls only. Reports errno through report_fd. */
static void exec_child(const exec_plan *p, int in[2], int out[2], int errp[2])
{
    const mcp_spawn_opts *o = p->o;
    int e;
    setpgid(0, 0);
    mcp_default_signals();
    if (move_fd(in[0], 0) < 0 || move_fd(out[1], 1) < 0)
        goto fail;
    /* stderr: a pipe, or /dev/null (opened by the parent, where running out of descriptors
     * can be handled) */
    if (errp[1] >= 0 && move_fd(errp[1], 2) < 0)
        goto fail;
    if (o->cwd != NULL && chdir(o->cwd) != 0)
        goto fail;
    mcp_cloexec_from(3, p->maxfd);
    /* The soft fd limit the host had before the core raised it (fdlimit.h). setrlimit is not
     * on POSIX's async-signal-safe list, but it is one system call (prlimit64 on Linux) that
     * takes no lock; Go's runtime does the same between its fork and exec. */
    if (p->nofile != NULL)
        setrlimit(RLIMIT_NOFILE, p->nofile);
    if (p->sandbox_fd >= 0 && mcp_sandbox_enter(p->sandbox_fd) != 0) {
        e = errno + SANDBOX_ERRNO_BASE;
        goto report;
    }
    execve(p->file, o->argv, o->envp);
fail:
    e = errno;
report:
    if (write(p->report_fd, &e, sizeof e) < 0) {
        /* nothing more to do */
    }
    _exit(127);
}

/* The descriptors of one spawn: stdin, stdout, the exec report and stderr (a pipe, or /dev/null
 * to discard). 0, or an errno with all of them closed. */
static int open_spawn_fds(const mcp_spawn_opts *o, int in[2], int out[2], int errp[2], int rep[2])
{
    int e;
    if (mcp_pipe_cloexec(in) != 0 || mcp_pipe_cloexec(out) != 0 || mcp_pipe_cloexec(rep) != 0)
        goto fail;
    if (o->stderr_mode == MCP_STDERR_PIPE && mcp_pipe_cloexec(errp) != 0)
        goto fail;
    if (o->stderr_mode == MCP_STDERR_DISCARD) {
        errp[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (errp[1] < 0)
            goto fail;
    }
    return 0;
fail:
    e = errno;
    close_pair(in);
    close_pair(out);
    close_pair(errp);
    close_pair(rep);
    return e;
}

/* The command resolved through PATH and the working directory checked: 0, or -1 with err. */
static int check_command(const mcp_spawn_opts *o, char *file, size_t filelen, char *err,
                         size_t errlen)
{
    struct stat st;
    int e = resolve_command(o, file, filelen);
    if (e != 0) {
        snprintf(err, errlen, "cannot start '%s': %s%s", o->command, strerror(e),
                 strchr(o->command, '/') ? "" : " (searched PATH)");
        return -1;
    }
    if (o->cwd != NULL && (stat(o->cwd, &st) != 0 || !S_ISDIR(st.st_mode))) {
        snprintf(err, errlen, "cannot start '%s': working directory '%s' is not a directory",
                 o->command, o->cwd);
        return -1;
    }
    return 0;
}

/* After fork: the report pipe closes on a successful exec (CLOEXEC) and carries errno when exec
 * (or entering the sandbox) failed; then the child is reaped here. 0, or -1 with err. */
static int await_exec(const mcp_spawn_opts *o, pid_t pid, int rep[2], char *err, size_t errlen)
{
    int child_errno = 0;
    ssize_t n;
    close(rep[1]);
    rep[1] = -1;
    do
        n = read(rep[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close(rep[0]);
    rep[0] = -1;
    if (n != (ssize_t)sizeof child_errno)
        return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (child_errno >= SANDBOX_ERRNO_BASE)
        snprintf(err, errlen, "cannot start '%s': sandbox: cannot enter it: %s", o->command,
                 strerror(child_errno - SANDBOX_ERRNO_BASE));
    else
        snprintf(err, errlen, "cannot start '%s': %s", o->command, strerror(child_errno));
    return -1;
}

/* The server started by posix_spawn (spawn_fast.h) when nothing needs code of ours in the child:
 * no sandbox, and the fd limit the host had is the current one. 1 started, 0 take the fork
 * path, -1 failed (err set). */
static int try_spawn_fast(const exec_plan *p, int in[2], int out[2], int errp[2], pid_t *pid,
                          char *err, size_t errlen)
{
    mcp_spawn_fast f;
    struct rlimit cur;
    int e;
    if (p->sandbox_fd >= 0)
        return 0;
    if (p->nofile != NULL &&
        (getrlimit(RLIMIT_NOFILE, &cur) != 0 || cur.rlim_cur != p->nofile->rlim_cur))
        return 0;
    f.file = p->file;
    f.argv = p->o->argv;
    f.envp = p->o->envp;
    f.cwd = p->o->cwd;
    f.fd0 = in[0];
    f.fd1 = out[1];
    f.fd2 = errp[1];
    if (!mcp_spawn_fast_fits(&f))
        return 0;
    e = mcp_spawn_fast_start(&f, pid);
    if (e == 0)
        return 1;
    snprintf(err, errlen, "cannot start '%s': %s", p->o->command, strerror(e));
    return -1;
}

/* posix_spawn where it fits, else fork and exec_child (a sandbox is entered in the child). */
static int start_process(const exec_plan *p, int in[2], int out[2], int errp[2], int rep[2],
                         pid_t *pid, char *err, size_t errlen)
{
    int r = try_spawn_fast(p, in, out, errp, pid, err, errlen);
    if (r != 0) {
        close_pair(rep); /* posix_spawn reports exec's errno itself */
        return r > 0 ? 0 : -1;
    }
    *pid = fork();
    if (*pid < 0) {
        snprintf(err, errlen, "cannot start '%s': fork: %s", p->o->command, strerror(errno));
        return -1;
    }
    if (*pid == 0)
        exec_child(p, in, out, errp);
    return await_exec(p->o, *pid, rep, err, errlen);
}

/* The parent's ends made non-blocking and handed out; the child's ends closed. */
static void hand_out_fds(int in[2], int out[2], int errp[2], int fds[3])
{
    close(in[0]);
    close(out[1]);
    if (errp[1] >= 0)
        close(errp[1]);
    fds[0] = in[1];
    fds[1] = out[0];
    fds[2] = errp[0];
    set_nonblock(fds[0]);
    set_nonblock(fds[1]);
    if (fds[2] >= 0)
        set_nonblock(fds[2]);
}

/* A started child joins the loop's list, watched through its pidfd (or polled). */
static void child_register(mcp_loop *loop, mcp_child *c, mcp_child **head, pid_t pid)
{
    c->loop = loop;
    mcp_loop_ref(loop);
    c->pid = pid;
    c->grace_ms = 2000;
    mcp_timer_init(&c->timer, on_stage_timer, c);
    c->pidfd = open_pidfd(loop, pid);
    mcp_watch_init(&c->pidw, c->pidfd, on_pidfd, c);
    if (c->pidfd >= 0)
        mcp_watch_set(loop, &c->pidw, MCP_EV_READ);
    c->next = *head;
    if (c->next)
        c->next->pprev = &c->next;
    c->pprev = head;
    *c->pprev = c;
}

int mcp_child_spawn(mcp_loop *loop, const mcp_spawn_opts *o, mcp_child **outc, int fds[3],
                    char *err, size_t errlen)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, rep[2] = {-1, -1};
    char file[4096];
    int e;
    struct rlimit nofile;
    exec_plan plan;
    pid_t pid;
    mcp_child *c = NULL, **head;

    if (check_command(o, file, sizeof file, err, errlen) != 0)
        return -1;
    head = children(loop);
    c = head != NULL ? calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    plan.sandbox_fd = -1;
    if (o->sandbox != NULL) {
        char why[512];
        plan.sandbox_fd = mcp_sandbox_prepare(o->sandbox, file, why, sizeof why);
        if (plan.sandbox_fd < 0) {
            snprintf(err, errlen, "cannot start '%s': %s", o->command, why);
            goto fail;
        }
    }
    /* Out of descriptors (EMFILE): raise the soft limit and try again, up to the hard one. */
    while ((e = open_spawn_fds(o, in, out, errp, rep)) != 0 && mcp_fdlimit_retry(loop, e))
        ;
    if (e != 0) {
        char why[128];
        mcp_fdlimit_describe(e, why, sizeof why);
        snprintf(err, errlen, "cannot start '%s': %s", o->command, why);
        goto fail;
    }
    plan.o = o;
    plan.file = file;
    plan.report_fd = rep[1];
    plan.maxfd = mcp_fd_limit();
    plan.nofile = mcp_fdlimit_for_child(loop, &nofile) ? &nofile : NULL;
    if (start_process(&plan, in, out, errp, rep, &pid, err, errlen) != 0)
        goto fail;
    if (plan.sandbox_fd >= 0)
        close(plan.sandbox_fd);
    /* The group, so that a stop reaches helpers; also done in the child to close the race. */
    setpgid(pid, pid);
    hand_out_fds(in, out, errp, fds);
    child_register(loop, c, head, pid);
    *outc = c;
    return 0;
fail:
    if (plan.sandbox_fd >= 0)
        close(plan.sandbox_fd);
    close_pair(in);
    close_pair(out);
    close_pair(errp);
    close_pair(rep);
    free(c);
    return -1;
}
