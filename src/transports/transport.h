/* The seam between the JSON-RPC session and a transport. A transport moves whole JSON-RPC
 * messages; the session encodes and decodes them. Both are reference counted C structs boxed in
 * Lua userdata, so a callback in progress keeps its transport alive even if the GC finalizes the
 * userdata meanwhile. */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include <stddef.h>

#include "buf.h"
#include "loop.h"

#include <stdint.h>

typedef struct mcp_transport mcp_transport;

/* One per-request header of a message (send options). value NULL: send the message without
 * this header (it removes a default the transport would add). Not NUL-terminated. */
typedef struct mcp_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} mcp_header;

/* mcp_send_info's background: see there. */
#define MCP_SEND_DETACHED 1
#define MCP_SEND_OWN 2

/* What the session knows about an outgoing message: the send options of the contract. */
typedef struct mcp_send_info {
    int64_t request_id; /* 0 unless the message is a request of ours */
    const char *method; /* NULL for responses */
    int is_initialize;
    const mcp_header *headers; /* per-request headers (HTTP), valid during send only */
    size_t nheaders;
    /* The client's own work, which no call of the user's asked for (HTTP OAuth: it may refresh
     * a token, never start a login): MCP_SEND_DETACHED, a request nothing waits on (a listen
     * opened again on a timer: the HTTP request hooks' awaited is false, as for a notification);
     * MCP_SEND_OWN, a request the client's own work waits on (a reconnection's initialize, a
     * renewal's resubscribe: awaited, and own); 0 for a user's call. */
    int background;
} mcp_send_info;

/* Why one request failed in the transport (HTTP status, connection error, ...). */
typedef struct mcp_transport_failure {
    int status;          /* HTTP status, 0 when there was no response */
    const char *message; /* readable, complete */
    const char *body;    /* response body (may hold a JSON-RPC error), may be NULL */
    size_t body_len;
    int keep_message;    /* use message even when the body holds a JSON-RPC error */
    const char *headers; /* the response's header lines ("Name: value\r\n"...), may be NULL */
    size_t headers_len;
    /* A Lua stack index, in the thread the failure is reported in, of an error object that
     * stands for this failure (the transport's owner made it: an auth layer's OAuth error); 0
     * when none. Valid during the call only. */
    int cause;
} mcp_transport_failure;

/* Implemented by the session; called from loop callbacks only (never from __gc). */
typedef struct mcp_sink {
    void (*on_message)(void *ctx, const char *msg, size_t len);
    /* The same for a message in a buffer the transport lends for writing: it is decoded in place
     * (mcp_json_decode_value_inplace), so a large escaped string has no second copy. undo NULL:
     * the bytes are dropped afterwards, whatever they became; an undo buffer: the transport may
     * read them again, and first restores them with mcp_json_undo_apply. */
    void (*on_message_inplace)(void *ctx, char *msg, size_t len, mcp_buf *undo);
    /* A non-fatal problem (bad line, oversized message): reported and skipped. */
    void (*on_error)(void *ctx, const char *kind, const char *msg);
    /* The transport is gone for good: fail everything pending. Called once. */
    void (*on_closed)(void *ctx, const char *reason);
    /* One request failed (an HTTP POST answered non-2xx, say): fail that request only. */
    void (*on_request_failed)(void *ctx, int64_t request_id, const mcp_transport_failure *f);
    /* Is the request still waiting for its response? */
    int (*is_pending)(void *ctx, int64_t request_id);
    /* A message of at least MCP_SINK_TAKE_MIN bytes offered with the malloc'd block that holds
     * it, so that the session can keep it without a copy (a message decoded over several steps).
     * Returns 1: taken (the session frees the block with free()); 0: not taken, the transport
     * keeps the block and delivers the message with on_message_inplace. May be NULL. */
    int (*take_message)(void *ctx, char *block, char *msg, size_t len);
} mcp_sink;

#define MCP_SINK_TAKE_MIN ((size_t)64 * 1024)

/* send: failed, and already reported to the sink (the caller need not report it again). */
#define MCP_SEND_REPORTED (-2)

typedef struct mcp_transport_vt {
    const char *name;
    int (*start)(mcp_transport *t, char *err, size_t errlen);
    /* Queue one message (no trailing newline). Returns 0, or -1 with a message in err, or
     * MCP_SEND_REPORTED: failed as -1, and the transport has reported the failure (or the run of
     * failures it belongs to) through the sink's on_error already. */
    int (*send)(mcp_transport *t, const char *msg, size_t len, const mcp_send_info *info, char *err,
                size_t errlen);
    /* The session gave up on a request (timeout, cancel): drop what carries it. May be NULL. */
    void (*abandon)(mcp_transport *t, int64_t request_id);
    /* Begin closing; idempotent. Does not call the sink. */
    void (*close)(mcp_transport *t);
    int (*is_open)(mcp_transport *t);
    void (*destroy)(mcp_transport *t); /* free everything; the last reference went */
} mcp_transport_vt;

struct mcp_transport {
    const mcp_transport_vt *vt;
    int refs;
    mcp_loop *loop;
    const mcp_sink *sink;
    void *sink_ctx;
};

static inline void mcp_transport_ref(mcp_transport *t) { t->refs++; }
static inline void mcp_transport_unref(mcp_transport *t)
{
    if (--t->refs == 0)
        t->vt->destroy(t);
}
static inline void mcp_transport_set_sink(mcp_transport *t, const mcp_sink *sink, void *ctx)
{
    t->sink = sink;
    t->sink_ctx = ctx;
}

#endif
