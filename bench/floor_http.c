/*
 * floor_http: the cheapest possible streamable-HTTP MCP client on libcurl, for the floor of a
 * sequential tools/call over HTTP on this machine: one easy handle, reused, on one kept-alive
 * connection; per call one preformatted POST (the headers an MCP client sends: Content-Type,
 * Accept, MCP-Protocol-Version, Mcp-Session-Id; no Expect), driven by the multi interface the way
 * lua-mcp drives it (curl_multi_socket_action on epoll, libcurl's timer honoured); the response
 * is counted, not kept, and not parsed. No JSON, no allocation of ours. What lua-mcp or any
 * libcurl client adds sits on top.
 *
 *   build/bench/floor_http URL [CALLS]   (URL of bench/tiny_server --http; built by make bench-build)
 *
 * Prints a "BENCH client=floor ..." line for bench/run.sh (bench/report.lua), then one line for
 * people. Warms up CALLS/20 calls first, as bench/floor.c does.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

static int ep = -1;
static long timeout_ms = -1;
static size_t received;

static double cpu_s(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + (double)r.ru_stime.tv_sec +
           r.ru_stime.tv_usec / 1e6;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int socket_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct epoll_event ev = {0};
    (void)e;
    (void)userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    ev.data.fd = fd;
    if (epoll_ctl(ep, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0)
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(userp, fd, (void *)1);
    return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
    (void)m;
    (void)userp;
    timeout_ms = ms;
    return 0;
}

static size_t write_cb(char *p, size_t size, size_t n, void *userp)
{
    (void)p;
    (void)userp;
    received += size * n;
    return size * n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [CALLS]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ep = epoll_create1(0);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(m, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, timer_cb);
    CURL *e = curl_easy_init();
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json, text/event-stream");
    h = curl_slist_append(h, "MCP-Protocol-Version: 2025-11-25");
    h = curl_slist_append(h, "Mcp-Session-Id: floor");
    h = curl_slist_append(h, "Expect:");
    char req[256];
    curl_easy_setopt(e, CURLOPT_URL, argv[1]);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, req);
    double w0 = 0, c0 = 0;
    int warm = n / 20;
    for (int i = 1; i <= warm + n; i++) {
        if (i == warm + 1) {
            w0 = wall_s();
            c0 = cpu_s();
        }
        int len = snprintf(req, sizeof req,
                           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                           "\"echo\",\"arguments\":{\"message\":\"hello\"}}}",
                           i);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)len);
        received = 0;
        int running = 1;
        curl_multi_add_handle(m, e);
        while (running) {
            struct epoll_event evs[4];
            int k = epoll_wait(ep, evs, 4, (int)timeout_ms);
            if (k < 0)
                return 1;
            if (k == 0) {
                /* libcurl's timer is one-shot: it asks again (timer_cb) if it wants another.
                 * Waiting with the stale 0 ms would spin. */
                timeout_ms = -1;
                curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
                continue;
            }
            for (int j = 0; j < k; j++)
                curl_multi_socket_action(m, evs[j].data.fd,
                                         (evs[j].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                                             (evs[j].events & EPOLLOUT ? CURL_CSELECT_OUT : 0),
                                         &running);
        }
        int left;
        CURLMsg *msg = curl_multi_info_read(m, &left);
        long status = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        if (msg == NULL || msg->data.result != CURLE_OK || status != 200 || received == 0) {
            fprintf(stderr, "floor_http: call %d failed (HTTP %ld, %s)\n", i, status,
                    msg ? curl_easy_strerror(msg->data.result) : "no result");
            return 1;
        }
        curl_multi_remove_handle(m, e);
    }
    double w = wall_s() - w0, c = cpu_s() - c0;
    printf("BENCH client=floor transport=http row=seq ops=%d wall_ms=%.3f cpu_s=%.6f hwm_kb=0\n", n, w * 1e3, c);
    printf("floor (HTTP): %d sequential calls, %.0f calls/s, %.1f us CPU/call (libcurl multi, one reused "
           "easy handle, kept-alive connection, no JSON)\n",
           n, n / w, c / n * 1e6);
    curl_easy_cleanup(e);
    curl_slist_free_all(h);
    curl_multi_cleanup(m);
    curl_global_cleanup();
    return 0;
}
