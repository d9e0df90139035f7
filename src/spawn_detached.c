/* core.spawn_detached(argv) -> true | nil, message: run argv[1] (looked up in PATH) with the given
 * arguments, never through a shell, and do not wait for it: the program is a grandchild, handed
 * to init at once, so nothing is left to reap and no SIGCHLD handler is involved. Its stdin,
 * stdout and stderr are /dev/null. A program that cannot be executed is reported (through a
 * close-on-exec pipe that the successful exec closes). Started without copying the host (spawn.h:
 * both the intermediate and the program share its memory until they exec or exit). Used to open a browser on an
 * authorization URL (xdg-open, open). The same hygiene as a stdio server's spawn: every
 * descriptor above 2 is close-on-exec (the browser inherits none of the host's files or
 * connections), signals are back to their defaults. Out of descriptors (EMFILE), the soft fd
 * limit is raised toward the hard one and the start's descriptors made again, as for
 * run_program (fdlimit.h); the program gets the host's limit back. At the hard limit: nil,
 * "cannot run X: out of file descriptors (soft limit N, hard M)", nothing left open. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "argv_lua.h"
#include "core_loop.h"
#include "fdlimit.h"
#include "spawn_detached.h"
#include "transports/spawn.h"

extern char **environ;

/* The start's descriptors: /dev/null in *null, the report pipe in rep. 0, or an errno; then none
 * is open. */
static int open_fds(int *null, int rep[2])
{
    int e;
    *null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (*null < 0)
        return errno;
    if (mcp_pipe_cloexec(rep) != 0) {
        e = errno;
        close(*null);
        return e;
    }
    return 0;
}

/* The program in a new session with /dev/null on 0-2, not waited for; loop (NULL: the Lua state
 * is closing) raises the fd limit when the descriptors are exhausted. 0, or an errno. */
static int start_detached(mcp_loop *loop, const char *const *argv)
{
    char file[4096];
    mcp_spawn_plan pl;
    struct rlimit nofile;
    pid_t pid;
    int step, e, null, rep[2];
    e = mcp_spawn_resolve(argv[0], environ, file, sizeof file);
    if (e != 0)
        return e;
    while ((e = open_fds(&null, rep)) != 0 && loop != NULL && mcp_fdlimit_retry(loop, e))
        ;
    if (e != 0)
        return e;
    pl.file = file;
    pl.argv = (char *const *)argv;
    pl.envp = environ;
    pl.cwd = NULL;
    pl.fd[0] = pl.fd[1] = pl.fd[2] = null;
    pl.mode = MCP_SPAWN_DETACHED;
    pl.nofile = loop != NULL && mcp_fdlimit_for_child(loop, &nofile) ? &nofile : NULL;
    pl.sandbox_fd = -1;
    pl.maxfd = mcp_fd_limit();
    e = mcp_spawn_start_with(&pl, rep, &pid, &step); /* (it closes rep) */
    close(null);
    return e;
}

static int l_spawn_detached(lua_State *L)
{
    const char *argv[MCP_ARGV_MAX + 1];
    char why[160];
    int e;
    lua_settop(L, 1); /* (argv's strings go above it) */
    mcp_argv_check(L, argv);
    e = start_detached(mcp_upvalue_loop_if_any(L), argv);
    if (e != 0) {
        mcp_fdlimit_describe(e, why, sizeof why);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot run %s: %s", argv[0], why);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

void mcp_spawn_detached_lua_open(lua_State *L, int box)
{
    mcp_set_loop_function(L, box, "spawn_detached", l_spawn_detached);
}
