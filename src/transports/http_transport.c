/* The HTTP layer the streamable HTTP and the legacy SSE transports share, knowing neither: the
 * transport object and its vtable, request set-up (headers, libcurl options), the exchanges and
 * their common outcomes. What a protocol decides it asks h->proto (streamable_http.c,
 * legacy_sse.c), which calls this file, never the other way round. */
#include "http_internal.h"
#include "json.h"
#include "origin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define USER_AGENT "lua-mcp/0.1.0"
#define ERROR_BODY_MAX (64 * 1024)
#define MAX_REDIRECTS 5

void mcp_http_set_str(char **dst, const char *src, size_t len)
{
    char *c = NULL;
    if (src != NULL) {
        c = malloc(len + 1);
        if (c != NULL) {
            memcpy(c, src, len);
            c[len] = '\0';
        }
    }
    free(*dst);
    *dst = c;
}

void mcp_http_headers_changed(mcp_http *h)
{
    mcp_hdrs_unref(h->post_headers);
    h->post_headers = NULL;
}

static void free_idle_reqs(mcp_http *h)
{
    while (h->nidle_req > 0)
        mcp_hreq_free(h->idle_req[--h->nidle_req]);
}

void mcp_http_emit(mcp_http *h, const char *kind, const char *value)
{
    if (h->ev_cb != NULL)
        h->ev_cb(h->ev_ctx, kind, value);
}

void mcp_http_report(mcp_http *h, const char *msg)
{
    mcp_http_emit(h, "error", msg);
    if (h->base.sink != NULL)
        h->base.sink->on_error(h->base.sink_ctx, "transport", msg);
}

void mcp_http_link_req(mcp_http *h, mcp_hreq *r)
{
    r->next = h->reqs;
    if (r->next)
        r->next->pprev = &r->next;
    r->pprev = &h->reqs;
    h->reqs = r;
}

/* Take the head of a FIFO. */
static mcp_hreq *dequeue(mcp_hreq **head, mcp_hreq **tail)
{
    mcp_hreq *r = *head;
    *head = r->qnext;
    if (*head == NULL)
        *tail = NULL;
    r->qnext = NULL;
    return r;
}

/* Start a POST in the slot it takes; 0, or -1 (r is not linked, the caller frees it). */
static int start_in_slot(mcp_http *h, mcp_hreq *r, int slot)
{
    if (mcp_hreq_start(r) != 0)
        return -1;
    mcp_http_link_req(h, r);
    r->counted = slot;
    if (slot == MCP_HTTP_SLOT_REPLY)
        h->replies_active++;
    else if (slot == MCP_HTTP_SLOT_REQUEST)
        h->requests_active++;
    return 0;
}

/* A request of ours waiting for a connection: what its POST is made of when its turn comes. */
typedef struct queued_request {
    struct queued_request *next;
    int64_t request_id;
    int is_initialize;
    int background;           /* mcp_send_info's */
    struct curl_slist *extra; /* the message's own headers */
    size_t len;
    char payload[]; /* the message */
} queued_request;

static void free_waiting(queued_request *q)
{
    curl_slist_free_all(q->extra);
    free(q);
}

static mcp_hreq *new_request(mcp_http *h, int method, const char *url, const char *payload,
                             size_t len, int is_initialize, struct curl_slist *extra,
                             const char *last_event_id, int cross_origin);

/* The request at the head of the queue gets its POST (headers as of now: session, token). */
static void start_waiting_request(mcp_http *h)
{
    queued_request *q = h->rqhead;
    const char *url = h->proto->post_url(h);
    mcp_hreq *r;
    h->rqhead = q->next;
    if (h->rqhead == NULL)
        h->rqtail = NULL;
    h->requests_queued--;
    r = new_request(h, MCP_HREQ_POST, url, q->payload, q->len, q->is_initialize, q->extra, NULL, 0);
    q->extra = NULL; /* new_request owns it, also when it fails */
    if (r != NULL) {
        r->request_id = q->request_id;
        r->background = q->background;
        if (!h->proto->answers_in_post)
            r->body_max = ERROR_BODY_MAX;
        if (start_in_slot(h, r, MCP_HTTP_SLOT_REQUEST) == 0) {
            free_waiting(q);
            return;
        }
        mcp_hreq_free(r);
    }
    if (h->base.sink != NULL) {
        mcp_transport_failure f;
        memset(&f, 0, sizeof f);
        f.message = "MCP HTTP Transport Error: cannot start the HTTP request";
        h->base.sink->on_request_failed(h->base.sink_ctx, q->request_id, &f);
    }
    free_waiting(q);
}

/* Start queued POSTs while there is room: replies, then our requests (in order). */
static void start_queued(mcp_http *h)
{
    while (!h->closing && h->qhead != NULL && h->replies_active < h->cfg.max_reply_connections) {
        mcp_hreq *r = dequeue(&h->qhead, &h->qtail);
        h->replies_queued--;
        if (start_in_slot(h, r, MCP_HTTP_SLOT_REPLY) != 0) {
            mcp_hreq_free(r);
            mcp_http_report(h, "MCP HTTP Transport Error: cannot start the HTTP request");
        }
    }
    if (h->qhead == NULL)
        h->reply_drop_reported = 0;
    while (!h->closing && h->rqhead != NULL && h->requests_active < h->cfg.max_connections)
        start_waiting_request(h);
}

static void free_queued(mcp_http *h)
{
    while (h->qhead != NULL)
        mcp_hreq_free(dequeue(&h->qhead, &h->qtail));
    h->replies_queued = 0;
    while (h->rqhead != NULL) {
        queued_request *q = h->rqhead;
        h->rqhead = q->next;
        free_waiting(q);
    }
    h->rqtail = NULL;
    h->requests_queued = 0;
}

