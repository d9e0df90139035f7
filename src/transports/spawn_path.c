/* The program a command names (spawn.h: mcp_spawn_resolve), found before the child exists: the
 * child may only make system calls, and execvp's PATH search is not one. */
#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env_lookup(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

/* A regular file we may execute. */
static int runnable(const char *file)
{
    struct stat st;
    if (stat(file, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(file, X_OK) == 0 ? 0 : errno;
}

int mcp_spawn_resolve(const char *command, char *const *envp, char *out, size_t outlen)
{
    const char *path, *p;
    if (strchr(command, '/') != NULL) {
        int e;
        /* checked here, not left to exec: a missing file is told as such, not as a child that
         * exited 127 */
        if (strlen(command) >= outlen)
            return ENAMETOOLONG;
        if ((e = runnable(command)) != 0)
            return e;
        memcpy(out, command, strlen(command) + 1);
        return 0;
    }
    path = env_lookup(envp, "PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        int n = snprintf(out, outlen, "%.*s%s%s", (int)dlen, p, dlen ? "/" : "", command);
        if (n > 0 && (size_t)n < outlen && runnable(out) == 0)
            return 0;
        if (end == NULL)
            break;
        p = end;
    }
    return ENOENT;
}
