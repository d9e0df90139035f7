/* One HTTP exchange of an MCP transport (a POST carrying a message, a GET stream, a DELETE):
 * request headers, response status and headers, and a body that is either one JSON document or
 * an event stream, cut into messages. Shared by the streamable HTTP and legacy SSE transports. */
#ifndef MCP_HTTP_REQUEST_H
#define MCP_HTTP_REQUEST_H

#include <stdint.h>

#include "buf.h"
#include "curl_loop.h"
#include "sse_parser.h"

typedef struct mcp_hreq mcp_hreq;

/* A header list shared by the requests that send it (reference counted): libcurl reads it for
 * as long as a transfer runs, so each request holds a reference. */
typedef struct mcp_hdrs {
    int refs;
    struct curl_slist *list;
} mcp_hdrs;
/* Take ownership of list (refs 1); NULL when out of memory (list is then still the caller's). */
mcp_hdrs *mcp_hdrs_new(struct curl_slist *list);
void mcp_hdrs_unref(mcp_hdrs *h);

typedef struct mcp_hreq_ops {
    /* A JSON-RPC message: an SSE "message" event, or a 2xx JSON body at the end. */
    void (*on_message)(mcp_hreq *r, const char *msg, size_t len);
    /* Any other SSE event (the legacy "endpoint" event). May be NULL. */
    void (*on_event)(mcp_hreq *r, const char *type, size_t type_len, const char *data,
                     size_t data_len);
    /* Finished (rc CURLE_OK or the failure); detached from libcurl, not yet freed. */
    void (*on_done)(mcp_hreq *r, CURLcode rc);
} mcp_hreq_ops;

enum { MCP_HREQ_POST, MCP_HREQ_GET, MCP_HREQ_DELETE };

/* What the response body turned out to be, decided at its first byte. */
typedef enum mcp_hreq_mode {
    MCP_HREQ_UNDECIDED, /* no body byte yet */
    MCP_HREQ_STREAM,    /* a 2xx text/event-stream, cut into events */
    MCP_HREQ_BODY       /* one document (JSON, or an error body) */
} mcp_hreq_mode;

struct mcp_hreq {
    mcp_xfer x;
    const mcp_hreq_ops *ops;
    void *owner;
    int method;
    int64_t request_id;  /* the JSON-RPC request a POST carries, 0 if none */
    int background;      /* the client's own work (mcp_send_info's) */
    int for_request;     /* a GET resuming the stream of request_id */
    int is_initialize;   /* carries initialize (no session headers) */
    char *last_event_id; /* the Last-Event-ID it was sent with, owned, may be NULL */
    int event_gen;       /* the session (mcp_http session_gen) that event id belongs to */
    int redirects;       /* hops followed to get here */
    int cross_origin;    /* a hop left the first origin: no user or session headers */
    int counted;         /* the slot it holds: MCP_HTTP_SLOT_* (see http_send) */
    mcp_hreq *qnext;     /* waiting in one of the transport's queues */
    int sent_session;    /* the request carried a session id: its mcp_http session_gen (>= 1) */
    /* With request hooks (mcp_http_set_request_hooks): the URL of this exchange (owned; NULL
     * without hooks), the refusals of what it carries sent again so far, the hooks' memo across
     * them, the hold while the hooks decide about a refusal (0 when none: mcp_http_settle), and
     * whether they let it fail (its failure then goes the usual way). */
    char *hook_url;
    int auth_attempts, auth_memo, auth_settled;
    uint64_t hold;
    uint64_t hook_sent_ms; /* with hooks: when the message it carries was first sent (mcp_now_ms) */
    int start_waits; /* legacy SSE's stream GET: the transport's start waits for its endpoint */
    char *payload;
    size_t payload_len, payload_cap;
    struct curl_slist *headers;       /* owned; or NULL when shared_headers is sent */
    mcp_hdrs *shared_headers;         /* a reference, or NULL */
    struct curl_slist *extra_headers; /* the message's own headers (send options), for redirects */
    /* response */
    long status;
    mcp_hreq_mode mode;
    char *session_id;     /* Mcp-Session-Id of the final response, if any (and valid) */
    int bad_session_id;   /* the final response's Mcp-Session-Id is not visible ASCII */
    long header_status;   /* status of the response whose headers are arriving */
    mcp_buf resp_headers; /* header lines of a non-2xx final response (for the error object) */
    mcp_sse_parser sse;
    int sse_ready;
    int sse_overflow;
    mcp_buf body; /* JSON or error body */
    size_t body_max;
    mcp_buf inbox;          /* events waiting for flush: [u32 tlen][type][u32 dlen][data]... */
    unsigned long retry_ms; /* from the stream's retry field, 0 if none */
    int events_seen;
    int messages_seen; /* events with data (a priming event has none) */
    int attempt;       /* resumption attempts without progress so far */
    int keep_message;  /* a failure's own message beats the body's JSON-RPC message */
    int busy, doomed;  /* inside its own callbacks / freed meanwhile */
    int finished_ok;   /* libcurl finished the transfer with CURLE_OK */
    int reused;        /* recycled: it served an earlier request (mcp_hreq_recycle) */
    int poolable;      /* it may serve a later request (the transport's choice) */
    /* idle limit: the transfer fails after idle_ms without a byte moving either way */
    mcp_timer idle;
    uint64_t idle_ms, last_progress_ms;
    curl_off_t progress;
    mcp_hreq *next, **pprev;
};

