/* The seam between the JSON-RPC session and a transport. A transport moves whole JSON-RPC
 * messages; the session encodes and decodes them. Both are reference counted C structs boxed in
 * Lua userdata, so a callback in progress keeps its transport alive even if the GC finalizes the
 * userdata meanwhile. */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include <stddef.h>

#include "loop.h"

typedef struct mcp_transport mcp_transport;

/* Implemented by the session; called from loop callbacks only (never from __gc). */
typedef struct mcp_sink {
    void (*on_message)(void *ctx, const char *msg, size_t len);
    /* A non-fatal problem (bad line, oversized message): reported and skipped. */
    void (*on_error)(void *ctx, const char *kind, const char *msg);
    /* The transport is gone for good: fail everything pending. Called once. */
    void (*on_closed)(void *ctx, const char *reason);
} mcp_sink;

typedef struct mcp_transport_vt {
    const char *name;
    int (*start)(mcp_transport *t, char *err, size_t errlen);
    /* Queue one message (no trailing newline). Returns 0, or -1 with a message in err. */
    int (*send)(mcp_transport *t, const char *msg, size_t len, char *err, size_t errlen);
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
