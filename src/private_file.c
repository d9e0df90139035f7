/* Private files for the token store (lua/mcp/auth/store.lua): written atomically with mode 0600
 * in a directory of mode 0700, so a token never sits in a file another user can read, and a
 * crash never leaves half a file.
 *
 * write_private_file(path, data [, mode]) -> true | nil, message
 *     data goes to "<path>.tmp-<pid>" (created O_EXCL, mode 0600), is fsync'ed, then renamed
 *     over path. mode (permission bits, default 0600) is set on it before the rename: a config
 *     file rewritten in place keeps the mode it had.
 * mkdir_private(path) -> true | nil, message     every missing component created with 0700
 * file_mode(path) -> permission bits (integer) | nil, message
 *
 * A store shared with no one also refuses what another user could have put or read there:
 * check_private(path, "dir" | "file") -> true | false (missing) | nil, message
 *     path itself (lstat: a symbolic link is refused, never followed) must be a directory or a
 *     regular file owned by this user (the effective uid) with no group/other access.
 * read_private_file(path) -> data | false (missing) | nil, message
 *     opened with O_NOFOLLOW and checked on the open file (fstat), then read whole.
 * The messages name the path and the fix (chmod 700 / chmod 600, remove the link). */
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

/* 1 when st is a directory (want_dir) or regular file of this user's with no group/other access;
 * else pushes nil and a message naming path and the fix, and returns 0. */
int mcp_private_check(lua_State *L, const struct stat *st, const char *path, int want_dir)
{
    char mode[8];
    if (S_ISLNK(st->st_mode)) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s is a symbolic link (never followed): remove it", path);
        return 0;
    }
    if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s is not a %s", path, want_dir ? "directory" : "regular file");
        return 0;
    }
    if (st->st_uid != geteuid()) {
        lua_pushnil(L);
        lua_pushfstring(L,
                        "%s belongs to uid %d, not to this user (uid %d): remove it, or chown it",
                        path, (int)st->st_uid, (int)geteuid());
        return 0;
    }
    if ((st->st_mode & 077) != 0) {
        snprintf(mode, sizeof mode, "0%03o", (unsigned)(st->st_mode & 0777));
        lua_pushnil(L);
        lua_pushfstring(L, "%s has mode %s (group/other access): chmod %s %s", path, mode,
                        want_dir ? "700" : "600", path);
        return 0;
    }
    return 1;
}

int mcp_check_private(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    const char *kind = luaL_checkstring(L, 2);
    struct stat st;
    luaL_argcheck(L, strcmp(kind, "dir") == 0 || strcmp(kind, "file") == 0, 2,
                  "\"dir\" or \"file\" expected");
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return fail(L, "cannot stat", path);
        lua_pushboolean(L, 0);
        return 1;
    }
    if (!mcp_private_check(L, &st, path, kind[0] == 'd'))
        return 2;
    lua_pushboolean(L, 1);
    return 1;
}

/* Reads the size bytes of fd into a Lua string (pushed); 0 and errno on a read error. */
static int read_all(lua_State *L, int fd, size_t size)
{
    char *buf = mcp_newuserdata(L, size + 1); /* collected: no leak if anything raises */
    size_t off = 0;
    while (off < size) {
        ssize_t r = read(fd, buf + off, size - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return 0;
        if (r == 0)
            break;
        off += (size_t)r;
    }
    lua_pushlstring(L, buf, off);
    return 1;
}

int mcp_read_private_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), ok, e;
    if (fd < 0) {
        if (errno == ENOENT) {
            lua_pushboolean(L, 0);
            return 1;
        }
        if (errno != ELOOP)
            return fail(L, "cannot open", path);
        lua_pushnil(L);
        lua_pushfstring(L, "%s is a symbolic link (never followed): remove it", path);
        return 2;
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        errno = e;
        return fail(L, "cannot stat", path);
    }
    if (!mcp_private_check(L, &st, path, 0)) {
        close(fd);
        return 2;
    }
    ok = read_all(L, fd, (size_t)st.st_size);
    e = errno;
    close(fd);
    errno = e;
    return ok ? 1 : fail(L, "cannot read", path);
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
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
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
