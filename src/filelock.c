/* core.file_lock(path) -> lock | false | nil, message: an exclusive advisory lock (flock) on
 * path, for a store that many processes share (the OAuth token store holds it around
 * read-refresh-write). Never waits: false means another holder has it (another process, or
 * another lock object of this one: flock locks belong to the open file, not the process), and
 * the caller sleeps on its own loop and tries again. path is created with mode 0600 when
 * missing, never followed when it is a symbolic link, and refused when it is not a regular file
 * of this user's without group/other access (the checks of private_file.c).
 *
 * lock:unlock() releases it (and closes the file); lock:close() is the same; so is __gc, so a
 * lock dropped by an error is released at the next collection at the latest. lock:held() tells
 * whether it is still held. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "filelock.h"
#include "private_file.h"

#define FILELOCK_MT "mcp.file_lock"

typedef struct file_lock {
    int fd; /* -1 once released */
} file_lock;

static int l_file_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    file_lock *lk = mcp_newuserdata(L, sizeof *lk);
    struct stat st;
    int e;
    lk->fd = -1;
    luaL_getmetatable(L, FILELOCK_MT);
    lua_setmetatable(L, -2);
    lk->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lk->fd < 0) {
        e = errno;
        lua_pushnil(L);
        if (e == ELOOP)
            lua_pushfstring(L, "%s is a symbolic link (never followed): remove it", path);
        else
            lua_pushfstring(L, "cannot open %s: %s", path, strerror(e));
        return 2;
    }
    if (fstat(lk->fd, &st) != 0) {
        e = errno;
        close(lk->fd);
        lk->fd = -1;
        lua_pushnil(L);
        lua_pushfstring(L, "cannot stat %s: %s", path, strerror(e));
        return 2;
    }
    if (!mcp_private_check(L, &st, path, 0)) {
        close(lk->fd);
        lk->fd = -1;
        return 2;
    }
    while (flock(lk->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        e = errno;
        close(lk->fd);
        lk->fd = -1;
        if (e == EWOULDBLOCK) {
            lua_pushboolean(L, 0);
            return 1;
        }
        lua_pushnil(L);
        lua_pushfstring(L, "cannot lock %s: %s", path, strerror(e));
        return 2;
    }
    return 1;
}

static int l_unlock(lua_State *L)
{
    file_lock *lk = luaL_checkudata(L, 1, FILELOCK_MT);
    if (lk->fd >= 0) {
        flock(lk->fd, LOCK_UN); /* (closing releases it too; explicit for a forked copy of fd) */
        close(lk->fd);
        lk->fd = -1;
    }
    return 0;
}

static int l_held(lua_State *L)
{
    file_lock *lk = luaL_checkudata(L, 1, FILELOCK_MT);
    lua_pushboolean(L, lk->fd >= 0);
    return 1;
}

static int l_tostring(lua_State *L)
{
    file_lock *lk = luaL_checkudata(L, 1, FILELOCK_MT);
    lua_pushstring(L, lk->fd >= 0 ? "mcp.file_lock (held)" : "mcp.file_lock (released)");
    return 1;
}

void mcp_filelock_lua_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"unlock", l_unlock}, {"close", l_unlock}, {"held", l_held}, {NULL, NULL}};
    if (luaL_newmetatable(L, FILELOCK_MT)) {
        lua_newtable(L);
        mcp_setfuncs(L, methods, 0);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_unlock);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_file_lock);
    lua_setfield(L, -2, "file_lock");
}
