/* libFuzzer target for the SSE parser (src/transports/sse_parser.c).   make fuzz / fuzz-smoke
 *
 * The input is the stream. Checked for every input:
 * - a plain byte-at-a-time model of the WHATWG rules, written independently of the parser,
 *   gives the same events, retry values and final last event ID as the parser fed the whole
 *   input at once, and as the parser fed in several split patterns derived from the first
 *   bytes (one byte per feed, two feeds, cyclic sizes with empty feeds, pseudo-random sizes);
 * - with a small max_event_bytes: every split gives the same results and failure as the whole
 *   input, and when nothing failed the results equal the unlimited ones;
 * - each event: type non-empty without CR/LF, data without CR, id without CR/LF/NUL, each
 *   NUL-terminated, id equal to mcp_sse_last_event_id, sizes within the limit;
 * - mcp_sse_abort from the k-th callback gives exactly the first k results, later feeds none;
 * - after mcp_sse_reset the same input gives the model's results for a stream that starts
 *   with the last event ID kept from the first pass. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "transports/sse_parser.h"

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "sse_fuzz: check failed: %s (%s)\n", what, #cond);                     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Results of one run, serialised: 'E' type data id (each as length + bytes), or 'R' ms. */
typedef struct run {
    mcp_buf log;
    size_t records;
    size_t max;
    size_t abort_after; /* 0: never */
    int failed;
    mcp_sse_parser *parser;
} run;

static void put(mcp_buf *b, const void *p, size_t n)
{
    CHECK(mcp_buf_append(b, p, n) == 0, "out of memory");
}

static void put_str(mcp_buf *b, const char *s, size_t n)
{
    uint64_t len = n;
    put(b, &len, sizeof len);
    put(b, s, n);
}

static void record_done(run *r)
{
    r->records++;
    if (r->abort_after != 0 && r->records == r->abort_after)
        mcp_sse_abort(r->parser);
}

static void on_event(void *ctx, const mcp_sse_event *ev)
{
    run *r = ctx;
    size_t idlen;
    const char *id = mcp_sse_last_event_id(r->parser, &idlen);
    CHECK(ev->type != NULL && ev->data != NULL && ev->id != NULL, "NULL field");
    CHECK(ev->type_len > 0, "empty type");
    CHECK(memchr(ev->type, '\r', ev->type_len) == NULL, "CR in type");
    CHECK(memchr(ev->type, '\n', ev->type_len) == NULL, "LF in type");
    CHECK(memchr(ev->data, '\r', ev->data_len) == NULL, "CR in data");
    CHECK(memchr(ev->id, '\r', ev->id_len) == NULL, "CR in id");
    CHECK(memchr(ev->id, '\n', ev->id_len) == NULL, "LF in id");
    CHECK(memchr(ev->id, '\0', ev->id_len) == NULL, "NUL in id");
    CHECK(ev->type[ev->type_len] == '\0' && ev->data[ev->data_len] == '\0' &&
              ev->id[ev->id_len] == '\0',
          "not NUL-terminated");
    CHECK(idlen == ev->id_len && memcmp(id, ev->id, idlen) == 0, "id != last event id");
    if (r->max != 0) {
        CHECK(ev->data_len < r->max, "data over the limit");
        CHECK(ev->type_len <= r->max || memcmp(ev->type, "message", 8) == 0, "type over the limit");
        CHECK(ev->id_len <= r->max, "id over the limit");
    }
    put(&r->log, "E", 1);
    put_str(&r->log, ev->type, ev->type_len);
    put_str(&r->log, ev->data, ev->data_len);
    put_str(&r->log, ev->id, ev->id_len);
    record_done(r);
}

static void on_retry(void *ctx, unsigned long ms)
{
    run *r = ctx;
    uint64_t v = ms;
    put(&r->log, "R", 1);
    put(&r->log, &v, sizeof v);
    record_done(r);
}

/* ---- split patterns ---------------------------------------------------------------- */

enum { P_WHOLE, P_BYTES, P_TWO, P_CYCLE, P_RANDOM, P_COUNT };

typedef struct splitter {
    int pattern;
    const uint8_t *d;
    size_t n, pos, k;
    uint32_t rng;
} splitter;

static uint32_t seed_of(const uint8_t *d, size_t n)
{
    uint32_t s = 2166136261u;
    size_t i;
    for (i = 0; i < n && i < 4; i++)
        s = (s ^ d[i]) * 16777619u;
    return s ? s : 1;
}