void mcp_http_drop_req(mcp_http *h, mcp_hreq *r)
{
    int counted = r->counted;
    r->counted = 0;
    if (r->pprev != NULL) {
        *r->pprev = r->next;
        if (r->next)
            r->next->pprev = r->pprev;
        r->pprev = NULL;
        r->next = NULL;
    }
    if (h->inbound == r)
        h->inbound = NULL;
    if (r->poolable && !h->closing && h->nidle_req < MCP_HTTP_REQ_POOL && mcp_hreq_recycle(r) == 0)
        h->idle_req[h->nidle_req++] = r;
    else
        mcp_hreq_free(r);
    if (counted == MCP_HTTP_SLOT_REPLY)
        h->replies_active--;
    else if (counted == MCP_HTTP_SLOT_REQUEST)
        h->requests_active--;
    if (counted != MCP_HTTP_SLOT_NONE)
        start_queued(h);
}

/* ---- request set-up -------------------------------------------------------------------- */

/* Append the header line "Name: value" unless list already has Name. */
static struct curl_slist *add_line(struct curl_slist *list, const char *line)
{
    char name[256];
    const char *colon = strchr(line, ':');
    size_t n = colon != NULL ? (size_t)(colon - line) : 0;
    struct curl_slist *l;
    if (n == 0 || n >= sizeof name)
        return list;
    memcpy(name, line, n);
    name[n] = '\0';
    if (mcp_headers_has(list, name))
        return list;
    l = curl_slist_append(list, line);
    return l != NULL ? l : list;
}

/* The message's own headers (send options) as header lines: "Name:" removes a header, "Name;"
 * sends an empty one. NULL when there are none. */
static struct curl_slist *message_headers(const mcp_send_info *info)
{
    struct curl_slist *l = NULL, *n;
    size_t i;
    for (i = 0; info != NULL && i < info->nheaders; i++) {
        const mcp_header *hd = &info->headers[i];
        char line[4096];
        if (hd->value == NULL) /* send without it: curl drops its own, ours is skipped below */
            snprintf(line, sizeof line, "%.*s:", (int)hd->name_len, hd->name);
        else if (hd->value_len == 0)
            snprintf(line, sizeof line, "%.*s;", (int)hd->name_len, hd->name);
        else
            snprintf(line, sizeof line, "%.*s: %.*s", (int)hd->name_len, hd->name,
                     (int)hd->value_len, hd->value);
        n = curl_slist_append(l, line);
        if (n != NULL)
            l = n;
    }
    return l;
}

/* The headers of one exchange, first match wins: the message's own (send options), the
 * request hooks' (a GET's or DELETE's), the transport's (config and set_header), then the
 * protocol's. cross_origin (a redirect left the origin): none of the user's (the message's, the
 * hooks', config headers, Authorization) and none of the session's (Mcp-Session-Id). */
static struct curl_slist *base_headers(mcp_http *h, int method, int is_initialize,
                                       const struct curl_slist *extra,
                                       const struct curl_slist *hooked, const char *last_event_id,
                                       int cross_origin)
{
    struct curl_slist *l = NULL, *n;
    const struct curl_slist *u;
    for (u = cross_origin ? NULL : extra; u != NULL; u = u->next) {
        n = curl_slist_append(l, u->data);
        if (n != NULL)
            l = n;
    }
    for (u = cross_origin ? NULL : hooked; u != NULL; u = u->next) /* the request hooks' */
        l = add_line(l, u->data);
    for (u = cross_origin ? NULL : h->cfg.headers; u != NULL; u = u->next)
        l = add_line(l, u->data);
    /* A line of the list, not CURLOPT_USERAGENT: libcurl formats that option into a string of
     * its own and then into the request, byte by byte, on every exchange. A User-Agent of the
     * user's (above) wins, as it did over the option. */
    l = mcp_headers_add(l, "User-Agent", USER_AGENT);
    if (method == MCP_HREQ_POST) {
        l = mcp_headers_add(l, "Content-Type", "application/json");
        l = mcp_headers_add(l, "Accept", h->proto->post_accept);
    } else if (method == MCP_HREQ_GET) {
        l = mcp_headers_add(l, "Accept", "text/event-stream");
    }
    if (h->protocol_version != NULL && !is_initialize)
        l = mcp_headers_add(l, "MCP-Protocol-Version", h->protocol_version);
    if (!is_initialize && !cross_origin && h->proto->sends_session(h))
        l = mcp_headers_add(l, "Mcp-Session-Id", h->session_id);
    if (last_event_id != NULL)
        l = mcp_headers_add(l, "Last-Event-ID", last_event_id);
    if (h->cfg.bearer_token != NULL && !cross_origin) {
        size_t tlen = strlen(h->cfg.bearer_token);
        char *auth = malloc(tlen + 8);
        if (auth != NULL) {
            memcpy(auth, "Bearer ", 7);
            memcpy(auth + 7, h->cfg.bearer_token, tlen + 1);
            l = mcp_headers_add(l, "Authorization", auth);
            free(auth);
        }
    }
    /* No 100-continue round trip for large POSTs. */
    if (method == MCP_HREQ_POST && !mcp_headers_has(l, "Expect"))
        l = curl_slist_append(l, "Expect:");
    return l;
}

struct curl_slist *mcp_http_header_append(struct curl_slist *l, const char *name, const char *value)
{
    size_t nlen = strlen(name), vlen = strlen(value);
    struct curl_slist *n;
    char *line = malloc(nlen + vlen + 3);
    if (line == NULL)
        return NULL;
    if (vlen == 0)
        snprintf(line, nlen + 2, "%s;", name);
    else
        snprintf(line, nlen + vlen + 3, "%s: %s", name, value);
    n = curl_slist_append(l, line);
    free(line);
    return n;
}

void mcp_http_set_header(mcp_transport *t, const char *name, const char *value)
{
    mcp_http *h = (mcp_http *)t;
    struct curl_slist *kept = NULL, *u, *n;
    size_t len = strlen(name);
    for (u = h->cfg.headers; u != NULL; u = u->next) {
        if (strncasecmp(u->data, name, len) == 0 && (u->data[len] == ':' || u->data[len] == ';'))
            continue;
        n = curl_slist_append(kept, u->data);
        if (n != NULL)
            kept = n;
    }
    if (value != NULL) {
        n = mcp_http_header_append(kept, name, value);
        if (n != NULL)
            kept = n;
    }
    curl_slist_free_all(h->cfg.headers);
    h->cfg.headers = kept;
    mcp_http_headers_changed(h);
}

