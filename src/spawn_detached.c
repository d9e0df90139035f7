/* core.spawn_detached(argv) -> true | nil, message: run argv[1] (looked up in PATH) with the given
 * arguments, never through a shell, and do not wait for it: the program is a grandchild, handed
 * to init at once, so nothing is left to reap and no SIGCHLD handler is involved. Its stdin,
 * stdout and stderr are /dev/null. A program that cannot be executed is reported (through a
 * close-on-exec pipe that the successful exec closes). Used to open a browser on an
 * authorization URL (xdg-open, open). The same hygiene as a stdio server's spawn: every
 * descriptor above 2 is close-on-exec (the browser inherits none of the host's files or
 * connections), signals are back to their defaults. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_detached.h"
#include "transports/child.h"

#define MAX_ARGS 32

static void to_devnull(void)
{
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
}

/* Both ends close-on-exec from birth (pipe2 where there is one: no other thread's fork sees
 * them without the flag). */
int mcp_spawn_detached(lua_State *L)
{
    const char *argv[MAX_ARGS + 1];
    int n, i, p[2], err = 0, status, maxfd;
    pid_t pid;
    ssize_t r;
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (int)mcp_rawlen(L, 1);
    luaL_argcheck(L, n >= 1 && n <= MAX_ARGS, 1, "expected 1 to 32 arguments");
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 1, "arguments must be strings");
        argv[i] = lua_tostring(L, -1); /* stays on the stack, so stays valid */
    }
    argv[n] = NULL;
    if (mcp_pipe_cloexec(p) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "pipe: %s", strerror(errno));
        return 2;
    }
    maxfd = mcp_fd_limit();
    pid = fork();
    if (pid < 0) {
        err = errno;
        close(p[0]);
        close(p[1]);
        lua_pushnil(L);
        lua_pushfstring(L, "fork: %s", strerror(err));
        return 2;
    }
    if (pid == 0) {
        /* the intermediate child: fork the program and leave at once */
        pid_t g;
        close(p[0]);
        setsid();
        g = fork();
        if (g == 0) {
            to_devnull();
            mcp_default_signals();
            mcp_cloexec_from(3, maxfd);
            execvp(argv[0], (char *const *)argv);
            err = errno;
            r = write(p[1], &err, sizeof err);
            (void)r;
            _exit(127);
        }
        _exit(g < 0 ? 1 : 0);
    }
    close(p[1]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    do
        r = read(p[0], &err, sizeof err);
    while (r < 0 && errno == EINTR);
    close(p[0]);
    if (r == (ssize_t)sizeof err) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot run %s: %s", argv[0], strerror(err));
        return 2;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot start %s", argv[0]);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}