/* Size of the next feed (may be 0). */
static size_t next_size(splitter *s)
{
    size_t left = s->n - s->pos, want;
    switch (s->pattern) {
    case P_WHOLE: want = left; break;
    case P_BYTES: want = 1; break;
    case P_TWO: { /* split point from the first two bytes */
        size_t at = s->n ? ((size_t)s->d[0] << 8 | (s->n > 1 ? s->d[1] : 0)) % (s->n + 1) : 0;
        want = s->k++ == 0 ? at : left;
        break;
    }
    case P_CYCLE: /* sizes 0..12 from the first 8 bytes, in turn */
        want = s->n ? s->d[s->k++ % (s->n < 8 ? s->n : 8)] % 13 : 0;
        if (s->k > 2 * s->n + 16) /* all sizes 0: make progress */
            want = left;
        break;
    default: /* xorshift32: mostly small, sometimes large */
        s->rng ^= s->rng << 13;
        s->rng ^= s->rng >> 17;
        s->rng ^= s->rng << 5;
        want = (s->rng & 7) == 0 ? s->rng >> 20 : (s->rng >> 8) % 9;
        break;
    }
    return want < left ? want : left;
}

/* Feed d[0..n) in the given pattern. Returns 1 when any feed returned -1. */
static int feed_all(mcp_sse_parser *p, const uint8_t *d, size_t n, int pattern)
{
    splitter s;
    int failed = 0;
    memset(&s, 0, sizeof s);
    s.pattern = pattern;
    s.d = d;
    s.n = n;
    s.rng = seed_of(d, n);
    do {
        size_t k = next_size(&s);
        char *copy = malloc(k ? k : 1); /* an exact-size copy: ASan sees any over-read */
        CHECK(copy != NULL, "out of memory");
        if (k)
            memcpy(copy, d + s.pos, k);
        if (mcp_sse_feed(p, copy, k) != 0)
            failed = 1;
        free(copy);
        s.pos += k;
    } while (s.pos < n);
    return failed;
}

static void run_init(run *r, mcp_sse_parser *p, size_t max, size_t abort_after)
{
    memset(r, 0, sizeof *r);
    mcp_buf_init(&r->log);
    r->max = max;
    r->abort_after = abort_after;
    r->parser = p;
    mcp_sse_init(p, on_event, on_retry, r, max);
}

static void run_free(run *r)
{
    mcp_sse_free(r->parser);
    mcp_buf_free(&r->log);
}

static int same_log(const run *a, const mcp_buf *b)
{
    return a->log.len == b->len && (b->len == 0 || memcmp(a->log.data, b->data, b->len) == 0);
}

/* ---- the model: WHATWG 9.2.6 read literally, a byte at a time ------------------------ */

typedef struct model {
    mcp_buf log;
    size_t records;
    char *last_id;
    size_t last_id_len;
} model;

static void model_run(model *m, const uint8_t *d, size_t n, const char *init_id, size_t init_len)
{
    /* Every buffer holds at most the input (data: each line + LF, so 2n). */
    char *data = malloc(2 * n + 1), *type = malloc(n + 1), *idb = malloc(n + init_len + 1);
    char *last = malloc(n + init_len + 1);
    size_t dlen = 0, tlen = 0, ilen = init_len, llen = init_len, i = 0;
    CHECK(data && type && idb && last, "out of memory");
    memcpy(idb, init_id, init_len);
    memcpy(last, init_id, init_len);
    mcp_buf_init(&m->log);
    m->records = 0;
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3;
    for (;;) {
        size_t j = i, c, vstart, vlen, namelen;
        const uint8_t *line = d + i;
        while (j < n && d[j] != '\r' && d[j] != '\n')
            j++;
        if (j >= n)
            break;    /* no line end: an incomplete line is never processed */
        if (j == i) { /* blank line: dispatch */
            memcpy(last, idb, ilen);
            llen = ilen;
            if (dlen > 0) {
                dlen--;
                put(&m->log, "E", 1);
                if (tlen > 0)
                    put_str(&m->log, type, tlen);
                else
                    put_str(&m->log, "message", 7);
                put_str(&m->log, data, dlen);
                put_str(&m->log, last, llen);
                m->records++;
            }
            dlen = tlen = 0;
        } else if (line[0] != ':') {
            size_t len = j - i;
            for (c = 0; c < len && line[c] != ':'; c++)
                ;
            namelen = c;
            vstart = c < len ? c + 1 : len;
            if (vstart < len && line[vstart] == ' ')
                vstart++;
            vlen = len - vstart;
            if (namelen == 5 && memcmp(line, "event", 5) == 0) {
                memcpy(type, line + vstart, vlen);
                tlen = vlen;
            } else if (namelen == 4 && memcmp(line, "data", 4) == 0) {
                memcpy(data + dlen, line + vstart, vlen);
                dlen += vlen;
                data[dlen++] = '\n';
            } else if (namelen == 2 && memcmp(line, "id", 2) == 0) {
                if (memchr(line + vstart, 0, vlen) == NULL) {
                    memcpy(idb, line + vstart, vlen);
                    ilen = vlen;
                }
            } else if (namelen == 5 && memcmp(line, "retry", 5) == 0 && vlen > 0) {
                /* exact decimal with a saturation flag */
                unsigned long long v = 0;
                int ok = 1, sat = 0;
                size_t k;
                for (k = vstart; k < len; k++) {
                    if (line[k] < '0' || line[k] > '9') {
                        ok = 0;
                        break;
                    }
                    if (v > (ULONG_MAX - (unsigned long long)(line[k] - '0')) / 10)
                        sat = 1;
                    else if (!sat)
                        v = v * 10 + (unsigned long long)(line[k] - '0');
                }
                if (ok) {
                    uint64_t ms = sat ? (uint64_t)ULONG_MAX : (uint64_t)v;
                    put(&m->log, "R", 1);
                    put(&m->log, &ms, sizeof ms);
                    m->records++;
                }
            }
        }
        i = j + 1;
        if (d[j] == '\r' && i < n && d[i] == '\n')
            i++;
    }
    m->last_id = last;
    m->last_id_len = llen;
    free(data);
    free(type);
    free(idb);
}

