/* A short program run on three pipes (run_io.h): its descriptors, the start (spawn.h: the same
 * descriptor and signal hygiene as a stdio server, no copy of the host), the pump of its stdin and
 * output, the timeout and the reaping. */
#include "run_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transports/spawn.h"

#define MAX_OUTPUT (1024 * 1024)

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mcp_run_init(mcp_run_io *io, const char *input, size_t input_len)
{
    memset(io, 0, sizeof *io);
    io->fd[0] = io->fd[1] = io->fd[2] = -1;
    io->child[0] = io->child[1] = io->child[2] = -1;
    io->report[0] = io->report[1] = -1;
    io->input = input;
    io->input_len = input_len;
    io->pid = -1;
}

void mcp_run_free(mcp_run_io *io)
{
    int i;
    for (i = 0; i < 3; i++) {
        close_fd(&io->fd[i]);
        close_fd(&io->child[i]);
        free(io->buf[i]);
        io->buf[i] = NULL;
        io->len[i] = 0;
    }
    close_fd(&io->report[0]);
    close_fd(&io->report[1]);
}

static void take(mcp_run_io *io, int i)
{
    char chunk[4096];
    ssize_t n = read(io->fd[i], chunk, sizeof chunk);
    if (n > 0 && io->len[i] + (size_t)n <= MAX_OUTPUT) {
        char *b = realloc(io->buf[i], io->len[i] + (size_t)n);
        if (b != NULL) {
            memcpy(b + io->len[i], chunk, (size_t)n);
            io->buf[i] = b;
            io->len[i] += (size_t)n;
        }
    } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        close_fd(&io->fd[i]);
    }
}

/* One poll round: write what stdin takes, read what is there. 1 once all three are closed, -1
 * when cancel_fd is readable, else 0. */
static int pump(mcp_run_io *io, int wait_ms, int cancel_fd)
{
    struct pollfd pf[4];
    int i;
    for (i = 0; i < 3; i++) {
        pf[i].fd = io->fd[i];
        pf[i].events = i == 0 ? POLLOUT : POLLIN;
        pf[i].revents = 0;
    }
    pf[3].fd = cancel_fd;
    pf[3].events = POLLIN;
    pf[3].revents = 0;
    if (poll(pf, 4, wait_ms) < 0)
        return 0;
    if (pf[3].revents)
        return -1;
    if (io->fd[0] >= 0 && pf[0].revents) {
        ssize_t n = write(io->fd[0], io->input + io->written, io->input_len - io->written);
        if (n > 0)
            io->written += (size_t)n;
        if ((n < 0 && errno != EINTR && errno != EAGAIN) || io->written >= io->input_len)
            close_fd(&io->fd[0]);
    }
    for (i = 1; i < 3; i++)
        if (io->fd[i] >= 0 && pf[i].revents)
            take(io, i);
    return io->fd[0] < 0 && io->fd[1] < 0 && io->fd[2] < 0;
}

int mcp_run_open(mcp_run_io *io)
{
    int i, e = 0, p[4][2];
    for (i = 0; i < 4; i++)
        p[i][0] = p[i][1] = -1;
    for (i = 0; i < 4 && e == 0; i++)
        if (mcp_pipe_cloexec(p[i]) != 0) {
            e = errno;
            p[i][0] = p[i][1] = -1;
        }
    if (e != 0) {
        for (i = 0; i < 4; i++) {
            close_fd(&p[i][0]);
            close_fd(&p[i][1]);
        }
        return e;
    }
    io->fd[0] = p[0][1];
    io->child[0] = p[0][0];
    for (i = 1; i < 3; i++) {
        io->fd[i] = p[i][0];
        io->child[i] = p[i][1];
    }
    for (i = 0; i < 3; i++)
        fcntl(io->fd[i], F_SETFL, O_NONBLOCK); /* (the program's ends stay blocking) */
    io->report[0] = p[3][0];
    io->report[1] = p[3][1];
    return 0;
}

/* The program on the pipes' child ends. The report pipe is closed here or by the start,
 * whatever the outcome. 0, or an errno with *step. */
static int start_child(mcp_run_io *io, char *const *argv, char *const *envp,
                       const struct rlimit *nofile, int *step)
{
    char file[4096];
    mcp_spawn_plan pl;
    int rep[2] = {io->report[0], io->report[1]};
    int e = mcp_spawn_resolve(argv[0], envp, file, sizeof file);
    io->report[0] = io->report[1] = -1;
    if (e != 0) {
        close_fd(&rep[0]);
        close_fd(&rep[1]);
        *step = MCP_SPAWN_STEP_EXEC;
        return e;
    }
    pl.file = file;
    pl.argv = argv;
    pl.envp = envp;
    pl.cwd = NULL;
    pl.fd[0] = io->child[0];
    pl.fd[1] = io->child[1];
    pl.fd[2] = io->child[2];
    pl.mode = MCP_SPAWN_SAME_GROUP;
    pl.nofile = nofile;
    pl.sandbox_fd = -1;
    pl.maxfd = mcp_fd_limit();
    return mcp_spawn_start_with(&pl, rep, &io->pid, step);
}

int mcp_run_start(mcp_run_io *io, char *const *argv, char *const *envp, const struct rlimit *nofile,
                  int *step)
{
    int i, e;
    *step = MCP_SPAWN_STEP_CLONE;
    /* (EBADF: mcp_run_open was not called, or failed: never start with the host's 0-2) */
    e = io->report[0] >= 0 ? start_child(io, argv, envp, nofile, step) : EBADF;
    for (i = 0; i < 3; i++) {
        close_fd(&io->child[i]);
        if (e != 0)
            close_fd(&io->fd[i]);
    }
    if (e != 0)
        io->pid = -1;
    return e;
}

/* Sleep up to ms, cut short by cancel_fd: -1 when it is readable, else 0. */
static int pause_ms(int cancel_fd, int ms)
{
    struct pollfd pf;
    pf.fd = cancel_fd;
    pf.events = POLLIN;
    pf.revents = 0;
    return poll(&pf, 1, ms) > 0 && pf.revents ? -1 : 0;
}

int mcp_run_finish(mcp_run_io *io, int timeout_ms, int cancel_fd)
{
    long long deadline = now_ms() + timeout_ms;
    int status = 0, r, i, why = MCP_RUN_CANCELLED;
    if (io->input_len == 0)
        close_fd(&io->fd[0]);
    while ((r = pump(io, 50, cancel_fd)) == 0)
        if (now_ms() >= deadline)
            break;
    for (i = 0; i < 3; i++)
        close_fd(&io->fd[i]);
    while (r >= 0) {
        pid_t w = waitpid(io->pid, &status, WNOHANG);
        if (w == io->pid || (w < 0 && errno != EINTR))
            break; /* (ECHILD: not ours to reap any more) */
        if (now_ms() >= deadline) {
            why = MCP_RUN_TIMED_OUT;
            r = -1;
        } else {
            r = pause_ms(cancel_fd, 10);
        }
    }
    if (r < 0) {
        kill(io->pid, SIGKILL);
        while (waitpid(io->pid, &status, 0) < 0 && errno == EINTR)
            ;
        status = why;
    }
    io->pid = -1;
    return status;
}
