/* Server-Sent Events parser (WHATWG HTML "event stream interpretation"), shared by the
 * streamable-HTTP and legacy-SSE transports. Push parser: feed bytes in any split; events
 * and retry values come out through callbacks. No global state; one parser per stream.
 *
 * Deviations from the letter of the spec, both deliberate:
 * - Bytes are passed through as they are: invalid UTF-8 is not replaced by U+FFFD (the JSON
 *   decoder downstream rejects it). CR and LF never appear inside a field value.
 * - `retry` values larger than ULONG_MAX saturate to ULONG_MAX; an empty `retry` is ignored.
 */
#ifndef MCP_SSE_PARSER_H
#define MCP_SSE_PARSER_H

#include <stddef.h>

#include "buf.h"

/* The pointers are valid during the callback only. Each string is also NUL-terminated
 * (but may contain NUL bytes itself: use the lengths). */
typedef struct mcp_sse_event {
    const char *type;
    size_t type_len; /* "message" when the stream gave none (never empty) */
    const char *data;
    size_t data_len; /* data lines joined with '\n', final '\n' removed */
    const char *id;
    size_t id_len; /* the last event ID at dispatch time (may be empty) */
} mcp_sse_event;

typedef void (*mcp_sse_event_cb)(void *ctx, const mcp_sse_event *ev);
typedef void (*mcp_sse_retry_cb)(void *ctx, unsigned long retry_ms);

/* Opaque in spirit: the fields are here only so the owner can embed the parser. */
typedef struct mcp_sse_parser {
    mcp_sse_event_cb on_event; /* may be NULL */
    mcp_sse_retry_cb on_retry; /* may be NULL */
    void *ctx;
    size_t max_event_bytes; /* 0 = unlimited */
    mcp_buf data;           /* data buffer: each data value + '\n' */
    mcp_buf type;           /* event type buffer (kept NUL-terminated) */
    mcp_buf value;          /* value of an event/id/retry line that spans feeds */
    mcp_buf id;             /* last event ID buffer, as set by `id` fields */
    mcp_buf last_id;        /* last event ID string: the buffer as of the last blank line */
    char name[5];           /* field name of the current line while it spans feeds */
    unsigned char name_len;
    unsigned char state;         /* line state (sse_parser.c) */
    unsigned char field;         /* the field whose value is being read */
    unsigned char space_pending; /* the colon was the last byte seen: strip one ' ' next */
    unsigned char pending_cr;    /* the last feed ended with CR: skip one LF at the next */
    unsigned char bom;           /* BOM bytes matched at stream start, 3 = check done */
    unsigned char discard;       /* an event overflowed: skip lines until a blank line */
    unsigned char id_dirty;      /* `id` set since the last blank line */
    unsigned char aborted;       /* mcp_sse_abort: ignore input until mcp_sse_reset */
    unsigned char failed;        /* the current feed overflowed or ran out of memory */
} mcp_sse_parser;

void mcp_sse_init(mcp_sse_parser *p, mcp_sse_event_cb on_event, mcp_sse_retry_cb on_retry,
                  void *ctx, size_t max_event_bytes);

/* Feed bytes as they arrive (any split, even mid-UTF-8 or between CR and LF). Returns 0, or -1
 * when an event exceeded max_event_bytes or memory ran out; the parser then drops that event
 * (its data, type and any `id` it set) and resynchronises at the next blank line.
 * max_event_bytes bounds the data buffer of one event (values plus their '\n' separators) and
 * the value of any one event/id/retry line. Comments and unknown fields are never buffered.
 * An incomplete event at the end of the stream is never dispatched. */
int mcp_sse_feed(mcp_sse_parser *p, const char *bytes, size_t n);

/* Called by a callback (the owner is closing): dispatch nothing more from the current feed.
 * Later feeds are ignored too until mcp_sse_reset. Callbacks must not free or reset the
 * parser; mcp_sse_abort is the one parser call they may make. */
void mcp_sse_abort(mcp_sse_parser *p);

/* A new connection: forget partial lines, data and event type (and an `id` of an event that
 * never completed), keep the last event ID, check for a BOM again, clear an abort. */
void mcp_sse_reset(mcp_sse_parser *p);

/* The last event ID string (for Last-Event-ID on reconnection): the `id` as of the last
 * blank line, including blank lines that dispatched nothing. Never NULL; NUL-terminated. */
const char *mcp_sse_last_event_id(const mcp_sse_parser *p, size_t *len);

void mcp_sse_free(mcp_sse_parser *p);

#endif