static void model_free(model *m)
{
    mcp_buf_free(&m->log);
    free(m->last_id);
}

static void check_last_id(mcp_sse_parser *p, const model *m)
{
    size_t len;
    const char *id = mcp_sse_last_event_id(p, &len);
    CHECK(len == m->last_id_len && memcmp(id, m->last_id, len) == 0, "last event id != model");
    CHECK(id[len] == '\0', "last event id not NUL-terminated");
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    mcp_sse_parser p;
    run r, limited;
    model m, m2;
    size_t max, k;
    int pattern, failed;

    if (n > 1 << 16)
        return 0;
    model_run(&m, d, n, "", 0);

    /* Unlimited: every pattern equals the model. */
    for (pattern = 0; pattern < P_COUNT; pattern++) {
        run_init(&r, &p, 0, 0);
        CHECK(feed_all(&p, d, n, pattern) == 0, "feed failed without a limit");
        CHECK(same_log(&r, &m.log), "results != model");
        check_last_id(&p, &m);
        run_free(&r);
    }

    /* A small limit: every pattern equals the whole feed; no failure means no effect. */
    max = 1 + (n ? d[0] % 48 : 0);
    run_init(&limited, &p, max, 0);
    failed = feed_all(&p, d, n, P_WHOLE);
    mcp_sse_free(&p);
    if (!failed)
        CHECK(same_log(&limited, &m.log), "limit changed results without failing");
    for (pattern = 1; pattern < P_COUNT; pattern++) {
        run_init(&r, &p, max, 0);
        CHECK(feed_all(&p, d, n, pattern) == failed, "limited failure differs by split");
        CHECK(same_log(&r, &limited.log), "limited results differ by split");
        run_free(&r);
    }
    mcp_buf_free(&limited.log);

    /* Abort from the k-th callback: exactly the first k results, nothing after. */
    if (m.records > 0) {
        k = 1 + (n > 1 ? d[1] : 0) % m.records;
        run_init(&r, &p, 0, k);
        feed_all(&p, d, n, P_CYCLE);
        CHECK(r.records == k, "abort: wrong number of results");
        CHECK(r.log.len <= m.log.len && memcmp(r.log.data, m.log.data, r.log.len) == 0,
              "abort: results are not a prefix");
        CHECK(mcp_sse_feed(&p, "data: x\n\n", 9) == 0 && r.records == k, "abort: later feed");
        run_free(&r);
    }

    /* A new connection: reset, then the same input starting from the kept last event ID. */
    run_init(&r, &p, 0, 0);
    feed_all(&p, d, n, P_RANDOM);
    model_run(&m2, d, n, m.last_id, m.last_id_len);
    mcp_sse_reset(&p);
    mcp_buf_reset(&r.log);
    r.records = 0;
    feed_all(&p, d, n, P_TWO);
    CHECK(same_log(&r, &m2.log), "results after reset != model");
    check_last_id(&p, &m2);
    run_free(&r);
    model_free(&m2);

    model_free(&m);
    return 0;
}
