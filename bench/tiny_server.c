/*
 * tiny_server: the MCP server of the benchmarks (bench/README.md). Its cost per message is meant to
 * be far below any client's: every result is precomputed at start-up, and a message is "parsed" by
 * plain string search for its "method", "id", tool "name" and (initialize only) "protocolVersion".
 * No JSON library. It trusts its input: it serves the two benchmark drivers, nothing else.
 *
 *   tiny_server                      stdio: newline-delimited JSON-RPC on stdin/stdout, exits on EOF
 *   tiny_server --http PORT          streamable HTTP on 127.0.0.1:PORT (0: any free port), POST /mcp
 *                                    only; prints the port on stdout, exits after --idle-exit seconds
 *                                    without traffic (default 600) or on SIGTERM/SIGINT
 *
 * Methods: initialize (echoes the client's protocolVersion; HTTP: Mcp-Session-Id header),
 * tools/list (1,000 tools, one page), tools/call with name "echo" (a short text), "big1m"
 * (1 MiB of text), "big10m" (10 MiB of text), ping; notifications (no id) get nothing on stdio,
 * 202 on HTTP; any other method gets JSON-RPC error -32601.
 *
 * HTTP: HTTP/1.1 with keep-alive, Content-Length bodies only (411 otherwise), Expect:
 * 100-continue honoured, many connections at once (epoll: a round costs what is ready, not what
 * is open, so 10,000 open connections do not slow the server), responses are application/json
 * (never SSE); GET/DELETE/other methods get 405, other paths 404.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_IOV 512

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) die("malloc");
    return p;
}

/* ---- growable byte buffer ------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static void buf_reserve(buf_t *b, size_t extra)
{
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    b->p = realloc(b->p, cap);
    if (b->p == NULL) die("realloc");
    b->cap = cap;
}

static void buf_add(buf_t *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_adds(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ---- precomputed results (the "result" member's value) ------------------------------------- */

static buf_t r_echo, r_big1, r_big10, r_tools, r_empty;

/* A text result of `bytes` decoded characters: lines of printable ASCII, each ending in "\n"
 * (an escape in JSON), with a quote pair every line so decoders meet escapes as in real output. */
static void make_text_result(buf_t *b, size_t bytes)
{
    static const char line[] = "The quick brown fox jumps over the \\\"lazy\\\" dog; 0123456789 ABCDEFGHIJKLMN";
    /* decoded: the line without its two backslashes, plus '\n' */
    const size_t enc_len = sizeof line - 1, dec_len = enc_len - 2 + 1;
    buf_adds(b, "{\"content\":[{\"type\":\"text\",\"text\":\"");
    size_t done = 0;
    while (done + dec_len <= bytes) {
        buf_add(b, line, enc_len);
        buf_adds(b, "\\n");
        done += dec_len;
    }
    while (done < bytes) { /* pad with plain characters to the exact size */
        buf_add(b, "x", 1);
        done++;
    }
    buf_adds(b, "\"}],\"isError\":false}");
}

static void make_tools_result(buf_t *b, int n)
{
    buf_adds(b, "{\"tools\":[");
    for (int i = 0; i < n; i++) {
        buf_printf(b,
                   "%s{\"name\":\"tool_%04d\",\"title\":\"Tool %d\",\"description\":\"Benchmark tool number %d: "
                   "takes a message and a count and returns nothing useful.\",\"inputSchema\":{\"type\":\"object\","
                   "\"properties\":{\"message\":{\"type\":\"string\",\"description\":\"the message\"},\"count\":"
                   "{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000}},\"required\":[\"message\"]},"
                   "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}",
                   i ? "," : "", i, i, i);
    }
    buf_adds(b, "]}");
}

/* The small ones at start-up; the large ones on first use, so that start-up (part of every
 * client's connect time) stays short. */
static void make_results(void)
{
    buf_adds(&r_echo, "{\"content\":[{\"type\":\"text\",\"text\":\"echo: hello\"}],\"isError\":false}");
    buf_adds(&r_empty, "{}");
}

/* TINY_SERVER_DISTINCT_BIG=1 (experiments only, bench/README.md): every big text differs from the
 * one before (a counter over its first 8 characters), so that a client cannot reuse an earlier
 * copy: LuaJIT interns strings, and finds an equal 10 MiB text still in its heap. */
