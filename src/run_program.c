/* core.run_program(argv, input, timeout_ms) -> {status = exit status (or 128 + signal), stdout =,
 * stderr =} | nil, message. argv[1] is looked up in PATH; no shell is involved, so no argument is
 * ever interpreted. The program gets the same hygiene as a stdio server (every descriptor above
 * 2 close-on-exec, signals at their defaults, started without copying the host: spawn.h),
 * `input` on its stdin, and is waited for, blocking,
 * at most timeout_ms (default 10000; then it is killed and nil, "... timed out" returned).
 * Output beyond 1 MiB per stream is dropped. A program that cannot be executed (not found in PATH,
 * not executable) gives status 127, as a shell reports it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_program.h"
#include "transports/spawn.h"

extern char **environ;

#define MAX_ARGS 32
#define MAX_OUTPUT (1024 * 1024)

typedef struct run_io {
    int fd[3]; /* parent ends: stdin (write), stdout, stderr (read); -1 once closed */
    const char *input;
    size_t input_len, written;
    char *buf[3];
    size_t len[3];
} run_io;

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

static void take(run_io *io, int i)
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

/* One poll round: write what stdin takes, read what is there. 1 once all three are closed. */
static int pump(run_io *io, int wait_ms)
{
    struct pollfd pf[3];
    int i;
    for (i = 0; i < 3; i++) {
        pf[i].fd = io->fd[i];
        pf[i].events = i == 0 ? POLLOUT : POLLIN;
        pf[i].revents = 0;
    }
    if (poll(pf, 3, wait_ms) < 0)
        return 0;
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

/* The program on the three pipes, in the host's environment and process group. 0, or an errno
 * with *step (MCP_SPAWN_STEP_EXEC: it could not be executed). */
static int start_child(const char *const *argv, int p[3][2], pid_t *pid, int *step)
{
    char file[4096];
    mcp_spawn_plan pl;
    int e = mcp_spawn_resolve(argv[0], environ, file, sizeof file);
    if (e != 0) {
        *step = MCP_SPAWN_STEP_EXEC;
        return e;
    }
    pl.file = file;
    pl.argv = (char *const *)argv;
    pl.envp = environ;
    pl.cwd = NULL;
    pl.fd[0] = p[0][0];
    pl.fd[1] = p[1][1];
    pl.fd[2] = p[2][1];
    pl.mode = MCP_SPAWN_SAME_GROUP;
    pl.nofile = NULL;
    pl.sandbox_fd = -1;
    pl.maxfd = mcp_fd_limit();
    return mcp_spawn_start(&pl, pid, step);
}

/* Start with three pipes; the parent keeps its ends in io->fd. 0, or an errno with *step. */
static int start(const char *const *argv, run_io *io, pid_t *pid, int *step)
{
    int i, e = 0, p[3][2];
    for (i = 0; i < 3; i++)
        p[i][0] = p[i][1] = -1;
    *step = MCP_SPAWN_STEP_CLONE;
    for (i = 0; i < 3 && e == 0; i++)
        if (mcp_pipe_cloexec(p[i]) != 0)
            e = errno;
    if (e == 0)
        e = start_child(argv, p, pid, step);
    close_fd(&p[0][0]);
    close_fd(&p[1][1]);
    close_fd(&p[2][1]);
    io->fd[0] = p[0][1];
    io->fd[1] = p[1][0];
    io->fd[2] = p[2][0];
    for (i = 0; i < 3; i++)
        if (io->fd[i] >= 0)
            fcntl(io->fd[i], F_SETFL, O_NONBLOCK);
    return e;
}

/* Pump until the program closed its output and exited, or the deadline: its wait status, or
 * -1 when it was killed for taking too long. */
static int finish(run_io *io, pid_t pid, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    int status = 0, i;
    if (io->input_len == 0)
        close_fd(&io->fd[0]);
    while (!pump(io, 50))
        if (now_ms() >= deadline)
            break;
    for (i = 0; i < 3; i++)
        close_fd(&io->fd[i]);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_ms() >= deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return -1;
        }
        poll(NULL, 0, 10);
    }
    return status;
}

/* {status =, stdout =, stderr =} from a wait status and what was read; frees the buffers. */
static int push_result(lua_State *L, int status, run_io *io)
{
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    lua_setfield(L, -2, "status");
    lua_pushlstring(L, io->buf[1] ? io->buf[1] : "", io->len[1]);
    lua_setfield(L, -2, "stdout");
    lua_pushlstring(L, io->buf[2] ? io->buf[2] : "", io->len[2]);
    lua_setfield(L, -2, "stderr");
    free(io->buf[1]);
    free(io->buf[2]);
    return 1;
}

int mcp_run_program(lua_State *L)
{
    const char *argv[MAX_ARGS + 1];
    int n, i, status, e, step;
    pid_t pid = -1;
    run_io io;
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (int)mcp_rawlen(L, 1);
    luaL_argcheck(L, n >= 1 && n <= MAX_ARGS, 1, "expected 1 to 32 arguments");
    memset(&io, 0, sizeof io);
    io.input = luaL_optlstring(L, 2, "", &io.input_len);
    status = (int)luaL_optinteger(L, 3, 10000);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 1, "arguments must be strings");
        argv[i] = lua_tostring(L, -1); /* stays on the stack, so stays valid */
    }
    argv[n] = NULL;
    e = start(argv, &io, &pid, &step);
    if (e != 0) {
        for (i = 0; i < 3; i++)
            close_fd(&io.fd[i]);
        if (step == MCP_SPAWN_STEP_EXEC)
            return push_result(L, 127 << 8, &io);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot run %s: %s", argv[0], strerror(e));
        return 2;
    }
    status = finish(&io, pid, status);
    if (status == -1) {
        free(io.buf[1]);
        free(io.buf[2]);
        lua_pushnil(L);
        lua_pushfstring(L, "%s timed out", argv[0]);
        return 2;
    }
    return push_result(L, status, &io);
}
