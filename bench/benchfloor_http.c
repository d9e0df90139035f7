/*
 * benchfloor_http: bench/floor_http.c's sequential call as a bench-only Lua module (never part of
 * mcp.core), for the driver's `pair` row over HTTP: batches of floor calls alternate with batches
 * of lua-mcp calls in one process, against one server, so both meet the same machine state.
 * One easy handle, reused on one kept-alive connection; per call one preformatted POST with the
 * headers an MCP client sends, driven by curl_multi_socket_action on an epoll of its own with
 * libcurl's timer honoured; the response is counted, not parsed.
 *
 *   local bfh = require("benchfloor_http")
 *   local f = bfh.open(url)  -- bench/tiny_server --http's /mcp URL
 *   f:calls(n)
 *   f:close()                -- also on __gc
 *
 * Builds for any Lua ABI (5.1/LuaJIT to 5.4): only API common to all of them.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#define FLOOR_MT "benchfloor_http.client"

typedef struct floor_http {
    CURLM *m;
    CURL *e;
    struct curl_slist *headers;
    int ep;
    long timeout_ms;
    size_t received;
    long next_id;
    char req[256];
} floor_http;

static int socket_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
    floor_http *f = userp;
    struct epoll_event ev;
    (void)e;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(f->ep, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    memset(&ev, 0, sizeof ev);
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    ev.data.fd = fd;
    if (epoll_ctl(f->ep, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0)
        epoll_ctl(f->ep, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(f->m, fd, (void *)1);
    return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
    (void)m;
    ((floor_http *)userp)->timeout_ms = ms;
    return 0;
}

static size_t write_cb(char *p, size_t size, size_t n, void *userp)
{
    (void)p;
    ((floor_http *)userp)->received += size * n;
    return size * n;
}

static void shut(floor_http *f)
{
    if (f->e != NULL) {
        curl_easy_cleanup(f->e);
        f->e = NULL;
    }
    if (f->m != NULL) {
        curl_multi_cleanup(f->m);
        f->m = NULL;
    }
    curl_slist_free_all(f->headers);
    f->headers = NULL;
    if (f->ep >= 0) {
        close(f->ep);
        f->ep = -1;
    }
}

static int l_open(lua_State *L)
{
    const char *url = luaL_checkstring(L, 1);
    floor_http *f = lua_newuserdata(L, sizeof *f);
    memset(f, 0, sizeof *f);
    f->ep = -1;
    luaL_getmetatable(L, FLOOR_MT);
    lua_setmetatable(L, -2);
    f->ep = epoll_create1(EPOLL_CLOEXEC);
    f->m = curl_multi_init();
    f->e = curl_easy_init();
    if (f->ep < 0 || f->m == NULL || f->e == NULL) {
        shut(f);
        return luaL_error(L, "benchfloor_http: set-up failed");
    }
    f->timeout_ms = -1;
    f->next_id = 1;
    curl_multi_setopt(f->m, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(f->m, CURLMOPT_SOCKETDATA, f);
    curl_multi_setopt(f->m, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(f->m, CURLMOPT_TIMERDATA, f);
    f->headers = curl_slist_append(f->headers, "Content-Type: application/json");
    f->headers = curl_slist_append(f->headers, "Accept: application/json, text/event-stream");
    f->headers = curl_slist_append(f->headers, "MCP-Protocol-Version: 2025-11-25");
    f->headers = curl_slist_append(f->headers, "Mcp-Session-Id: floor");
    f->headers = curl_slist_append(f->headers, "Expect:");
    curl_easy_setopt(f->e, CURLOPT_URL, url);
    curl_easy_setopt(f->e, CURLOPT_HTTPHEADER, f->headers);
    curl_easy_setopt(f->e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(f->e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(f->e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(f->e, CURLOPT_POST, 1L);
    curl_easy_setopt(f->e, CURLOPT_POSTFIELDS, f->req);
    return 1;
}

static int l_calls(lua_State *L)
{
    floor_http *f = luaL_checkudata(L, 1, FLOOR_MT);
    lua_Integer n = luaL_checkinteger(L, 2), i;
    if (f->e == NULL)
        return luaL_error(L, "benchfloor_http: closed");
    for (i = 0; i < n; i++) {
        int len = snprintf(f->req, sizeof f->req,
                           "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":"
                           "\"echo\",\"arguments\":{\"message\":\"hello\"}}}",
                           f->next_id++);
        int running = 1, left;
        long status = 0;
        CURLMsg *msg;
        CURLcode rc;
        curl_easy_setopt(f->e, CURLOPT_POSTFIELDSIZE, (long)len);
        f->received = 0;
        curl_multi_add_handle(f->m, f->e);
        while (running) {
            struct epoll_event evs[4];
            int j, k = epoll_wait(f->ep, evs, 4, (int)f->timeout_ms);
            if (k < 0)
                return luaL_error(L, "benchfloor_http: epoll_wait failed");
            if (k == 0) { /* libcurl's timer is one-shot: it asks again if it wants another */
                f->timeout_ms = -1;
                curl_multi_socket_action(f->m, CURL_SOCKET_TIMEOUT, 0, &running);
                continue;
            }
            for (j = 0; j < k; j++)
                curl_multi_socket_action(f->m, evs[j].data.fd,
                                         (evs[j].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                                             (evs[j].events & EPOLLOUT ? CURL_CSELECT_OUT : 0),
                                         &running);
        }
        msg = curl_multi_info_read(f->m, &left);
        rc = msg != NULL ? msg->data.result : CURLE_FAILED_INIT; /* (msg dies with the removal) */
        curl_easy_getinfo(f->e, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(f->m, f->e);
        if (rc != CURLE_OK || status != 200 || f->received == 0)
            return luaL_error(L, "benchfloor_http: call failed (HTTP %d)", (int)status);
    }
    return 0;
}

static int l_close(lua_State *L)
{
    shut(luaL_checkudata(L, 1, FLOOR_MT));
    return 0;
}

__attribute__((visibility("default"))) int luaopen_benchfloor_http(lua_State *L)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (luaL_newmetatable(L, FLOOR_MT)) {
        lua_createtable(L, 0, 2);
        lua_pushcfunction(L, l_calls);
        lua_setfield(L, -2, "calls");
        lua_pushcfunction(L, l_close);
        lua_setfield(L, -2, "close");
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_close);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_open);
    lua_setfield(L, -2, "open");
    return 1;
}
