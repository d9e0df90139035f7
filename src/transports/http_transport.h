/* Streamable HTTP transport (MCP 2025-03-26 .. 2025-11-25) and the legacy HTTP+SSE transport
 * (2024-11-05), both on libcurl inside the core's loop. */
#ifndef MCP_HTTP_TRANSPORT_H
#define MCP_HTTP_TRANSPORT_H

#include "curl_api.h"

#include "curl_loop.h"
#include "transport.h"

/* A libcurl option the user set (CA bundle, client certificate, proxy, Unix socket, ...). */
typedef struct mcp_curl_opt {
    CURLoption opt;
    int is_string;
    long num;
    char *str; /* owned */
} mcp_curl_opt;

typedef struct mcp_http_config {
    char *url;                  /* owned */
    struct curl_slist *headers; /* owned: user headers "Name: value" */
    int follow_redirects;
    long connect_timeout_ms;  /* 0: libcurl's default */
    long idle_timeout_ms;     /* POSTs fail after this long without a byte; 0: never */
    int terminate_on_close;   /* DELETE the session on close */
    char *initial_session_id; /* owned, may be NULL */
    char *bearer_token;       /* owned, may be NULL: Authorization: Bearer <token> */
    size_t max_message;
    /* for the inbound GET stream and resumed POST streams; 0 (or below): the default */
    int max_reconnects;
    int max_connections; /* request POSTs running at once (more wait); 0: default (64) */
    /* POSTs of replies and notifications running at once; 0: default (8) */
    int max_reply_connections;
    int max_queued_replies;  /* more of them waiting, the rest dropped; 0: default (1000) */
    mcp_curl_opt *curl_opts; /* owned array */
    size_t ncurl_opts;
} mcp_http_config;

/* Legacy SSE: whether the endpoint event arrived (messages can be sent only then). */
typedef enum mcp_sse_endpoint_state {
    MCP_SSE_ENDPOINT_FAILED = -1, /* the stream failed before it */
    MCP_SSE_ENDPOINT_WAITING = 0,
    MCP_SSE_ENDPOINT_READY = 1
} mcp_sse_endpoint_state;

/* Transport events for the Lua binding: "session_id" (value or NULL), "session_expired"
 * (the old id), "session_lost" (NULL: after "session_expired", when that session had worked),
 * "endpoint" (legacy SSE ready), "error" (a diagnostic, also sent to the sink). */
typedef void (*mcp_http_event_cb)(void *ctx, const char *kind, const char *value);

/* The transport owner's layer over every HTTP exchange the transport makes (an auth layer's):
 * each POST (a request, a notification, an answer, the core's own ping answers and
 * cancellations), each GET stream (the standalone one, its reconnections, resumed POST streams,
 * legacy SSE's), each same-origin redirect hop and the session DELETE.
 * headers (may be NULL): sets *out to "Name: value" lines for this method and URL (the transport
 * frees them; a fresh DPoP proof, say), or NULL for none; returns 0, or -1 with a message in err
 * (reported; the exchange goes without them). They win over the configured headers
 * (Authorization); a message's own headers (send options) win over them.
 * refused: the exchange was answered 400, 401 or 403 before any stream (status, the response's
 * header lines and body; attempt: 1 for the first refusal of what it carries, memo: what the
 * owner gave with the last mcp_http_settle of it, 0 at first; sent_ms: when the message it
 * carries was first sent, mcp_now_ms; awaited: MCP_HTTP_AWAITED_CALL when a caller waits on it
 * (it carries a request, resumes a request's stream, or is the legacy stream a start waits for),
 * MCP_HTTP_AWAITED_OWN when that caller is the client's own work (mcp_send_info's MCP_SEND_OWN,
 * a start of its own: mcp_http_start_own), 0 for what goes on in the background: a notification,
 * an answer, the standalone GET stream and its reconnections, the session DELETE, a detached
 * request of the client's own: MCP_SEND_DETACHED);
 * request_id: the request of ours it carries or resumes, 0 when none. Returns 1 when the owner takes it:
 * the exchange is held (a request keeps its id, its pending entry and its timeout) until the
 * owner calls mcp_http_settle with hold, once; 0 lets it fail now.
 * With hooks set, the DELETE of close() is sent from the loop's next step (mcp_http_busy is true
 * until then), so that headers are asked for inside a step and never from a finalizer. */
