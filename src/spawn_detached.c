/* core.spawn_detached(argv) -> true | nil, message: run argv[1] (looked up in PATH) with the given
 * arguments, never through a shell, and do not wait for it: the program is a grandchild, handed
 * to init at once, so nothing is left to reap and no SIGCHLD handler is involved. Its stdin,
 * stdout and stderr are /dev/null. A program that cannot be executed is reported (through a
 * close-on-exec pipe that the successful exec closes). Started without copying the host (spawn.h:
 * both the intermediate and the program share its memory until they exec or exit). Used to open a browser on an
 * authorization URL (xdg-open, open). The same hygiene as a stdio server's spawn: every
 * descriptor above 2 is close-on-exec (the browser inherits none of the host's files or
 * connections), signals are back to their defaults. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "argv_lua.h"
#include "spawn_detached.h"
#include "transports/spawn.h"

extern char **environ;

/* The program in a new session with /dev/null on 0-2, not waited for. 0, or an errno. */
static int start_detached(const char *const *argv)
{
    char file[4096];
    mcp_spawn_plan pl;
    pid_t pid;
    int step, e, null;
    e = mcp_spawn_resolve(argv[0], environ, file, sizeof file);
    if (e != 0)
        return e;
    null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0)
        return errno;
    pl.file = file;
    pl.argv = (char *const *)argv;
    pl.envp = environ;
    pl.cwd = NULL;
    pl.fd[0] = pl.fd[1] = pl.fd[2] = null;
    pl.mode = MCP_SPAWN_DETACHED;
    pl.nofile = NULL;
    pl.sandbox_fd = -1;
    pl.maxfd = mcp_fd_limit();
    e = mcp_spawn_start(&pl, &pid, &step);
    close(null);
    return e;
}

int mcp_spawn_detached(lua_State *L)
{
    const char *argv[MCP_ARGV_MAX + 1];
    int e;
    mcp_argv_check(L, argv);
    e = start_detached(argv);
    if (e != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot run %s: %s", argv[0], strerror(e));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}
