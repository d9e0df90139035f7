/* Private files for the token store (lua/mcp/auth/store.lua): written atomically with mode 0600
 * in a directory of mode 0700, so a token never sits in a file another user can read, and a
 * crash never leaves half a file.
 *
 * write_private_file(path, data [, mode]) -> true | nil, message
 *     data goes to "<path>.tmp-<pid>" (created O_EXCL, mode 0600), is fsync'ed, then renamed
 *     over path. mode (permission bits, default 0600) is set on it before the rename: a config
 *     file rewritten in place keeps the mode it had.
 * mkdir_private(path) -> true | nil, message     every missing component created with 0700
 * file_mode(path) -> permission bits (integer) | nil, message */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "private_file.h"

static int fail(lua_State *L, const char *what, const char *path)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s %s: %s", what, path, strerror(errno));
    return 2;
}

int mcp_write_private_file(lua_State *L)
{
    size_t plen, n, off = 0;
    const char *path = luaL_checklstring(L, 1, &plen);
    const char *data = luaL_checklstring(L, 2, &n);
    lua_Integer mode = luaL_optinteger(L, 3, 0600);
    char *tmp = mcp_newuserdata(L, plen + 32); /* collected: no leak if anything raises */
    int fd, bad, e;
    luaL_argcheck(L, mode >= 0 && mode <= 07777, 3, "permission bits expected");
    snprintf(tmp, plen + 32, "%s.tmp-%ld", path, (long)getpid());
    unlink(tmp); /* a leftover of a crashed writer of this pid */
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, 0600);
    if (fd < 0)
        return fail(L, "cannot create", tmp);
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = errno;
            close(fd);
            unlink(tmp);
            errno = e;
            return fail(L, "cannot write", tmp);
        }
        off += (size_t)w;
    }
    bad = fchmod(fd, (mode_t)mode) != 0 || fsync(fd) != 0;
    e = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        errno = e;
        return fail(L, "cannot write", tmp);
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        return fail(L, "cannot rename to", path);
    }
    lua_pushboolean(L, 1);
    return 1;
}

int mcp_mkdir_private(lua_State *L)
{
    size_t len, i;
    const char *path = luaL_checklstring(L, 1, &len);
    char *p = mcp_newuserdata(L, len + 1);
    memcpy(p, path, len + 1);
    for (i = 1; i <= len; i++) {
        if (p[i] == '/' || p[i] == '\0') {
            char c = p[i];
            p[i] = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return fail(L, "cannot create directory", p);
            p[i] = c;
        }
    }
    lua_pushboolean(L, 1);
    return 1;
}

int mcp_file_mode(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(L, "cannot stat", path);
    lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
    return 1;
}