static void common_options(mcp_http *h, mcp_hreq *r, int streaming)
{
    CURL *e = r->x.easy;
    size_t i;
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    /* Redirects are never followed by libcurl (it would send every header to any host); with
     * redirect = "follow" the transport follows them itself (follow_redirect). */
    if (h->cfg.connect_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->cfg.connect_timeout_ms);
    /* Never a total-time limit on a stream; an idle limit on POSTs when asked for, measured
     * by a loop timer (libcurl's LOW_SPEED_TIME checks once a second and fired seconds late). */
    if (!streaming && h->cfg.idle_timeout_ms > 0)
        mcp_hreq_set_idle_timeout(r, (uint64_t)h->cfg.idle_timeout_ms);
    for (i = 0; i < h->cfg.ncurl_opts; i++) {
        const mcp_curl_opt *o = &h->cfg.curl_opts[i];
        if (o->is_string)
            curl_easy_setopt(e, o->opt, o->str);
        else
            curl_easy_setopt(e, o->opt, o->num);
    }
}

static const mcp_hreq_ops post_ops, get_ops, delete_ops;

/* The endpoint's URL parsed once, with the flags libcurl parses CURLOPT_URL with (7.88 url.c,
 * parseurlandfillconn; the options that add others are not offered). */
static CURLU *endpoint_url(mcp_http *h)
{
    if (h->url_handle != NULL || h->url_handle_failed)
        return h->url_handle;
    h->url_handle = curl_url();
    if (h->url_handle != NULL &&
        curl_url_set(h->url_handle, CURLUPART_URL, h->cfg.url,
                     CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
        curl_url_cleanup(h->url_handle);
        h->url_handle = NULL;
    }
    h->url_handle_failed = h->url_handle == NULL;
    return h->url_handle;
}

/* A new handle for the endpoint takes the parsed URL (CURLOPT_CURLU) instead of the string:
 * libcurl parses CURLOPT_URL and formats it back, byte by byte, at every transfer (~10 k
 * instructions of a sequential call); from the handle it copies the parts. The URL string is
 * cleared first, so that libcurl's effective URL is the normalised one, as after its own parse.
 * A libcurl without the option (before 7.63) keeps the string. */
static void use_endpoint_url(mcp_http *h, CURL *e)
{
    CURLU *u = endpoint_url(h);
    if (u == NULL)
        return;
    curl_easy_setopt(e, CURLOPT_URL, (char *)NULL);
    if (curl_easy_setopt(e, CURLOPT_CURLU, u) != CURLE_OK)
        curl_easy_setopt(e, CURLOPT_URL, h->cfg.url);
}

static const char *method_name(int method)
{
    return method == MCP_HREQ_GET ? "GET" : method == MCP_HREQ_DELETE ? "DELETE" : "POST";
}

/* The request hooks' header lines for an exchange to url, NULL when none (a failure is
 * reported). The caller holds a reference to the transport: the hook, Lua code, may close it but
 * not destroy it. Not re-entered: a hook that starts an exchange gets none for it. */
static struct curl_slist *hooked_headers(mcp_http *h, int method, const char *url)
{
    struct curl_slist *l = NULL;
    char err[512], msg[700];
    int rc;
    err[0] = '\0';
    h->in_hook = 1;
    rc = h->hooks->headers(h->hooks_ctx, method_name(method), url, &l, err, sizeof err);
    h->in_hook = 0;
    if (rc != 0) {
        curl_slist_free_all(l);
        snprintf(msg, sizeof msg, "MCP HTTP Transport Error: the request headers for %s failed: %s",
                 method_name(method), err);
        mcp_http_report(h, msg);
        return NULL;
    }
    return l;
}

/* extra: the message's own header lines, owned by the request from here on (kept for the hops
 * of a redirect). An exchange to the first origin gets the request hooks' headers, asked for its
 * method and url. */
static mcp_hreq *new_request(mcp_http *h, int method, const char *url, const char *payload,
                             size_t len, int is_initialize, struct curl_slist *extra,
                             const char *last_event_id, int cross_origin)
{
    const mcp_hreq_ops *ops = method == MCP_HREQ_POST  ? &post_ops
                              : method == MCP_HREQ_GET ? &get_ops
                                                       : &delete_ops;
    /* POSTs to the endpoint reuse finished ones (one per request in flight, kept between). */
    int poolable = method == MCP_HREQ_POST && !cross_origin && h->proto->answers_in_post &&
                   strcmp(url, h->cfg.url) == 0;
    mcp_hreq *r;
    struct curl_slist *hooked = NULL;
    char *hook_url = NULL;
    if (!cross_origin && h->hooks != NULL) {
        int was_closing = h->closing;
        if (h->hooks->headers != NULL && !h->in_hook)
            hooked = hooked_headers(h, method, url);
        if (h->closing && !was_closing) { /* the hook closed the transport: nothing to send */
            curl_slist_free_all(hooked);
            curl_slist_free_all(extra);
            return NULL;
        }
        hook_url = strdup(url);
    }
    if (poolable && h->nidle_req > 0)
        r = mcp_hreq_renew(h->idle_req[--h->nidle_req], payload, len, h->cfg.max_message, ops, h);
    else
        r = mcp_hreq_new(h->curl, method, url, payload, len, h->cfg.max_message, ops, h);
    if (r == NULL) {
        curl_slist_free_all(hooked);
        free(hook_url);
        curl_slist_free_all(extra);
        return NULL;
    }
    r->poolable = poolable;
    if (poolable && !r->reused)
        use_endpoint_url(h, r->x.easy);
    if (method == MCP_HREQ_POST && extra == NULL && hooked == NULL && last_event_id == NULL &&
        !cross_origin && !is_initialize) {
        /* A plain POST: the transport's current headers, built once. */
        if (h->post_headers == NULL) {
            struct curl_slist *l = base_headers(h, method, 0, NULL, NULL, NULL, 0);
            h->post_headers = mcp_hdrs_new(l);
            if (h->post_headers == NULL)
                curl_slist_free_all(l);
        }
        if (h->post_headers != NULL)
            mcp_hreq_share_headers(r, h->post_headers);
        else
            mcp_hreq_set_headers(r, base_headers(h, method, 0, NULL, NULL, NULL, 0));
    } else {
        mcp_hreq_set_headers(
            r, base_headers(h, method, is_initialize, extra, hooked, last_event_id, cross_origin));
    }
    curl_slist_free_all(hooked);
    if (hook_url != NULL) {
        r->hook_url = hook_url;
        r->hook_sent_ms = mcp_now_ms();
    }
    r->extra_headers = extra;
    if (!r->reused)
        common_options(h, r, method == MCP_HREQ_GET);
    else if (h->cfg.idle_timeout_ms > 0) /* the rest of common_options is in the handle */
        mcp_hreq_set_idle_timeout(r, (uint64_t)h->cfg.idle_timeout_ms);
    r->sent_session =
        !is_initialize && !cross_origin && h->proto->sends_session(h) ? h->session_gen : 0;
    r->is_initialize = is_initialize;
    r->cross_origin = cross_origin;
    if (last_event_id != NULL) {
        mcp_http_set_str(&r->last_event_id, last_event_id, strlen(last_event_id));
        r->event_gen = h->session_gen;
    }
    return r;
}

mcp_hreq *mcp_http_new_request(mcp_http *h, int method, const char *url, const char *payload,
                               size_t len, const mcp_send_info *info, const char *last_event_id)
{
    return new_request(h, method, url, payload, len, info != NULL && info->is_initialize,
                       message_headers(info), last_event_id, 0);
}

static struct curl_slist *copy_lines(const struct curl_slist *l)
{
    struct curl_slist *c = NULL, *n;
    for (; l != NULL; l = l->next) {
        n = curl_slist_append(c, l->data);
        if (n != NULL)
            c = n;
    }
    return c;
}

static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* The Last-Event-ID of a new exchange for what r carried (a redirect's next hop, a held GET sent
 * again): r's, unless the session changed since (an event id of one session means nothing to
 * another; expire_session drops the standalone stream's own for the same reason), when none. */
static const char *event_id_again(const mcp_http *h, const mcp_hreq *r)
{
    return r->last_event_id != NULL && r->event_gen == h->session_gen ? r->last_event_id : NULL;
}

/* A GET resuming a request's POST stream whose event id belongs to another session than the
 * current one: the stream cannot be resumed there (without the id the GET would be a standalone
 * stream), so it is not sent again. */
static int resume_lost(const mcp_http *h, const mcp_hreq *r)
{
    return r->for_request && r->last_event_id != NULL && event_id_again(h, r) == NULL;
}

/* n, a new exchange for what r carried (a redirect's next hop, a refused GET sent again), started
 * in r's place: it answers r's request, and is the inbound stream when r was. 1 when it started;
 * else n is freed. */
static int take_place(mcp_http *h, mcp_hreq *r, mcp_hreq *n)
{
    n->request_id = r->request_id;
    n->background = r->background;
    n->for_request = r->for_request;
    n->start_waits = r->start_waits;
    n->attempt = r->attempt;
    if (mcp_hreq_start(n) != 0) {
        mcp_hreq_free(n);
        return 0;
    }
    mcp_http_link_req(h, n);
    if (h->inbound == r)
        h->inbound = n;
    return 1;
}

/* redirect = "follow": each hop is a new exchange with the same method and body, at most
 * MAX_REDIRECTS of them, to http(s) only. A hop to another origin than the one before it drops
 * every user and session header (config headers, Authorization, Mcp-Session-Id) for the rest of
 * the chain. Returns 1 when r was replaced by the next hop (the caller drops r). */
static int follow_redirect(mcp_http *h, mcp_hreq *r, CURLcode rc)
{
    char *loc = NULL, *cur = NULL;
    mcp_origin o;
    mcp_hreq *n;
    int cross;
    if (!h->cfg.follow_redirects || rc != CURLE_OK || !is_redirect(r->status) ||
        r->redirects >= MAX_REDIRECTS)
        return 0;
    curl_easy_getinfo(r->x.easy, CURLINFO_REDIRECT_URL, &loc);
    curl_easy_getinfo(r->x.easy, CURLINFO_EFFECTIVE_URL, &cur);
    if (loc == NULL || mcp_origin_parse(loc, strlen(loc), &o) != 0 || resume_lost(h, r))
        return 0;
    cross = r->cross_origin || !mcp_same_origin(cur, loc);
    n = new_request(h, r->method, loc, r->payload, r->payload_len, r->is_initialize,
                    copy_lines(r->extra_headers), event_id_again(h, r), cross);
    if (n == NULL)
        return 0;
    n->body_max = r->body_max;
    n->hook_sent_ms = r->hook_sent_ms; /* the same message */
    n->redirects = r->redirects + 1;
    n->counted = r->counted; /* the hop takes over the slot */
    r->counted = MCP_HTTP_SLOT_NONE;
    return take_place(h, r, n);
}

/* Who waits on r (the request hooks' awaited): MCP_HTTP_AWAITED_CALL, a caller (it carries a
 * request, resumes a request's stream, or is the legacy stream a start waits for);
 * MCP_HTTP_AWAITED_OWN, the same for the client's own work (mcp_send_info's MCP_SEND_OWN, a
 * start of its own); 0, no one (a notification, an answer, the standalone GET stream, the
 * session DELETE, a detached request). */
static int awaited(const mcp_hreq *r)
{
    if (r->background == MCP_SEND_DETACHED || (r->request_id == 0 && !r->start_waits))
        return 0;
    return r->background == MCP_SEND_OWN ? MCP_HTTP_AWAITED_OWN : MCP_HTTP_AWAITED_CALL;
}

/* An exchange refused (400, 401, 403) before any stream, to the first origin, under request
 * hooks: 1 when the hooks hold it (mcp_http_settle decides; it stays linked meanwhile, so that
 * abandon and close drop it), 0 when it goes on to fail now. */
static int hold_refused(mcp_http *h, mcp_hreq *r, CURLcode rc)
{
    int taken;
    if (rc != CURLE_OK || r->hook_url == NULL || r->auth_settled || r->hold != 0 ||
        r->mode == MCP_HREQ_STREAM || (r->status != 400 && r->status != 401 && r->status != 403) ||
        h->hooks == NULL || h->hooks->refused == NULL || h->in_hook ||
        (h->closing && r->method != MCP_HREQ_DELETE))
        return 0;
    r->hold = ++h->last_hold;
    h->in_hook = 1;
    taken = h->hooks->refused(h->hooks_ctx, r->hold, method_name(r->method), r->hook_url, r->status,
                              r->resp_headers.len ? mcp_buf_head(&r->resp_headers) : "",
                              r->resp_headers.len, r->body.len ? mcp_buf_head(&r->body) : "",
                              r->body.len, r->auth_attempts + 1, r->auth_memo, r->hook_sent_ms,
                              awaited(r), r->request_id);
    h->in_hook = 0;
    if (!taken)
        r->hold = 0;
    return taken;
}

/* The held exchange r once more, with fresh headers, in its place; 1 when it was sent (the
 * caller drops r). */
static int send_again(mcp_http *h, mcp_hreq *r, int memo)
{
    int slot = r->counted;
    mcp_hreq *n;
    if (r->method == MCP_HREQ_DELETE)
        return h->proto->retry_delete(h, r, memo) == 0;
    if (resume_lost(h, r))
        return 0;
    n = new_request(h, r->method, r->hook_url, r->payload, r->payload_len, r->is_initialize,
                    copy_lines(r->extra_headers), event_id_again(h, r), 0);
    if (n == NULL)
        return 0;
    n->body_max = r->body_max;
    n->hook_sent_ms = r->hook_sent_ms; /* the same message */
    n->redirects = r->redirects;
    n->auth_attempts = r->auth_attempts + 1;
    n->auth_memo = memo;
    n->counted = slot; /* it takes over the slot */
    r->counted = MCP_HTTP_SLOT_NONE;
    if (take_place(h, r, n))
        return 1;
    r->counted = slot;
    return 0;
}

int mcp_http_settle(mcp_transport *t, uint64_t hold, int again, int memo, int cause)
{
    mcp_http *h = (mcp_http *)t;
    mcp_hreq *r;
    for (r = h->reqs; r != NULL && (hold == 0 || r->hold != hold); r = r->next)
        ;
    if (r == NULL)
        return 0;
    r->hold = 0;
    mcp_transport_ref(t);
    if (again && (!h->closing || r->method == MCP_HREQ_DELETE) && send_again(h, r, memo)) {
        mcp_http_drop_req(h, r); /* (a DELETE's transport reference went to the new one) */
    } else {
        /* as without the hooks: the usual failure (the done callback runs again) */
        r->auth_settled = 1;
        h->settle_cause = cause;
        r->ops->on_done(r, CURLE_OK);
        h->settle_cause = 0;
    }
    mcp_transport_unref(t);
    return 1;
}

/* ---- outcomes ------------------------------------------------------------------------------ */

/* A POST that failed: fail its request, or mcp_http_report when it carried no request. */
void mcp_http_post_failed(mcp_http *h, mcp_hreq *r, int status, const char *msg)
{
    const mcp_sink *sink = h->base.sink;
    if (r->request_id != 0 && sink != NULL) {
        mcp_transport_failure f;
        memset(&f, 0, sizeof f);
        f.status = status;
        f.message = msg;
        f.body = r->body.len ? mcp_buf_head(&r->body) : NULL;
        f.body_len = r->body.len;
        f.keep_message = r->keep_message;
        f.headers = r->resp_headers.len ? mcp_buf_head(&r->resp_headers) : NULL;
        f.headers_len = r->resp_headers.len;
        f.cause = r->auth_settled ? h->settle_cause : 0;
        sink->on_request_failed(h->base.sink_ctx, r->request_id, &f);
    } else {
        mcp_http_report(h, msg);
    }
}

static void on_message(mcp_hreq *r, const char *msg, size_t len)
{
    mcp_http *h = r->owner;
    /* An answer under an invalid session id is not taken: post_done fails its request. */
    if (r->method == MCP_HREQ_POST && r->bad_session_id)
        return;
    if (h->base.sink != NULL && !h->closing)
        h->base.sink->on_message(h->base.sink_ctx, msg, len);
}

/* The JSON body of a POST's response, decoded in place (no copy of a large escaped string): a
 * request it does not answer fails with the body, which undo then gives back as it came. */
static void on_body_message(mcp_hreq *r, mcp_buf *undo)
{
    mcp_http *h = r->owner;
    if (h->base.sink != NULL && !h->closing)
        h->base.sink->on_message_inplace(h->base.sink_ctx, mcp_buf_head(&r->body), r->body.len,
                                         undo);
}

int mcp_http_request_pending(mcp_http *h, int64_t id)
{
    return id != 0 && h->base.sink != NULL && h->base.sink->is_pending(h->base.sink_ctx, id);
}

/* What the response said, for messages: "HTTP 500: <body>" or curl's text. */
static void describe(mcp_hreq *r, CURLcode rc, char *out, size_t outlen)
{
    char what[CURL_ERROR_SIZE + 32];
    mcp_hreq_describe(r, rc, what, sizeof what);
    if (rc == CURLE_OK && r->body.len > 0)
        snprintf(out, outlen, "%s: %.*s", what, (int)(r->body.len > 1000 ? 1000 : r->body.len),
                 mcp_buf_head(&r->body));
    else
        snprintf(out, outlen, "%s", what);
}

/* describe() into out, for a message: only the failures need it. */
static const char *what_of(mcp_hreq *r, CURLcode rc, char *out, size_t outlen)
{
    describe(r, rc, out, outlen);
    return out;
}

/* A POST's event stream ended before its response: resume it where it stopped (GET with
 * Last-Event-ID after the server's retry delay), as MCP 2025-11-25 prescribes; without an event
 * id the request fails. */
static void post_stream_cut(mcp_http *h, mcp_hreq *r, CURLcode rc)
{
    size_t idlen;
    const char *last_id = mcp_hreq_last_event_id(r, &idlen);
    char msg[1400], what[1200];
    if (last_id != NULL && h->proto->resume != NULL) {
        char id[512];
        snprintf(id, sizeof id, "%.*s", (int)idlen, last_id);
        if (h->proto->resume(h, r, id))
            return;
    }
    snprintf(msg, sizeof msg,
             "MCP HTTP Transport Error: the event stream ended before the response (%s)",
             what_of(r, rc, what, sizeof what));
    mcp_http_post_failed(h, r, (int)r->status, msg);
}

/* A POST answered with a redirect that was not followed. */
static void post_redirected(mcp_http *h, mcp_hreq *r)
{
    char msg[1400], *loc = NULL;
    curl_easy_getinfo(r->x.easy, CURLINFO_REDIRECT_URL, &loc);
    if (h->cfg.follow_redirects)
        snprintf(msg, sizeof msg,
                 "MCP HTTP Transport Error: the server redirected (HTTP %ld) to %s; not "
                 "followed (more than %d hops, or not an http(s) URL)",
                 r->status, loc ? loc : "(no location)", MAX_REDIRECTS);
    else
        snprintf(msg, sizeof msg,
                 "MCP HTTP Transport Error: the server redirected (HTTP %ld) to %s; redirects "
                 "are refused unless redirect = mcp.REDIRECT_FOLLOW",
                 r->status, loc ? loc : "(no location)");
    mcp_http_post_failed(h, r, (int)r->status, msg);
}

/* A POST answered with another status than 2xx or 3xx (404, or a 400 naming it, on a session:
 * the server lost it). */
static void post_refused(mcp_http *h, mcp_hreq *r, CURLcode rc)
{
    char msg[1400], what[1200];
    what_of(r, rc, what, sizeof what);
    if ((r->status == 404 || r->status == 400) && r->sent_session &&
        h->proto->session_lost != NULL && h->proto->session_lost(h, r, what))
        return;
    snprintf(msg, sizeof msg, "MCP %s Transport Error: POSTing to endpoint (%s)%s", h->proto->name,
             what, r->status == 404 ? h->proto->not_found_hint : "");
    mcp_http_post_failed(h, r, (int)r->status, msg);
}

/* A 2xx POST's one-document body: the JSON-RPC answer, decoded in place (undo records how). */
static void post_body(mcp_http *h, mcp_hreq *r, mcp_buf *undo)
{
    char msg[300], *ct = NULL;
    curl_easy_getinfo(r->x.easy, CURLINFO_CONTENT_TYPE, &ct);
    if (ct != NULL && strstr(ct, "json") != NULL) {
        if (!r->bad_session_id) /* (an answer under an invalid session id is not taken) */
            on_body_message(r, undo);
        return;
    }
    snprintf(msg, sizeof msg, "MCP HTTP Transport Error: Unexpected content type: %.200s",
             ct ? ct : "(none)");
    mcp_http_post_failed(h, r, (int)r->status, msg);
}

/* What a finished POST (not held, not while closing) comes to. */
static void post_outcome(mcp_http *h, mcp_hreq *r, CURLcode rc, mcp_buf *undo)
{
    char msg[1400], what[1200];
    long status = r->status;
    if (follow_redirect(h, r, rc)) {
        /* the next hop carries the request on */
    } else if (rc == CURLE_OK && r->bad_session_id) {
        snprintf(msg, sizeof msg,
                 "MCP HTTP Transport Error: the server sent an invalid Mcp-Session-Id (only "
                 "visible ASCII 0x21-0x7E is allowed); its answer is refused");
        r->keep_message = 1;
        mcp_http_post_failed(h, r, (int)status, msg);
    } else if (r->mode == MCP_HREQ_STREAM && mcp_http_request_pending(h, r->request_id)) {
        post_stream_cut(h, r, rc);
    } else if (rc != CURLE_OK) {
        snprintf(msg, sizeof msg, "MCP HTTP Transport Error: POSTing to endpoint failed: %s",
                 what_of(r, rc, what, sizeof what));
        mcp_http_post_failed(h, r, 0, msg);
    } else if (status >= 300 && status < 400) {
        post_redirected(h, r);
    } else if (status < 200 || status >= 300) {
        post_refused(h, r, rc);
    } else if (r->mode == MCP_HREQ_BODY && r->body.len > 0 && h->proto->answers_in_post &&
               status != 202) {
        post_body(h, r, undo);
    } else if (r->mode == MCP_HREQ_STREAM && r->sse_overflow) {
        mcp_http_report(
            h, "MCP HTTP Transport Error: an event exceeded max_message_size and was skipped");
    }
}

static void post_done(mcp_hreq *r, CURLcode rc)
{
    mcp_http *h = r->owner;
    char msg[300];
    long status = r->status;
    mcp_buf undo; /* what decoding the body in place changed in it */
    if (!h->closing && hold_refused(h, r, rc))
        return; /* held: mcp_http_settle sends it again or fails it */
    mcp_buf_init(&undo);
    mcp_transport_ref(&h->base);
    if (rc == CURLE_OK && status >= 200 && status < 300 && h->proto->post_answered != NULL)
        h->proto->post_answered(h, r);
    if (!h->closing) /* (else nothing to report: the client is going away) */
        post_outcome(h, r, rc, &undo);
    /* The exchange is over: a request it should have answered (a 200 whose body was not JSON,
     * not its response, or empty) fails now rather than at its timeout. 202 is left alone. */
    if (!h->closing && rc == CURLE_OK && status >= 200 && status < 300 && status != 202 &&
        r->mode != MCP_HREQ_STREAM && h->proto->answers_in_post &&
        mcp_http_request_pending(h, r->request_id)) {
        snprintf(msg, sizeof msg,
                 "MCP HTTP Transport Error: the server answered HTTP %ld without a usable "
                 "JSON-RPC response to this request (%s)",
                 status, r->body.len ? "the body is not one" : "empty body");
        r->keep_message = 1;
        mcp_json_undo_apply(&undo, mcp_buf_head(&r->body));
        mcp_http_post_failed(h, r, (int)status, msg);
    }
    mcp_buf_free(&undo);
    if (!h->closing && h->proto->post_finished != NULL)
        h->proto->post_finished(h, r);
    mcp_http_drop_req(h, r);
    mcp_transport_unref(&h->base);
}

static void get_done(mcp_hreq *r, CURLcode rc)
{
    mcp_http *h = r->owner;
    char what[1200];
    mcp_transport_ref(&h->base);
    describe(r, rc, what, sizeof what);
    if (h->closing) {
        /* going away */
    } else if (follow_redirect(h, r, rc)) {
        /* the next hop carries the stream on */
    } else if (hold_refused(h, r, rc)) {
        mcp_transport_unref(&h->base); /* held: mcp_http_settle sends it again or fails it */
        return;
    } else {
        h->proto->stream_done(h, r, rc, what);
    }
    mcp_http_drop_req(h, r);
    mcp_transport_unref(&h->base);
}

static void delete_done(mcp_hreq *r, CURLcode rc)
{
    mcp_http *h = r->owner;
    if (hold_refused(h, r, rc))
        return; /* held (with the reference): mcp_http_settle sends it again or ends it */
    mcp_http_drop_req(h, r);
    mcp_transport_unref(&h->base); /* the reference the DELETE held */
}

static const mcp_hreq_ops post_ops = {on_message, NULL, post_done};
/* An SSE event other than a message: the protocol's (legacy SSE's endpoint event). */
static void on_event(mcp_hreq *r, const char *type, size_t tlen, const char *data, size_t dlen)
{
    mcp_http *h = r->owner;
    if (h->proto->on_event != NULL)
        h->proto->on_event(r, type, tlen, data, dlen);
}

static const mcp_hreq_ops get_ops = {on_message, on_event, get_done};
static const mcp_hreq_ops delete_ops = {on_message, NULL, delete_done};

void mcp_http_start_get(mcp_http *h, int64_t for_request, const char *last_id, int attempts)
{
    mcp_hreq *r = mcp_http_new_request(h, MCP_HREQ_GET, h->cfg.url, NULL, 0, NULL, last_id);
    char msg[256];
    if (r == NULL && h->closing)
        return; /* the request hooks closed the transport */
    if (r == NULL || mcp_hreq_start(r) != 0) {
        snprintf(msg, sizeof msg, "MCP HTTP Transport Error: cannot start a GET request");
        mcp_hreq_free(r);
        mcp_http_report(h, msg);
        return;
    }
    r->request_id = for_request;
    r->for_request = for_request != 0;
    r->attempt = attempts;
    mcp_http_link_req(h, r);
    if (!for_request)
        h->inbound = r;
}

/* ---- the vtable -------------------------------------------------------------------------- */

static int http_start(mcp_transport *t, char *err, size_t errlen)
{
    mcp_http *h = (mcp_http *)t;
    if (h->started) {
        snprintf(err, errlen, "HTTP transport already started");
        return -1;
    }
    h->started = 1;
    return h->proto->start(h, err, errlen);
}

/* A request of ours in the FIFO of those waiting for a connection: 0, or -1 with err. */
static int wait_for_connection(mcp_http *h, const char *msg, size_t len, const mcp_send_info *info,
                               char *err, size_t errlen)
{
    queued_request *q = malloc(sizeof *q + (len ? len : 1));
    if (q == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    q->next = NULL;
    q->request_id = info->request_id;
    q->is_initialize = info->is_initialize;
    q->background = info->background;
    q->extra = message_headers(info);
    q->len = len;
    memcpy(q->payload, msg, len);
    if (h->rqtail != NULL)
        h->rqtail->next = q;
    else
        h->rqhead = q;
    h->rqtail = q;
    h->requests_queued++;
    return 0;
}

static int http_send(mcp_transport *t, const char *msg, size_t len, const mcp_send_info *info,
                     char *err, size_t errlen)
{
    mcp_http *h = (mcp_http *)t;
    mcp_hreq *r;
    const char *url = h->proto->post_url(h);
    if (!h->started || h->closing) {
        snprintf(err, errlen, "%s transport is %s", h->proto->name,
                 h->started ? "closed" : "not started");
        return -1;
    }
    if (url == NULL) {
        snprintf(err, errlen, "MCP %s Transport Error: Not connected", h->proto->name);
        return -1;
    }
    if (h->proto->skips != NULL && h->proto->skips(h, info))
        return 0;
    /* A request of ours: at most max_connections run at once, the rest wait their turn (their
     * timeouts run meanwhile; the session's abandon takes one out of the queue). */
    if (info->request_id != 0 &&
        (h->requests_active >= h->cfg.max_connections || h->rqhead != NULL))
        return wait_for_connection(h, msg, len, info, err, errlen);
    r = mcp_http_new_request(h, MCP_HREQ_POST, url, msg, len, info, NULL);
    if (r == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->request_id = info->request_id;
    r->background = info->background;
    if (r->request_id == 0 || !h->proto->answers_in_post)
        r->body_max = ERROR_BODY_MAX;
    /* A reply or notification: bounded, so a server that floods us with requests and never
     * answers our POSTs costs at most cfg.max_reply_connections connections. */
    if (r->request_id == 0 && h->replies_active >= h->cfg.max_reply_connections) {
        if (h->replies_queued >= h->cfg.max_queued_replies) {
            mcp_hreq_free(r);
            snprintf(err, errlen,
                     "MCP HTTP Transport Error: the server is not answering our POSTs (%d "
                     "running, %d waiting: max_reply_connections, max_queued_replies); the "
                     "message is dropped",
                     h->replies_active, h->replies_queued);
            if (!h->reply_drop_reported) {
                h->reply_drop_reported = 1;
                mcp_http_report(h, err);
            }
            return MCP_SEND_REPORTED; /* once per run of drops, above */
        }
        if (h->qtail != NULL)
            h->qtail->qnext = r;
        else
            h->qhead = r;
        h->qtail = r;
        h->replies_queued++;
        return 0;
    }
    if (start_in_slot(h, r, r->request_id == 0 ? MCP_HTTP_SLOT_REPLY : MCP_HTTP_SLOT_REQUEST) !=
        0) {
        mcp_hreq_free(r);
        snprintf(err, errlen, "cannot start the HTTP request");
        return -1;
    }
    return 0;
}

static void http_abandon(mcp_transport *t, int64_t request_id)
{
    mcp_http *h = (mcp_http *)t;
    mcp_hreq *r, *next;
    queued_request **pp, *q, *prev = NULL;
    for (pp = &h->rqhead; *pp != NULL;) { /* still waiting for a connection */
        q = *pp;
        if (q->request_id == request_id) {
            *pp = q->next;
            if (h->rqtail == q)
                h->rqtail = prev;
            h->requests_queued--;
            free_waiting(q);
        } else {
            prev = q;
            pp = &q->next;
        }
    }
    for (r = h->reqs; r != NULL; r = next) {
        next = r->next;
        if (r->request_id == request_id && (r->method == MCP_HREQ_POST || r->for_request))
            mcp_http_drop_req(h, r);
    }
    if (h->proto->abandon != NULL)
        h->proto->abandon(h, request_id);
}

static void http_close(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    int end_session;
    if (h->closing)
        return;
    h->closing = 1;
    end_session = h->proto->close(h);
    free_queued(h);
    while (h->reqs != NULL)
        mcp_http_drop_req(h, h->reqs);
    free_idle_reqs(h);
    if (!end_session)
        return;
    if (h->hooks != NULL && h->hooks->headers != NULL) {
        /* From the next step: close() may come from anywhere (a finalizer too), the hooks' headers
         * are asked for inside a step. The timer holds a reference until the DELETE takes its own. */
        if (mcp_timer_start(t->loop, &h->delete_timer, 0) == 0) {
            h->delete_pending = 1;
            mcp_transport_ref(t);
            return;
        }
    }
    h->proto->terminate(h);
}

static void on_delete_timer(mcp_loop *loop, mcp_timer *t)
{
    mcp_http *h = t->data;
    (void)loop;
    h->delete_pending = 0;
    h->proto->terminate(h);
    mcp_transport_unref(&h->base); /* the timer's; the DELETE holds its own */
}

static int http_is_open(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    return h->started && !h->closing && h->proto->ready(h) == MCP_SSE_ENDPOINT_READY;
}

static void http_destroy(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    mcp_loop *loop = t->loop;
    t->sink = NULL;
    h->ev_cb = NULL;
    h->closing = 1;
    h->proto->destroy(h);
    mcp_timer_stop(loop, &h->delete_timer); /* (never pending here: it holds a reference) */
    free_queued(h);
    while (h->reqs != NULL)
        mcp_http_drop_req(h, h->reqs);
    free_idle_reqs(h);
    mcp_hdrs_unref(h->post_headers);
    if (h->url_handle != NULL) /* no handle reads it any more: all freed above */
        curl_url_cleanup(h->url_handle);
    free(h->session_id);
    free(h->protocol_version);
    mcp_http_config_free(&h->cfg);
    mcp_curl_unref(h->curl);
    free(h);
    mcp_loop_unref(loop);
}

static const mcp_transport_vt http_vt = {
    "http", http_start, http_send, http_abandon, http_close, http_is_open, http_destroy,
};

void mcp_http_config_free(mcp_http_config *cfg)
{
    size_t i;
    free(cfg->url);
    curl_slist_free_all(cfg->headers);
    free(cfg->initial_session_id);
    free(cfg->bearer_token);
    for (i = 0; i < cfg->ncurl_opts; i++)
        free(cfg->curl_opts[i].str);
    free(cfg->curl_opts);
    memset(cfg, 0, sizeof *cfg);
}

mcp_transport *mcp_http_new(mcp_loop *loop, mcp_curl *curl, mcp_http_config *cfg,
                            const mcp_http_proto *proto)
{
    mcp_http *h = calloc(1, proto->size < sizeof *h ? sizeof *h : proto->size);
    if (h == NULL) {
        mcp_http_config_free(cfg);
        return NULL;
    }
    h->base.vt = &http_vt;
    h->proto = proto;
    h->base.refs = 1;
    h->base.loop = loop;
    mcp_loop_ref(loop);
    h->curl = curl;
    mcp_curl_ref(curl);
    h->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    if (h->cfg.max_message == 0)
        h->cfg.max_message = (size_t)64 * 1024 * 1024;
    if (h->cfg.max_reconnects <= 0)
        h->cfg.max_reconnects = MCP_HTTP_DEFAULT_MAX_RECONNECTS;
    if (h->cfg.max_connections <= 0)
        h->cfg.max_connections = MCP_HTTP_DEFAULT_MAX_CONNECTIONS;
    if (h->cfg.max_reply_connections <= 0)
        h->cfg.max_reply_connections = MCP_HTTP_DEFAULT_MAX_REPLY_CONNECTIONS;
    if (h->cfg.max_queued_replies <= 0)
        h->cfg.max_queued_replies = MCP_HTTP_DEFAULT_MAX_QUEUED_REPLIES;
    mcp_timer_init(&h->delete_timer, on_delete_timer, h);
    proto->init(h);
    return &h->base;
}

void mcp_http_on_event(mcp_transport *t, mcp_http_event_cb cb, void *ctx)
{
    mcp_http *h = (mcp_http *)t;
    h->ev_cb = cb;
    h->ev_ctx = ctx;
}

void mcp_http_set_protocol_version(mcp_transport *t, const char *version)
{
    mcp_http *h = (mcp_http *)t;
    mcp_http_set_str(&h->protocol_version, version, version ? strlen(version) : 0);
    mcp_http_headers_changed(h);
}

const char *mcp_http_session_id(mcp_transport *t) { return ((mcp_http *)t)->session_id; }

int mcp_http_max_reconnects(mcp_transport *t) { return ((mcp_http *)t)->cfg.max_reconnects; }

int mcp_http_busy(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    return h->reqs != NULL || h->delete_pending;
}

int mcp_http_sending(mcp_transport *t)
{
    const mcp_http *h = (const mcp_http *)t;
    const mcp_hreq *r;
    if (h->qhead != NULL)
        return 1;
    for (r = h->reqs; r != NULL; r = r->next)
        if (r->method == MCP_HREQ_POST && r->request_id == 0)
            return 1;
    return 0;
}

void mcp_http_start_own(mcp_transport *t, int own) { ((mcp_http *)t)->start_own = own != 0; }

void mcp_http_set_request_hooks(mcp_transport *t, const mcp_http_request_hooks *hooks, void *ctx)
{
    mcp_http *h = (mcp_http *)t;
    h->hooks = hooks;
    h->hooks_ctx = hooks != NULL ? ctx : NULL;
}

int mcp_http_ready(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    return h->proto->ready(h);
}