static void distinct(buf_t *b)
{
    static int on = -1;
    static unsigned n;
    unsigned v;
    int i;
    if (on < 0) {
        const char *e = getenv("TINY_SERVER_DISTINCT_BIG");
        on = e != NULL && *e == '1';
    }
    if (!on)
        return;
    v = ++n;
    for (i = 7; i >= 0; i--, v >>= 4) /* after {"content":[{"type":"text","text":" */
        b->p[35 + i] = "0123456789abcdef"[v & 15];
}

static const buf_t *big1(void)
{
    if (r_big1.len == 0) make_text_result(&r_big1, (size_t)1 << 20);
    distinct(&r_big1);
    return &r_big1;
}

static const buf_t *big10(void)
{
    if (r_big10.len == 0) make_text_result(&r_big10, (size_t)10 << 20);
    distinct(&r_big10);
    return &r_big10;
}

static const buf_t *tools(void)
{
    if (r_tools.len == 0) make_tools_result(&r_tools, 1000);
    return &r_tools;
}

/* ---- the message "parser" ------------------------------------------------------------------ */

typedef struct {
    const char *p;
    size_t n;
} span_t;

/* The value after "key": in [s, e): a string's contents (without quotes) when want_string, else
 * the raw token up to ',', '}' or ']' (an id: number, or string with its quotes). */
static span_t find_value(const char *s, const char *e, const char *key, int want_string)
{
    span_t r = {NULL, 0};
    size_t kl = strlen(key);
    const char *p = s;
    while (p < e) {
        const char *q = memmem(p, (size_t)(e - p), key, kl);
        if (q == NULL) return r;
        p = q + kl;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (p >= e || *p != ':') continue;
        p++;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (p >= e) return r;
        if (want_string) {
            if (*p != '"') continue;
            const char *v = ++p;
            while (p < e && *p != '"') p += (*p == '\\') ? 2 : 1;
            if (p > e) return r;
            r.p = v;
            r.n = (size_t)(p - v);
            return r;
        }
        const char *v = p;
        if (*p == '"') {
            p++;
            while (p < e && *p != '"') p += (*p == '\\') ? 2 : 1;
            if (p < e) p++;
        } else {
            while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ') p++;
        }
        r.p = v;
        r.n = (size_t)(p - v);
        return r;
    }
    return r;
}

static int span_is(span_t s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* ---- output: segments written with writev -------------------------------------------------- */

typedef struct {
    const char *p;
    size_t n;
    char *owned; /* freed once written */
} seg_t;

typedef struct {
    seg_t *s;
    size_t head, len, cap; /* segments [head, len) are pending; s[head] may be partly written */
} outq_t;

static void outq_push(outq_t *q, const char *p, size_t n, char *owned)
{
    if (n == 0) {
        free(owned);
        return;
    }
    if (q->len == q->cap) {
        if (q->head > 0) { /* compact */
            memmove(q->s, q->s + q->head, (q->len - q->head) * sizeof *q->s);
            q->len -= q->head;
            q->head = 0;
        }
        if (q->len == q->cap) {
            q->cap = q->cap ? q->cap * 2 : 16;
            q->s = realloc(q->s, q->cap * sizeof *q->s);
            if (q->s == NULL) die("realloc");
        }
    }
    q->s[q->len].p = p;
    q->s[q->len].n = n;
    q->s[q->len].owned = owned;
    q->len++;
}

static int outq_empty(const outq_t *q) { return q->head == q->len; }

/* Write what the fd takes; 0 when all is written or it would block, -1 on error. */
static int outq_flush(outq_t *q, int fd)
{
    while (!outq_empty(q)) {
        struct iovec iov[MAX_IOV];
        int cnt = 0;
        for (size_t i = q->head; i < q->len && cnt < MAX_IOV; i++, cnt++) {
            iov[cnt].iov_base = (void *)q->s[i].p;
            iov[cnt].iov_len = q->s[i].n;
        }
        ssize_t w = writev(fd, iov, cnt);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            return -1;
        }
        size_t left = (size_t)w;
        while (left > 0) {
            seg_t *s = &q->s[q->head];
            if (left >= s->n) {
                left -= s->n;
                free(s->owned);
                q->head++;
            } else {
                s->p += left;
                s->n -= left;
                left = 0;
            }
        }
    }
    q->head = q->len = 0;
    return 0;
}

