/*
 * floor: the cheapest possible stdio MCP client, for the floor of a sequential tools/call on this
 * machine: spawn the server, then per call one write of a preformatted request, epoll_wait, and
 * read until the newline; no JSON, no allocation. What lua-mcp or any client adds sits on top.
 *
 *   build/bench/floor build/bench/tiny_server [CALLS]   (built by `make bench-build`)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + (double)r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int in[2], out[2];
    if (argc < 2 || pipe(in) != 0 || pipe(out) != 0) {
        fprintf(stderr, "usage: %s SERVER [CALLS]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(argv[1], argv[1], (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, out[0], &ev);
    static char buf[1 << 16];
    char req[256];
    double w0 = 0, c0 = 0;
    int warm = n / 20;
    for (int i = 1; i <= warm + n; i++) {
        if (i == warm + 1) {
            w0 = wall_s();
            c0 = cpu_s();
        }
        int len = snprintf(req, sizeof req,
                           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                           "\"arguments\":{\"message\":\"hello\"}}}\n",
                           i);
        if (write(in[1], req, (size_t)len) != len) return 1;
        for (;;) {
            if (epoll_wait(ep, &ev, 1, -1) < 0) return 1;
            ssize_t k = read(out[0], buf, sizeof buf);
            if (k <= 0) return 1;
            if (buf[k - 1] == '\n') break;
        }
    }
    double w = wall_s() - w0, c = cpu_s() - c0;
    printf("floor: %d sequential calls, %.0f calls/s, %.1f us CPU/call (write + epoll_wait + read, no JSON)\n", n,
           n / w, c / n * 1e6);
    close(in[1]);
    return 0;
}
