/* core.redirect_listener(port, fn) -> handle: the loopback HTTP listener an interactive OAuth
 * login redirects the browser to (RFC 8252 §7.3). It listens on 127.0.0.1 only, on the core's
 * loop; every GET it receives is reported as fn(target), the request target
 * ("/callback?code=...&state=..."), from inside core.step, and answered as fn says: true, the
 * redirect awaited: 200 and a short page; a status 400..499: that status; anything else: 404 (a
 * stray request, /favicon.ico, a redirect with another login's state). A request line longer
 * than 8 KiB, or anything but GET, gets 400 and is not reported.
 *
 * handle:port() -> the bound port; handle:close() stops listening and drops open connections
 * (also done by __gc). At most MAX_CONNS connections are kept; the oldest goes first. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "class_lua.h"
#include "compat.h"
#include "core_loop.h"
#include "redirect_listener.h"
#include "term_escape_lua.h"

#define LISTENER_MT "mcp.redirect_listener"
#define MAX_CONNS 8
#define MAX_REQUEST 8192

typedef struct conn {
    mcp_watch w;
    struct listener *l;
    char buf[MAX_REQUEST];
    size_t len;
    int used;
    unsigned long seq;
} conn;

typedef struct listener {
    mcp_loop *loop;
    mcp_watch w;
    int fd;
    int port;
    int fn_ref;
    unsigned long seq;
    conn conns[MAX_CONNS];
} listener;

typedef struct listener_box {
    listener *l;
} listener_box;

static const char PAGE[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>lua-mcp</title>"
    "</head><body><p>Authorization received. You can close this window.</p>"
    "</body></html>";

static void set_nonblock_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static void conn_close(conn *c)
{
    if (!c->used)
        return;
    mcp_watch_stop(c->l->loop, &c->w);
    close(c->w.fd);
    c->used = 0;
    c->len = 0;
}

/* The connection's socket, taken from the listener (its watch stopped, its slot free): the
 * callback may close the listener, and the answer is written after it. */
static int conn_detach(conn *c)
{
    int fd = c->w.fd;
    mcp_watch_stop(c->l->loop, &c->w);
    c->used = 0;
    c->len = 0;
    return fd;
}

static const char *reason(int status)
{
    if (status == 200)
        return "OK";
    if (status == 404)
        return "Not Found";
    return status == 400 ? "Bad Request" : "Client Error";
}

static const char *page(int status)
{
    if (status == 200)
        return PAGE;
    return status == 404 ? "not found" : "not the redirect this login waits for";
}

/* Best effort: the answer is small, the socket fresh; a short write only cuts the page. */
static void answer(int fd, int status, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
                     "Content-Length: %u\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                     status, reason(status), (unsigned)strlen(body));
    if (n > 0 && write(fd, head, (size_t)n) == n) {
        ssize_t w = write(fd, body, strlen(body));
        (void)w;
    }
}

/* fn(target), and the status to answer with: 200 when it returned true, a 4xx it returned, or
 * 404. */
static int report(listener *l, const char *target, size_t len)
{
    lua_State *L = mcp_loop_lua(l->loop);
    int status = 404;
    if (L == NULL || l->fn_ref == LUA_NOREF)
        return status;
    lua_rawgeti(L, LUA_REGISTRYINDEX, l->fn_ref);
    lua_pushlstring(L, target, len);
    if (lua_pcall(L, 1, 1, 0) != 0) {
        mcp_term_report_lua(L, "mcp: redirect listener callback failed: ");
        lua_pop(L, 1);
        return status;
    }
    if (lua_type(L, -1) == LUA_TBOOLEAN && lua_toboolean(L, -1))
        status = 200;
    else if (lua_type(L, -1) == LUA_TNUMBER) {
        lua_Number n = lua_tonumber(L, -1);
        if (n >= 400 && n <= 499)
            status = (int)n;
    }
    lua_pop(L, 1);
    return status;
}

static void on_conn(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    conn *c = w->data;
    listener *l = c->l;
    ssize_t n;
    char *eol, *sp1, *sp2;
    (void)loop;
    (void)events;
    n = read(w->fd, c->buf + c->len, sizeof c->buf - c->len - 1);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    eol = strstr(c->buf, "\r\n");
    if (eol == NULL) {
        if (c->len >= sizeof c->buf - 1) {
            answer(w->fd, 400, "request too long");
            conn_close(c);
        }
        return;
    }
    if (strstr(c->buf, "\r\n\r\n") == NULL && c->len < sizeof c->buf - 1)
        return; /* wait for the end of the headers, so the answer is not cut off by a reset */
    *eol = '\0';
    sp1 = strchr(c->buf, ' ');
    sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (strncmp(c->buf, "GET ", 4) != 0 || sp2 == NULL || sp1[1] != '/') {
        answer(w->fd, 400, "bad request");
        conn_close(c);
        return;
    }
    {
        /* Copy the target out: the callback may close the listener (and so this buffer). */
        size_t len = (size_t)(sp2 - sp1 - 1);
        char target[MAX_REQUEST];
        int fd, status;
        memcpy(target, sp1 + 1, len);
        fd = conn_detach(c);
        status = report(l, target, len);
        answer(fd, status, page(status));
        close(fd);
    }
}