/* ---- answering one JSON-RPC message ---------------------------------------------------------- */

static const char ENV_TAIL[] = "}";

/* The response to msg as segments: envelope head (owned), the result (shared or owned), "}".
 * Returns 0 for a notification (nothing to answer), else the body length; *is_init is set for
 * initialize. */
static size_t answer(const char *msg, size_t n, outq_t *q, int *is_init)
{
    const char *e = msg + n;
    span_t id = find_value(msg, e, "\"id\"", 0);
    span_t method = find_value(msg, e, "\"method\"", 1);
    *is_init = 0;
    if (id.p == NULL || method.p == NULL) return 0; /* a notification, or a response: ignored */
    const char *res = NULL;
    size_t res_n = 0;
    char *owned = NULL;
    const char *err = NULL;
    if (span_is(method, "tools/call")) {
        span_t name = find_value(msg, e, "\"name\"", 1);
        const buf_t *r = NULL;
        if (span_is(name, "echo")) r = &r_echo;
        else if (span_is(name, "big1m")) r = big1();
        else if (span_is(name, "big10m")) r = big10();
        if (r) {
            res = r->p;
            res_n = r->len;
        } else {
            err = "{\"code\":-32602,\"message\":\"Unknown tool\"}";
        }
    } else if (span_is(method, "tools/list")) {
        res = tools()->p;
        res_n = tools()->len;
    } else if (span_is(method, "initialize")) {
        span_t v = find_value(msg, e, "\"protocolVersion\"", 1);
        buf_t b = {0};
        buf_printf(&b,
                   "{\"protocolVersion\":\"%.*s\",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                   "\"serverInfo\":{\"name\":\"tiny-bench-server\",\"version\":\"1.0.0\"}}",
                   v.p ? (int)v.n : 10, v.p ? v.p : "2025-06-18");
        res = owned = b.p;
        res_n = b.len;
        *is_init = 1;
    } else if (span_is(method, "ping")) {
        res = r_empty.p;
        res_n = r_empty.len;
    } else {
        err = "{\"code\":-32601,\"message\":\"Method not found\"}";
    }
    buf_t head = {0};
    buf_adds(&head, "{\"jsonrpc\":\"2.0\",\"id\":");
    buf_add(&head, id.p, id.n);
    if (err) {
        buf_adds(&head, ",\"error\":");
        buf_adds(&head, err);
        buf_adds(&head, "}");
        size_t len = head.len;
        outq_push(q, head.p, head.len, head.p);
        return len;
    }
    buf_adds(&head, ",\"result\":");
    size_t len = head.len + res_n + 1;
    outq_push(q, head.p, head.len, head.p);
    outq_push(q, res, res_n, owned);
    outq_push(q, ENV_TAIL, 1, NULL);
    return len;
}

/* ---- stdio mode ------------------------------------------------------------------------------ */

static int run_stdio(void)
{
    buf_t in = {0};
    outq_t q = {0};
    for (;;) {
        buf_reserve(&in, 65536);
        ssize_t r = read(0, in.p + in.len, in.cap - in.len);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("read");
        }
        if (r == 0) return 0;
        in.len += (size_t)r;
        size_t start = 0;
        for (;;) {
            char *nl = memchr(in.p + start, '\n', in.len - start);
            if (nl == NULL) break;
            size_t n = (size_t)(nl - (in.p + start));
            int is_init;
            if (answer(in.p + start, n, &q, &is_init) > 0) outq_push(&q, "\n", 1, NULL);
            start += n + 1;
        }
        /* Answers of everything this read brought, in one writev (blocking fd). */
        if (outq_flush(&q, 1) < 0) return errno == EPIPE ? 0 : (perror("write"), 1);
        memmove(in.p, in.p + start, in.len - start);
        in.len -= start;
    }
}

/* ---- HTTP mode ------------------------------------------------------------------------------- */

