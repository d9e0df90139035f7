/* libFuzzer target for the stdio framing (src/transports/framing.c, idscan.c).
 *   make fuzz FUZZ_TARGET=stdio / fuzz-smoke
 *
 * The first input byte picks max (1..256), the rest is the stream. Checked for every input:
 * - a plain model (split the whole input at '\n', strip one '\r', skip empty lines; a line over
 *   max is TOO_LARGE then DROPPED with the id a fresh idscan finds in it; an unterminated tail
 *   over max is TOO_LARGE) gives the same events as the framer fed the whole input at once, one
 *   byte per feed, and in pseudo-random pieces derived from the input;
 * - each line is 1..max bytes and holds no '\n';
 * - the idscan of a dropped message agrees with the model's, however it was split. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "transports/framing.h"
#include "transports/idscan.h"

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "stdio_fuzz: check failed: %s (%s)\n", what, #cond);                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void put(mcp_buf *b, const void *p, size_t n)
{
    CHECK(mcp_buf_append(b, p, n) == 0, "out of memory");
}

/* Events serialised: 'L' len bytes | 'T' | 'D' has_id id. */
static void put_event(mcp_buf *log, int ev, const char *line, size_t len, const mcp_idscan *sc)
{
    char tag = ev == MCP_FRAME_LINE ? 'L' : ev == MCP_FRAME_TOO_LARGE ? 'T' : 'D';
    put(log, &tag, 1);
    if (ev == MCP_FRAME_LINE) {
        uint64_t n = len;
        put(log, &n, sizeof n);
        put(log, line, len);
    } else if (ev == MCP_FRAME_DROPPED) {
        int64_t id = 0;
        char has = (char)mcp_idscan_response_id(sc, &id);
        put(log, &has, 1);
        if (has)
            put(log, &id, sizeof id);
    }
}

static void drain(mcp_framer *f, mcp_buf *log)
{
    for (;;) {
        const char *line = NULL;
        size_t len = 0;
        int ev = mcp_framer_next(f, &line, &len);
        if (ev == MCP_FRAME_NEED_MORE)
            return;
        if (ev == MCP_FRAME_LINE) {
            CHECK(len >= 1 && len <= f->max, "line length within 1..max");
            CHECK(memchr(line, '\n', len) == NULL, "no newline in a line");
        }
        put_event(log, ev, line, len, &f->skipped);
    }
}

static void feed(mcp_framer *f, mcp_buf *log, const uint8_t *p, size_t n)
{
    CHECK(mcp_buf_reserve(&f->buf, n) == 0, "out of memory");
    memcpy(mcp_buf_tail(&f->buf), p, n);
    f->buf.len += n;
    drain(f, log);
}

/* mode 0: whole; 1: one byte at a time; 2: pseudo-random pieces seeded by the input. */
static void run_framer(const uint8_t *p, size_t n, size_t max, int mode, mcp_buf *log)
{
    mcp_framer f;
    size_t i = 0;
    uint32_t seed = 2166136261u;
    mcp_framer_init(&f, max);
    for (size_t k = 0; k < n && k < 16; k++)
        seed = (seed ^ p[k]) * 16777619u;
    while (i < n) {
        size_t piece = n - i;
        if (mode == 1)
            piece = 1;
        else if (mode == 2) {
            seed = seed * 1103515245u + 12345u;
            piece = 1 + (seed >> 16) % 97;
            if (piece > n - i)
                piece = n - i;
        }
        feed(&f, log, p + i, piece);
        i += piece;
    }
    drain(&f, log);
    mcp_framer_free(&f);
}

static void run_model(const uint8_t *p, size_t n, size_t max, mcp_buf *log)
{
    size_t start = 0, i;
    for (i = 0; i <= n; i++) {
        size_t len;
        int complete = i < n && p[i] == '\n';
        if (!complete && i < n)
            continue;
        len = i - start;
        if (len > 0 && p[start + len - 1] == '\r')
            len--;
        if (complete && len > 0) {
            if (len > max) {
                mcp_idscan sc;
                mcp_idscan_init(&sc);
                mcp_idscan_feed(&sc, (const char *)p + start, len);
                put_event(log, MCP_FRAME_TOO_LARGE, NULL, 0, NULL);
                put_event(log, MCP_FRAME_DROPPED, NULL, 0, &sc);
            } else {
                put_event(log, MCP_FRAME_LINE, (const char *)p + start, len, NULL);
            }
        } else if (!complete && len > max) {
            put_event(log, MCP_FRAME_TOO_LARGE, NULL, 0, NULL);
        }
        start = i + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcp_buf want, got;
    size_t max;
    int mode;
    if (size < 1)
        return 0;
    max = 1 + data[0];
    data++;
    size--;
    mcp_buf_init(&want);
    run_model(data, size, max, &want);
    for (mode = 0; mode < 3; mode++) {
        mcp_buf_init(&got);
        run_framer(data, size, max, mode, &got);
        CHECK(got.len == want.len &&
                  (got.len == 0 || memcmp(got.data + got.off, want.data + want.off, got.len) == 0),
              "framer events equal the model's");
        mcp_buf_free(&got);
    }
    mcp_buf_free(&want);
    return 0;
}
