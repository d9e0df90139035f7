#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np, _addchdir_np */
#endif
#include "spawn_fast.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define MCP_HAVE_SPAWN_FAST 1
#endif

int mcp_spawn_fast_fits(const mcp_spawn_fast *f)
{
#ifdef MCP_HAVE_SPAWN_FAST
    return f->fd0 > 2 && f->fd1 > 2 && (f->fd2 < 0 || f->fd2 > 2);
#else
    (void)f;
    return 0;
#endif
}

#ifdef MCP_HAVE_SPAWN_FAST
/* Process group of its own (a stop reaches the helpers it starts), every signal at its default
 * (not the host's ignored SIGPIPE) and none blocked. */
static int set_attrs(posix_spawnattr_t *a)
{
    sigset_t all, none;
    int e;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    if ((e = posix_spawnattr_setflags(a, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                             POSIX_SPAWN_SETSIGMASK)) != 0 ||
        (e = posix_spawnattr_setpgroup(a, 0)) != 0 ||
        (e = posix_spawnattr_setsigdefault(a, &all)) != 0 ||
        (e = posix_spawnattr_setsigmask(a, &none)) != 0)
        return e;
    return 0;
}

/* The standard descriptors, the working directory, then every other descriptor closed: the
 * server inherits nothing the host opened without FD_CLOEXEC. */
static int set_actions(posix_spawn_file_actions_t *fa, const mcp_spawn_fast *f)
{
    int e;
    if ((e = posix_spawn_file_actions_adddup2(fa, f->fd0, 0)) != 0 ||
        (e = posix_spawn_file_actions_adddup2(fa, f->fd1, 1)) != 0)
        return e;
    if (f->fd2 >= 0 && (e = posix_spawn_file_actions_adddup2(fa, f->fd2, 2)) != 0)
        return e;
    if (f->cwd != NULL && (e = posix_spawn_file_actions_addchdir_np(fa, f->cwd)) != 0)
        return e;
    return posix_spawn_file_actions_addclosefrom_np(fa, 3);
}

int mcp_spawn_fast_start(const mcp_spawn_fast *f, pid_t *pid)
{
    posix_spawnattr_t a;
    posix_spawn_file_actions_t fa;
    int e;
    if (!mcp_spawn_fast_fits(f))
        return ENOTSUP;
    if ((e = posix_spawnattr_init(&a)) != 0)
        return e;
    if ((e = posix_spawn_file_actions_init(&fa)) != 0) {
        posix_spawnattr_destroy(&a);
        return e;
    }
    e = set_attrs(&a);
    if (e == 0)
        e = set_actions(&fa, f);
    if (e == 0)
        e = posix_spawn(pid, f->file, &fa, &a, f->argv, f->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&a);
    return e;
}
#else
int mcp_spawn_fast_start(const mcp_spawn_fast *f, pid_t *pid)
{
    (void)f;
    (void)pid;
    return ENOTSUP;
}
#endif
