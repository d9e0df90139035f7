#include "child.h"

#include "fdlimit.h"
#include "sandbox.h"
#include "spawn.h"
#include "spawn_job.h"

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
    free(c->command);
    free(c->failure);
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
    if (c->exited || c->job != NULL)
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
     * this cannot reach an unrelated process. (pid 0: a start that failed; kill(0) is our own.) */
    if (c->stage >= MCP_CHILD_GRACE && c->pid > 0)
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
    if (c->job != NULL)
        return 0; /* still starting */
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
    if (c->job != NULL)
        return; /* the sequence starts once the start is done (start_done) */
    if (mcp_child_poll(c))
        return;
    arm_stage_timer(c);
}

void mcp_child_set_owner(mcp_child *c, void *owner, mcp_child_exit_cb on_exit,
                         mcp_child_started_cb on_started)
{
    c->owner = owner;
    c->on_exit = on_exit;
    c->on_started = on_started;
}

void mcp_child_detach(mcp_child *c)
{
    c->owner = NULL;
    c->on_exit = NULL;
    c->on_started = NULL;
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
    if (c->failure != NULL)
        snprintf(out, outlen, "did not start (%s)", c->failure);
    else if (!c->exited)
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
            if (c->job != NULL) { /* may free c; what runs is polled in the next round */
                mcp_child_settle(c);
                alive++;
            } else if (!c->exited && !mcp_child_poll(c)) {
                alive++;
            }
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

/* ---- spawning (spawn.h: without copying the host) ------------------------------------------ */

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

/* The descriptors of one spawn: stdin, stdout and stderr (a pipe, or /dev/null to discard).
 * 0, or an errno with all of them closed. */
static int open_spawn_fds(const mcp_spawn_opts *o, int in[2], int out[2], int errp[2])
{
    int e;
    if (mcp_pipe_cloexec(in) != 0 || mcp_pipe_cloexec(out) != 0)
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
    return e;
}

/* The command resolved through PATH and the working directory checked: 0, or -1 with err. */
static int check_command(const mcp_spawn_opts *o, char *file, size_t filelen, char *err,
                         size_t errlen)
{
    struct stat st;
    int e = mcp_spawn_resolve(o->command, o->envp, file, filelen);
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

/* Why the child never ran the program: the step that failed and its errno. */
static void describe_failure(const char *command, int step, int e, char *err, size_t errlen)
{
    char why[160];
    if (step == MCP_SPAWN_STEP_CLONE) /* the report pipe: EMFILE at the hard limit */
        mcp_fdlimit_describe(e, why, sizeof why);
    else if (step == MCP_SPAWN_STEP_FDS)
        snprintf(why, sizeof why, "cannot set up its stdin/stdout/stderr: %s", strerror(e));
    else if (step == MCP_SPAWN_STEP_CHDIR)
        snprintf(why, sizeof why, "cannot enter its working directory: %s", strerror(e));
    else if (step == MCP_SPAWN_STEP_SANDBOX)
        snprintf(why, sizeof why, "sandbox: cannot enter it: %s", strerror(e));
    else
        snprintf(why, sizeof why, "%s", strerror(e));
    snprintf(err, errlen, "cannot start '%s': %s", command, why);
}

/* A server's start (spawn.h): the pipes on 0-2, in its own process group, entering the
 * sandbox's ruleset when there is one. The fd limit and the sweep's end are the caller's. */
static void server_plan(const mcp_spawn_opts *o, const char *file, int sandbox_fd, const int fds[3],
                        mcp_spawn_plan *p)
{
    p->file = file;
    p->argv = o->argv;
    p->envp = o->envp;
    p->cwd = o->cwd;
    p->fd[0] = fds[0];
    p->fd[1] = fds[1];
    p->fd[2] = fds[2];
    p->mode = MCP_SPAWN_NEW_GROUP;
    p->sandbox_fd = sandbox_fd;
}

/* The server started on this thread, with the fd limit the host had before the core raised it.
 * 0, or -1 with err. */
static int start_process(mcp_loop *loop, const mcp_spawn_opts *o, const char *file, int sandbox_fd,
                         const int fds[3], pid_t *pid, char *err, size_t errlen)
{
    mcp_spawn_plan p;
    struct rlimit nofile;
    int step, e;
    server_plan(o, file, sandbox_fd, fds, &p);
    /* The report pipe may find the descriptors exhausted too: raise the limit as for the pipes. */
    do {
        p.nofile = mcp_fdlimit_for_child(loop, &nofile) ? &nofile : NULL;
        p.maxfd = mcp_fd_limit();
        e = mcp_spawn_start(&p, pid, &step);
    } while (e != 0 && step == MCP_SPAWN_STEP_CLONE && mcp_fdlimit_retry(loop, e));
    if (e == 0)
        return 0;
    describe_failure(o->command, step, e, err, errlen);
    return -1;
}

/* The server started on a helper thread (spawn_job.h), which takes the child's descriptors and
 * the ruleset. 0, or -1 with err (then it took nothing). */
static int start_job(mcp_loop *loop, mcp_child *c, const mcp_spawn_opts *o, const char *file,
                     int sandbox_fd, const int fds[3], char *err, size_t errlen)
{
    mcp_spawn_plan p;
    struct rlimit nofile;
    int e = 0;
    server_plan(o, file, sandbox_fd, fds, &p);
    c->command = strdup(o->command);
    if (c->command == NULL)
        e = ENOMEM;
    /* The job's pipes may find the descriptors exhausted too: raise the limit as for the pipes. */
    while (e == 0) {
        p.nofile = mcp_fdlimit_for_child(loop, &nofile) ? &nofile : NULL;
        p.maxfd = mcp_fd_limit();
        if ((c->job = mcp_spawn_job_start(&p)) != NULL)
            return 0;
        e = errno;
        if (mcp_fdlimit_retry(loop, e))
            e = 0;
    }
    describe_failure(o->command, MCP_SPAWN_STEP_CLONE, e, err, errlen);
    return -1;
}

/* The parent's ends made non-blocking and handed out; the child's ends closed (-1: a job took
 * them). */
static void hand_out_fds(int in[2], int out[2], int errp[2], int fds[3])
{
    if (in[0] >= 0)
        close(in[0]);
    if (out[1] >= 0)
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

/* A running child watched through its pidfd (or polled). */
static void watch_pid(mcp_child *c, pid_t pid)
{
    c->pid = pid;
    c->pidfd = open_pidfd(c->loop, pid);
    mcp_watch_init(&c->pidw, c->pidfd, on_pidfd, c);
    if (c->pidfd >= 0)
        mcp_watch_set(c->loop, &c->pidw, MCP_EV_READ);
}

/* A child joins the loop's list: started (pid), or still starting (pid 0, c->job set). */
static void child_register(mcp_loop *loop, mcp_child *c, mcp_child **head, pid_t pid)
{
    c->loop = loop;
    mcp_loop_ref(loop);
    c->grace_ms = 2000;
    mcp_timer_init(&c->timer, on_stage_timer, c);
    c->pidfd = -1;
    mcp_watch_init(&c->pidw, -1, on_pidfd, c);
    if (pid > 0)
        watch_pid(c, pid);
    c->next = *head;
    if (c->next)
        c->next->pprev = &c->next;
    c->pprev = head;
    *c->pprev = c;
}

/* A start in the background is done: the program watched like any child (and a stop asked for
 * meanwhile begun), or the failure kept as its exit (status 127). The owner is told either way;
 * after a failure also of the exit, which may free c. */
static void start_done(mcp_child *c)
{
    char why[512];
    int step, e;
    pid_t pid;
    mcp_watch_stop(c->loop, &c->jobw);
    e = mcp_spawn_job_finish(c->job, &pid, &step);
    c->job = NULL;
    if (e == 0) {
        setpgid(pid, pid); /* as in the child, to close the race */
        watch_pid(c, pid);
        if (c->stage != MCP_CHILD_RUNNING) { /* a stop asked for while it started */
            int orphan = c->owner == NULL;
            if (!mcp_child_poll(c))
                arm_stage_timer(c);
            else if (orphan)
                return; /* reaped, and with no owner freed: no one to tell */
        }
        if (c->owner != NULL && c->on_started != NULL)
            c->on_started(c, c->owner, NULL);
        return;
    }
    describe_failure(c->command, step, e, why, sizeof why);
    c->failure = strdup(why);
    if (c->owner != NULL && c->on_started != NULL)
        c->on_started(c, c->owner, why);
    child_reaped(c, 127 << 8);
}

static void on_job_done(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    (void)loop;
    (void)events;
    start_done(w->data);
}

void mcp_child_settle(mcp_child *c)
{
    if (c->job != NULL)
        start_done(c);
}

/* The sandbox's ruleset (sandbox.h), built before the child exists: an fd, or -1 when there is
 * no sandbox (*failed 0) or it cannot be built (*failed 1, err set). */
static int prepare_sandbox(const mcp_spawn_opts *o, const char *file, int *failed, char *err,
                           size_t errlen)
{
    char why[512];
    int fd;
    *failed = 0;
    if (o->sandbox == NULL)
        return -1;
    fd = mcp_sandbox_prepare(o->sandbox, file, why, sizeof why);
    if (fd < 0) {
        *failed = 1;
        snprintf(err, errlen, "cannot start '%s': %s", o->command, why);
    }
    return fd;
}

/* The server started, on this thread or on a helper (o->background: the job then owns the
 * child's ends and the ruleset, marked -1 here; the loop learns of its end through the job's
 * pipe, and where that cannot be watched it is waited for here). 0, or -1 with err. */
static int start_server(mcp_loop *loop, mcp_child *c, const mcp_spawn_opts *o, const char *file,
                        int *sandbox_fd, int *child_fds[3], pid_t *pid, char *err, size_t errlen)
{
    int fds[3] = {*child_fds[0], *child_fds[1], *child_fds[2]}, step, e;
    *pid = 0;
    if (!o->background)
        return start_process(loop, o, file, *sandbox_fd, fds, pid, err, errlen);
    if (start_job(loop, c, o, file, *sandbox_fd, fds, err, errlen) != 0)
        return -1;
    *child_fds[0] = *child_fds[1] = *child_fds[2] = *sandbox_fd = -1;
    mcp_watch_init(&c->jobw, mcp_spawn_job_fd(c->job), on_job_done, c);
    if (mcp_watch_set(loop, &c->jobw, MCP_EV_READ) == 0)
        return 0;
    e = mcp_spawn_job_finish(c->job, pid, &step);
    c->job = NULL;
    if (e == 0)
        return 0;
    describe_failure(o->command, step, e, err, errlen);
    return -1;
}

int mcp_child_spawn(mcp_loop *loop, const mcp_spawn_opts *o, mcp_child **outc, int fds[3],
                    char *err, size_t errlen)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, e, failed, sandbox_fd = -1;
    int *child_fds[3] = {&in[0], &out[1], &errp[1]};
    char file[4096];
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
    sandbox_fd = prepare_sandbox(o, file, &failed, err, errlen);
    if (failed)
        goto fail;
    /* Out of descriptors (EMFILE): raise the soft limit and try again, up to the hard one. */
    while ((e = open_spawn_fds(o, in, out, errp)) != 0 && mcp_fdlimit_retry(loop, e))
        ;
    if (e != 0) {
        char why[128];
        mcp_fdlimit_describe(e, why, sizeof why);
        snprintf(err, errlen, "cannot start '%s': %s", o->command, why);
        goto fail;
    }
    if (start_server(loop, c, o, file, &sandbox_fd, child_fds, &pid, err, errlen) != 0)
        goto fail;
    if (sandbox_fd >= 0)
        close(sandbox_fd);
    if (pid > 0) /* the group, so that a stop reaches helpers; also done in the child (race) */
        setpgid(pid, pid);
    hand_out_fds(in, out, errp, fds);
    child_register(loop, c, head, pid);
    *outc = c;
    return 0;
fail:
    if (sandbox_fd >= 0)
        close(sandbox_fd);
    close_pair(in);
    close_pair(out);
    close_pair(errp);
    free(c->command);
    free(c);
    return -1;
}