/* Create a request (not started). url and payload are copied. NULL when out of memory. */
mcp_hreq *mcp_hreq_new(mcp_curl *c, int method, const char *url, const char *payload,
                       size_t payload_len, size_t body_max, const mcp_hreq_ops *ops, void *owner);
/* Keep a POST whose transfer finished with CURLE_OK for a later POST to the same URL
 * (mcp_hreq_renew), instead of freeing it; also from inside its own on_done. Its per-request
 * state goes (headers, response, session id, body), its easy handle with the options set on it
 * and a small payload buffer stay. 0, or -1 (running, failed, aborted: nothing done, free it). */
int mcp_hreq_recycle(mcp_hreq *r);
/* A recycled request as mcp_hreq_new would make it (same method and URL): only the per-request
 * options are set again. NULL when out of memory (r is freed). */
mcp_hreq *mcp_hreq_renew(mcp_hreq *r, const char *payload, size_t payload_len, size_t body_max,
                         const mcp_hreq_ops *ops, void *owner);
/* Take ownership of a header list for the request. */
void mcp_hreq_set_headers(mcp_hreq *r, struct curl_slist *headers);
/* Send a shared header list (the request takes a reference). */
void mcp_hreq_share_headers(mcp_hreq *r, mcp_hdrs *headers);
int mcp_hreq_start(mcp_hreq *r);
/* Fail the transfer (CURLE_OPERATION_TIMEDOUT) after ms without a byte sent or received; set
 * before mcp_hreq_start. A loop timer measures it, to the millisecond. */
void mcp_hreq_set_idle_timeout(mcp_hreq *r, uint64_t ms);
/* Abort (if running) and free; from inside one of r's callbacks the free is deferred. */
void mcp_hreq_free(mcp_hreq *r);
/* The last event id the stream gave (NULL if none). */
const char *mcp_hreq_last_event_id(mcp_hreq *r, size_t *len);
/* "HTTP 404" style text of the outcome, or curl's error text, into out. */
void mcp_hreq_describe(mcp_hreq *r, CURLcode rc, char *out, size_t outlen);

/* An Mcp-Session-Id the client may use: non-empty, only visible ASCII (0x21-0x7E), as the
 * specification requires; anything else (a CR, a space, a NUL) is never echoed back. */
int mcp_session_id_valid(const char *id, size_t len);

/* Header list helpers: append "Name: value" unless the list already has Name. */
struct curl_slist *mcp_headers_add(struct curl_slist *list, const char *name, const char *value);
int mcp_headers_has(const struct curl_slist *list, const char *name);

#endif