static void on_accept(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    listener *l = w->data;
    int i, fd, slot = -1;
    (void)events;
    for (;;) {
        fd = accept(l->fd, NULL, NULL);
        if (fd < 0)
            return; /* EAGAIN or a transient error: the watch fires again */
        set_nonblock_cloexec(fd);
        for (i = 0; i < MAX_CONNS; i++)
            if (!l->conns[i].used) {
                slot = i;
                break;
            }
        if (slot < 0) { /* full: drop the oldest */
            slot = 0;
            for (i = 1; i < MAX_CONNS; i++)
                if (l->conns[i].seq < l->conns[slot].seq)
                    slot = i;
            conn_close(&l->conns[slot]);
        }
        l->conns[slot].l = l;
        l->conns[slot].used = 1;
        l->conns[slot].len = 0;
        l->conns[slot].seq = ++l->seq;
        mcp_watch_init(&l->conns[slot].w, fd, on_conn, &l->conns[slot]);
        if (mcp_watch_set(loop, &l->conns[slot].w, MCP_EV_READ) != 0) {
            close(fd);
            l->conns[slot].used = 0;
        }
        slot = -1;
    }
}

static void listener_close(lua_State *L, listener *l)
{
    int i;
    if (l->fd >= 0) {
        mcp_watch_stop(l->loop, &l->w);
        close(l->fd);
        l->fd = -1;
    }
    for (i = 0; i < MAX_CONNS; i++)
        conn_close(&l->conns[i]);
    if (L != NULL && l->fn_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, l->fn_ref);
        l->fn_ref = LUA_NOREF;
    }
}

static int l_listen(lua_State *L)
{
    lua_Integer port = luaL_checkinteger(L, 1);
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    listener_box *box;
    listener *l;
    int one = 1, e;
    luaL_argcheck(L, port >= 0 && port <= 65535, 1, "port out of range");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    box = mcp_newuserdata(L, sizeof *box);
    box->l = NULL;
    luaL_getmetatable(L, LISTENER_MT);
    lua_setmetatable(L, -2);
    l = calloc(1, sizeof *l);
    if (l == NULL)
        return luaL_error(L, "mcp: out of memory");
    l->fd = -1;
    l->fn_ref = LUA_NOREF;
    l->loop = mcp_upvalue_loop(L);
    mcp_loop_ref(l->loop);
    box->l = l;
    l->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (l->fd < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "socket: %s", strerror(errno));
        return 2;
    }
    set_nonblock_cloexec(l->fd);
    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((unsigned short)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(l->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l->fd, 8) != 0 ||
        getsockname(l->fd, (struct sockaddr *)&sa, &salen) != 0) {
        e = errno;
        listener_close(L, l);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot listen on 127.0.0.1:%d: %s", (int)port, strerror(e));
        return 2;
    }
    l->port = ntohs(sa.sin_port);
    mcp_watch_init(&l->w, l->fd, on_accept, l);
    if (mcp_watch_set(l->loop, &l->w, MCP_EV_READ) != 0) {
        listener_close(L, l);
        return luaL_error(L, "mcp: cannot watch the listening socket");
    }
    lua_pushvalue(L, 2);
    l->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static listener_box *check_box(lua_State *L) { return luaL_checkudata(L, 1, LISTENER_MT); }

static int l_port(lua_State *L)
{
    listener_box *box = check_box(L);
    if (box->l == NULL || box->l->fd < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, box->l->port);
    return 1;
}

static int l_close(lua_State *L)
{
    listener_box *box = check_box(L);
    if (box->l != NULL)
        listener_close(L, box->l);
    return 0;
}

static int l_gc(lua_State *L)
{
    listener_box *box = check_box(L);
    if (box->l != NULL) {
        listener_close(L, box->l);
        mcp_loop_unref(box->l->loop);
        free(box->l);
        box->l = NULL;
    }
    return 0;
}

void mcp_redirect_listener_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {{"port", l_port}, {"close", l_close}, {NULL, NULL}};
    mcp_class_metatable(L, LISTENER_MT, methods, l_gc);
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "redirect_listener", l_listen);
}