/* The next start is the client's own work, which no call of the user's asked for (a
 * reconnection): what it waits for (legacy SSE's stream) is awaited by it (MCP_HTTP_AWAITED_OWN). */
void mcp_http_start_own(mcp_transport *t, int own);

#define MCP_HTTP_AWAITED_CALL 1
#define MCP_HTTP_AWAITED_OWN 2

typedef struct mcp_http_request_hooks {
    int (*headers)(void *ctx, const char *method, const char *url, struct curl_slist **out,
                   char *err, size_t errlen);
    int (*refused)(void *ctx, uint64_t hold, const char *method, const char *url, long status,
                   const char *headers, size_t headers_len, const char *body, size_t body_len,
                   int attempt, int memo, uint64_t sent_ms, int awaited, int64_t request_id);
} mcp_http_request_hooks;

/* The protocols over the shared HTTP layer: streamable HTTP (streamable_http.c) and the legacy
 * HTTP+SSE transport of 2024-11-05 (legacy_sse.c). */
typedef struct mcp_http_proto mcp_http_proto;
extern const mcp_http_proto mcp_streamable_http;
extern const mcp_http_proto mcp_legacy_sse;

/* A transport of protocol proto. Takes ownership of cfg's contents (also on failure). */
mcp_transport *mcp_http_new(mcp_loop *loop, mcp_curl *curl, mcp_http_config *cfg,
                            const mcp_http_proto *proto);
void mcp_http_config_free(mcp_http_config *cfg);
void mcp_http_on_event(mcp_transport *t, mcp_http_event_cb cb, void *ctx);
void mcp_http_set_protocol_version(mcp_transport *t, const char *version);
/* Set (hooks non-NULL; they must outlive the transport or be removed) or remove the request
 * hooks; ctx is given to them. */
void mcp_http_set_request_hooks(mcp_transport *t, const mcp_http_request_hooks *hooks, void *ctx);
/* Open the standalone GET stream for server-initiated messages (after initialize). */
int mcp_http_open_inbound(mcp_transport *t);
const char *mcp_http_session_id(mcp_transport *t);
/* Set (value non-NULL) or remove a header of every later exchange (POST, GET stream, DELETE); it
 * replaces a configured header of the same name and the bearer token's Authorization. */
/* The longest header value accepted (a long OAuth token; HTTP servers take 64 KB of headers). */
#define MCP_HTTP_HEADER_VALUE_MAX 65536

/* l with the header line "name: value" ("name;" for an empty value) appended; NULL when out of
 * memory (l is kept, unchanged). */
struct curl_slist *mcp_http_header_append(struct curl_slist *l, const char *name,
                                          const char *value);

void mcp_http_set_header(mcp_transport *t, const char *name, const char *value);
/* The last event id the standalone stream gave (the live stream's, else the one it resumes
 * from), NULL when none; not NUL-terminated. */
const char *mcp_http_resumption_token(mcp_transport *t, size_t *len);
/* Exchanges still running (a DELETE on close, say). */
int mcp_http_busy(mcp_transport *t);
/* max_reconnects when the config gives none (or not above 0). The one place it is set: the Lua
 * layer reads it from the core (core.http_default_max_reconnects). */
#define MCP_HTTP_DEFAULT_MAX_RECONNECTS 5
/* The max_reconnects the transport keeps to: the config's, else the default. */
int mcp_http_max_reconnects(mcp_transport *t);
/* 1 while a POST that carries no request of ours (a notification, an answer to the server) has
 * not ended: queued, running, or held by the request hooks. */
int mcp_http_sending(mcp_transport *t);
/* MCP_SSE_ENDPOINT_READY when messages can be sent: always for streamable HTTP; for legacy SSE
 * once the endpoint event arrived (WAITING before, FAILED when the stream failed before it). */
int mcp_http_ready(mcp_transport *t);
/* The owner's decision on the held exchange hold (mcp_http_request_hooks.refused): again, it is
 * sent once more in its place, with new headers (memo is given back at its next refusal); else
 * it fails as it would have without the hooks (cause: a Lua stack index of the calling thread
 * with an error object that stands for a request's failure, 0 when none; see
 * mcp_transport_failure). 0 when nothing is held under hold any more (abandoned, closed). */
int mcp_http_settle(mcp_transport *t, uint64_t hold, int again, int memo, int cause);

#endif