typedef struct {
    int fd;
    buf_t in;
    outq_t out;
    int close_after; /* Connection: close seen, or a fatal request */
    int continued;   /* 100 Continue sent for the request being read */
    size_t slot;     /* index in the server's connection array */
    int want_out;    /* EPOLLOUT is armed */
} conn_t;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static unsigned long session_counter;

static const char *find_header(const char *h, const char *e, const char *name, size_t *vlen)
{
    size_t nl = strlen(name);
    const char *p = h;
    while (p < e) {
        const char *eol = memmem(p, (size_t)(e - p), "\r\n", 2);
        if (eol == NULL) eol = e;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        p = eol + 2;
    }
    return NULL;
}

static void http_simple(conn_t *c, int status, const char *reason, const char *extra)
{
    buf_t b = {0};
    buf_printf(&b, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n%s%s\r\n", status, reason, extra ? extra : "",
               c->close_after ? "Connection: close\r\n" : "");
    outq_push(&c->out, b.p, b.len, b.p);
}

/* Handle every complete request in c->in. Returns -1 when the connection must close now. */
static int http_process(conn_t *c)
{
    size_t start = 0;
    for (;;) {
        const char *base = c->in.p + start;
        size_t avail = c->in.len - start;
        const char *hend = avail ? memmem(base, avail, "\r\n\r\n", 4) : NULL;
        if (hend == NULL) {
            if (avail > 65536) return -1; /* headers too large */
            break;
        }
        const char *line_end = memmem(base, avail, "\r\n", 2);
        const char *hdrs = line_end + 2, *hdrs_end = hend + 2;
        size_t hsize = (size_t)(hend + 4 - base);
        size_t vl;
        const char *v = find_header(hdrs, hdrs_end, "Connection", &vl);
        if (v && vl == 5 && strncasecmp(v, "close", 5) == 0) c->close_after = 1;
        if (memmem(base, (size_t)(line_end - base), "HTTP/1.0", 8)) c->close_after = 1;
        const char *cl = find_header(hdrs, hdrs_end, "Content-Length", &vl);
        size_t body_len = cl ? strtoul(cl, NULL, 10) : 0;
        int is_post = (size_t)(line_end - base) >= 5 && memcmp(base, "POST ", 5) == 0;
        const char *path = memchr(base, ' ', (size_t)(line_end - base));
        int path_ok = path && (size_t)(line_end - path) >= 5 && memcmp(path, " /mcp", 5) == 0 &&
                      (path[5] == ' ' || path[5] == '?');
        if (is_post && cl == NULL) {
            if (find_header(hdrs, hdrs_end, "Transfer-Encoding", &vl)) {
                c->close_after = 1;
                http_simple(c, 411, "Length Required", NULL);
                return 0;
            }
        }
        if (avail < hsize + body_len) {
            const char *ex = find_header(hdrs, hdrs_end, "Expect", &vl);
            if (ex && !c->continued && vl == 12 && strncasecmp(ex, "100-continue", 12) == 0) {
                static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                outq_push(&c->out, cont, sizeof cont - 1, NULL);
                c->continued = 1;
            }
            break;
        }
        c->continued = 0;
        const char *body = base + hsize;
        start += hsize + body_len;
        if (!path_ok) {
            http_simple(c, 404, "Not Found", NULL);
            continue;
        }
        if (!is_post) {
            http_simple(c, 405, "Method Not Allowed", "Allow: POST\r\n");
            continue;
        }
        outq_t rq = {0};
        int is_init = 0;
        size_t len = answer(body, body_len, &rq, &is_init);
        if (len == 0) {
            http_simple(c, 202, "Accepted", NULL);
            free(rq.s);
            continue;
        }
        buf_t h = {0};
        buf_printf(&h, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n", len);
        if (is_init) buf_printf(&h, "Mcp-Session-Id: tiny-%lu-%ld\r\n", ++session_counter, (long)getpid());
        if (c->close_after) buf_adds(&h, "Connection: close\r\n");
        buf_adds(&h, "\r\n");
        outq_push(&c->out, h.p, h.len, h.p);
        for (size_t i = rq.head; i < rq.len; i++) outq_push(&c->out, rq.s[i].p, rq.s[i].n, rq.s[i].owned);
        free(rq.s);
    }
    memmove(c->in.p, c->in.p + start, c->in.len - start);
    c->in.len -= start;
    return 0;
}

static void conn_free(conn_t *c)
{
    close(c->fd);
    free(c->in.p);
    for (size_t i = c->out.head; i < c->out.len; i++) free(c->out.s[i].owned);
    free(c->out.s);
    free(c);
}

static int run_http(int port, int idle_exit_s)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((unsigned short)port);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind");
    /* SOMAXCONN (the kernel caps it at net.core.somaxconn): a client that opens a connection per
     * call in flight (the flood row) meets no dropped SYNs and their 1 s retransmits. */
    if (listen(lfd, SOMAXCONN) < 0) die("listen");
    socklen_t sl = sizeof sa;
    if (getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0) die("getsockname");
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    printf("%d\n", ntohs(sa.sin_port));
    fflush(stdout);

    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_signal;
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}; /* NULL: the listener */
    if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) die("epoll_ctl");
    conn_t **conns = NULL;
    size_t nconns = 0, capconns = 0;
    struct epoll_event events[256];
    time_t last = time(NULL);
    while (!stop_flag) {
        int r = epoll_wait(ep, events, 256, 1000);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        if (r == 0) {
            if (idle_exit_s > 0 && time(NULL) - last >= idle_exit_s) {
                fprintf(stderr, "tiny_server: idle for %d s, exiting\n", idle_exit_s);
                break;
            }
            continue;
        }
        last = time(NULL);
        for (int e = 0; e < r; e++) {
            conn_t *c = events[e].data.ptr;
            if (c == NULL) {
                for (;;) {
                    int fd = accept(lfd, NULL, NULL);
                    if (fd < 0) break;
                    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conn_t *nc = xmalloc(sizeof *nc);
                    memset(nc, 0, sizeof *nc);
                    nc->fd = fd;
                    if (nconns == capconns) {
                        capconns = capconns ? capconns * 2 : 64;
                        conns = realloc(conns, capconns * sizeof *conns);
                        if (conns == NULL) die("realloc");
                    }
                    nc->slot = nconns;
                    conns[nconns++] = nc;
                    struct epoll_event cev = {.events = EPOLLIN, .data.ptr = nc};
                    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev) < 0) die("epoll_ctl");
                }
                continue;
            }
            int dead = 0;
            if (events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                for (;;) {
                    buf_reserve(&c->in, 65536);
                    ssize_t n = read(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len);
                    if (n > 0) {
                        c->in.len += (size_t)n;
                        continue;
                    }
                    if (n == 0) dead = 1;
                    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) dead = 1;
                    break;
                }
                if (http_process(c) < 0) dead = 1;
            }
            if (!dead && outq_flush(&c->out, c->fd) < 0) dead = 1;
            if (!dead && c->close_after && outq_empty(&c->out)) dead = 1;
            if (!dead && c->want_out == outq_empty(&c->out)) { /* arm EPOLLOUT while output waits */
                c->want_out = !c->want_out;
                struct epoll_event cev = {.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0),
                                          .data.ptr = c};
                if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &cev) < 0) dead = 1;
            }
            if (dead) {
                conns[c->slot] = conns[--nconns];
                conns[c->slot]->slot = c->slot;
                conn_free(c); /* close() also takes it out of the epoll set */
            }
        }
    }
    for (size_t i = 0; i < nconns; i++) conn_free(conns[i]);
    free(conns);
    close(ep);
    close(lfd);
    return 0;
}

int main(int argc, char **argv)
{
    int http = 0, port = 0, idle = 600;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
            http = 1;
            port = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--idle-exit") == 0 && i + 1 < argc) {
            idle = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--http PORT [--idle-exit SECONDS]]\n", argv[0]);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    make_results();
    const char *ps = getenv("TINY_SERVER_PIPE_SIZE"); /* experiments only (bench/README.md) */
    if (!http && ps != NULL && fcntl(1, F_SETPIPE_SZ, atoi(ps)) < 0) perror("F_SETPIPE_SZ");
    return http ? run_http(port, idle) : run_stdio();
}
