/* Inside the HTTP transports: the shared HTTP layer (http_transport.c: the transport object,
 * request set-up, the exchanges and their common outcomes), which knows neither protocol, and
 * what each protocol (streamable_http.c, legacy_sse.c) decides over it (mcp_http_proto). The
 * protocols call the layer; the layer calls them only through the proto. */
#ifndef MCP_HTTP_INTERNAL_H
#define MCP_HTTP_INTERNAL_H

#include "http_request.h"
#include "http_transport.h"

/* The transport object both protocols share. A protocol's object is larger (proto->size): this
 * first, then the state only that protocol has (streamable_http.c, legacy_sse.c). */
typedef struct mcp_http {
    mcp_transport base;
    const mcp_http_proto *proto;
    mcp_http_config cfg;
    mcp_curl *curl;
    mcp_hreq *reqs;
    char *session_id;
    int session_gen; /* counts the session ids adopted and dropped: which one a request carried */
    char *protocol_version;
    int started, closing;
    mcp_hreq *inbound; /* the protocol's GET event stream (not one resuming a POST's) */
    /* POSTs that are not requests of ours (responses, notifications: what a server can make us
     * send) run at most cfg.max_reply_connections at a time, each holding a connection; the
     * rest wait in a FIFO of at most cfg.max_queued_replies, later ones are dropped. */
    int replies_active, replies_queued, reply_drop_reported;
    mcp_hreq *qhead, *qtail;
    /* POSTs of our own requests run at most cfg.max_connections at a time (each holds a
     * connection: HTTP/1.1 runs one exchange per connection); the rest wait in this FIFO, in
     * the order they were sent, however many: a waiting one is its message and headers only
     * (no libcurl handle), so memory grows with them and connections do not. */
    int requests_active, requests_queued;
    struct queued_request *rqhead, *rqtail;
    mcp_http_event_cb ev_cb;
    void *ev_ctx;
    /* POSTs to cfg.url that finished, kept for the next ones with their easy handles
     * (mcp_hreq_recycle: no new handle, no options set again, no allocation per request); at
     * most MCP_HTTP_REQ_POOL, freed on close. */
    mcp_hreq *idle_req[8];
    int nidle_req;
    /* The headers of a plain POST (no headers of its own, not initialize), built once and shared
     * until what they are made of changes: mcp_http_headers_changed. */
    mcp_hdrs *post_headers;
    /* cfg.url parsed once, for the pooled POST handles (CURLOPT_CURLU); NULL until the first
     * POST, or when it cannot be parsed (url_handle_failed: CURLOPT_URL then, as libcurl's own
     * parse reports the problem). Freed at destroy, after every handle that reads it. */
    CURLU *url_handle;
    int url_handle_failed;
    /* The owner's per-exchange headers for GET and DELETE (mcp_http_set_request_hooks), NULL
     * when none: then nothing of this is used. */
    const mcp_http_request_hooks *hooks;
    void *hooks_ctx;
    /* With hooks, close() starts the session DELETE from this timer (the next loop step). */
    mcp_timer delete_timer;
    int delete_pending;
    int in_hook;        /* inside one of the hooks (they are not re-entered) */
    uint64_t last_hold; /* the last hold given to hooks->refused */
    int settle_cause;   /* during mcp_http_settle: its cause, for mcp_http_post_failed */
    int start_own;      /* the start is the client's own work (mcp_http_start_own) */
} mcp_http;

/* What a protocol decides over the shared layer. */
struct mcp_http_proto {
    const char *name;        /* "HTTP" or "SSE", in messages */
    const char *post_accept; /* the Accept header of a POST */
    /* 1 when a POST's JSON-RPC answer comes in its own response (streamable HTTP: POSTs to the
     * endpoint are pooled, a request's 2xx without its answer fails it, other POSTs get a small
     * body bound); 0 when answers come on the event stream (legacy SSE). */
    int answers_in_post;
    const char *not_found_hint; /* added to a POST's 404 message */
    void (*init)(mcp_http *h);  /* at creation */
    int (*start)(mcp_http *h, char *err, size_t errlen);
    const char *(*post_url)(const mcp_http *h); /* NULL while there is nowhere to POST */
    int (*sends_session)(const mcp_http *h);    /* Mcp-Session-Id on same-origin exchanges */
    int (*ready)(const mcp_http *h);            /* an mcp_sse_endpoint_state */
    /* Optional (NULL: every message is sent). 1 when the message is not to be sent at all (it
     * counts as sent): what the protocol in use carries otherwise. */
    int (*skips)(const mcp_http *h, const mcp_send_info *info);
    /* Optional (NULL: nothing to do). A POST answered 2xx, before its outcome; a POST whose
     * outcome is done; a POST answered 404 or 400 that carried the session (1: handled); a request's POST
     * stream that ended before its answer, at event id last_id (1: it is resumed). */
    void (*post_answered)(mcp_http *h, mcp_hreq *r);
    void (*post_finished)(mcp_http *h, mcp_hreq *r);
    int (*session_lost)(mcp_http *h, mcp_hreq *r, const char *what);
    int (*resume)(mcp_http *h, mcp_hreq *r, const char *last_id);
    /* A GET finished (not held, not redirected, not while closing). */
    void (*stream_done)(mcp_http *h, mcp_hreq *r, CURLcode rc, const char *what);
    void (*on_event)(mcp_hreq *r, const char *type, size_t tlen, const char *data, size_t dlen);
    void (*abandon)(mcp_http *h, int64_t request_id);
    /* close(): stop what it runs; 1 when the session is to be ended (terminate: the DELETE) */
    int (*close)(mcp_http *h);
    void (*terminate)(mcp_http *h);
    /* The DELETE again after the request hooks settled its refusal; it takes over the transport
     * reference the refused one held. 0, or -1 (nothing started). */
    int (*retry_delete)(mcp_http *h, mcp_hreq *refused, int memo);
    void (*destroy)(mcp_http *h); /* free what it owns */
    size_t size;                  /* of its object: an mcp_http first, then its own state */
};

#define MCP_HTTP_REQ_POOL ((int)(sizeof((mcp_http *)0)->idle_req / sizeof(mcp_hreq *)))

#define MCP_HTTP_DEFAULT_MAX_REPLY_CONNECTIONS 8
#define MCP_HTTP_DEFAULT_MAX_QUEUED_REPLIES 1000
#define MCP_HTTP_DEFAULT_MAX_CONNECTIONS 64

/* mcp_hreq.counted: the slot a running POST holds. */
enum { MCP_HTTP_SLOT_NONE, MCP_HTTP_SLOT_REPLY, MCP_HTTP_SLOT_REQUEST };

/* ---- shared (http_transport.c) ---- */
void mcp_http_set_str(char **dst, const char *src, size_t len);
/* The session id, the protocol version or the configured headers changed: the shared POST
 * headers are built again for the next request. */
void mcp_http_headers_changed(mcp_http *h);
/* An event for the Lua binding. */
void mcp_http_emit(mcp_http *h, const char *kind, const char *value);
/* A diagnostic: an "error" event and the sink's on_error. */
void mcp_http_report(mcp_http *h, const char *msg);
void mcp_http_link_req(mcp_http *h, mcp_hreq *r);
void mcp_http_drop_req(mcp_http *h, mcp_hreq *r);
/* info: the message's send options (POST), NULL for GET and DELETE. */
mcp_hreq *mcp_http_new_request(mcp_http *h, int method, const char *url, const char *payload,
                               size_t len, const mcp_send_info *info, const char *last_event_id);
void mcp_http_post_failed(mcp_http *h, mcp_hreq *r, int status, const char *msg);
int mcp_http_request_pending(mcp_http *h, int64_t id);
/* Start a GET stream: the inbound one (for_request 0) or the resumption of a POST stream. */
void mcp_http_start_get(mcp_http *h, int64_t for_request, const char *last_id, int attempts);

#endif
