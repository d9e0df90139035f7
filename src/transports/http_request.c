#include "http_request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fdlimit.h"

static void put_u32(mcp_buf *b, size_t n)
{
    unsigned char v[4];
    v[0] = (unsigned char)(n >> 24);
    v[1] = (unsigned char)(n >> 16);
    v[2] = (unsigned char)(n >> 8);
    v[3] = (unsigned char)n;
    mcp_buf_append(b, v, 4);
}

static size_t get_u32(const char *p)
{
    const unsigned char *v = (const unsigned char *)p;
    return ((size_t)v[0] << 24) | ((size_t)v[1] << 16) | ((size_t)v[2] << 8) | v[3];
}

/* What the inbox of delivered events keeps after a larger one. */
#define INBOX_KEEP (64 * 1024)

static void on_sse_event(void *ctx, const mcp_sse_event *ev)
{
    mcp_hreq *r = ctx;
    r->events_seen++;
    if (ev->data_len > 0)
        r->messages_seen++;
    if (mcp_buf_reserve(&r->inbox, 8 + ev->type_len + ev->data_len) != 0)
        return;
    put_u32(&r->inbox, ev->type_len);
    mcp_buf_append(&r->inbox, ev->type, ev->type_len);
    put_u32(&r->inbox, ev->data_len);
    mcp_buf_append(&r->inbox, ev->data, ev->data_len);
    mcp_xfer_mark_dirty(&r->x);
}

static void on_sse_retry(void *ctx, unsigned long ms)
{
    mcp_hreq *r = ctx;
    r->retry_ms = ms;
}

static int is_2xx(long status) { return status >= 200 && status < 300; }

/* Decide, at the first body byte, whether this is an event stream. */
static void decide_mode(mcp_hreq *r)
{
    char *ct = NULL;
    curl_easy_getinfo(r->x.easy, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(r->x.easy, CURLINFO_CONTENT_TYPE, &ct);
    if (is_2xx(r->status) && ct != NULL && strncasecmp(ct, "text/event-stream", 17) == 0) {
        r->mode = MCP_HREQ_STREAM;
        if (!r->sse_ready) {
            mcp_sse_init(&r->sse, on_sse_event, on_sse_retry, r, r->body_max);
            r->sse_ready = 1;
        }
    } else {
        curl_off_t len = -1;
        r->mode = MCP_HREQ_BODY;
        /* A body of known size gets its buffer at once, not by doubling from 256 bytes. */
        if (curl_easy_getinfo(r->x.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) == CURLE_OK &&
            len > 0 && (size_t)len <= r->body_max)
            mcp_buf_reserve(&r->body, (size_t)len);
    }
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp_hreq *r = userp;
    size_t n = size * nmemb;
    if (r->mode == MCP_HREQ_UNDECIDED)
        decide_mode(r);
    if (r->mode == MCP_HREQ_STREAM) {
        if (mcp_sse_feed(&r->sse, data, n) != 0)
            r->sse_overflow = 1;
        return n;
    }
    /* A body beyond its limit fails the transfer rather than growing without bound. */
    if (r->body.len + n > r->body_max) {
        if (is_2xx(r->status))
            return 0;
        n = r->body_max > r->body.len ? r->body_max - r->body.len : 0;
        mcp_buf_append(&r->body, data, n);
        return size * nmemb;
    }
    if (mcp_buf_append(&r->body, data, n) != 0)
        return 0;
    return n;
}

int mcp_session_id_valid(const char *id, size_t len)
{
    size_t i;
    if (len == 0)
        return 0;
    for (i = 0; i < len; i++)
        if ((unsigned char)id[i] < 0x21 || (unsigned char)id[i] > 0x7e)
            return 0;
    return 1;
}

#define RESP_HEADERS_MAX (16 * 1024)

/* Response headers: a new status line starts a new response (redirects, 100 Continue). The
 * lines of a response that is not 2xx are kept for the error (WWW-Authenticate, Retry-After). */
static size_t header_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp_hreq *r = userp;
    size_t n = size * nmemb, nlen = 14;
    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        const char *sp = memchr(data, ' ', n);
        free(r->session_id);
        r->session_id = NULL;
        r->bad_session_id = 0;
        r->header_status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
        mcp_buf_reset(&r->resp_headers);
        return n;
    }
    if (!is_2xx(r->header_status) && n > 2 && r->resp_headers.len + n <= RESP_HEADERS_MAX)
        mcp_buf_append(&r->resp_headers, data, n);
    if (n > nlen + 1 && strncasecmp(data, "mcp-session-id", nlen) == 0 && data[nlen] == ':') {
        const char *v = data + nlen + 1, *end = data + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && isspace((unsigned char)end[-1]))
            end--;
        free(r->session_id);
        r->session_id = NULL;
        r->bad_session_id = !mcp_session_id_valid(v, (size_t)(end - v));
        if (end > v && !r->bad_session_id) {
            r->session_id = malloc((size_t)(end - v) + 1);
            if (r->session_id != NULL) {
                memcpy(r->session_id, v, (size_t)(end - v));
                r->session_id[end - v] = '\0';
            }
        }
    }
    return n;
}

static mcp_loop *hreq_loop(mcp_hreq *r) { return mcp_curl_loop(r->x.curl); }

/* What one exchange holds besides the transfer and the payload (freed, not reset). */
static void free_exchange(mcp_hreq *r)
{
    curl_slist_free_all(r->headers);
    mcp_hdrs_unref(r->shared_headers);
    curl_slist_free_all(r->extra_headers);
    if (r->sse_ready)
        mcp_sse_free(&r->sse);
    mcp_buf_free(&r->body);
    mcp_buf_free(&r->resp_headers);
    mcp_buf_free(&r->inbox);
    free(r->session_id);
    free(r->last_event_id);
    free(r->hook_url);
}

static void really_free(mcp_hreq *r)
{
    if (r->idle_ms && r->x.curl != NULL)
        mcp_timer_stop(hreq_loop(r), &r->idle);
    mcp_xfer_cleanup(&r->x);
    free_exchange(r);
    free(r->payload);
    free(r);
}

/* Deliver the buffered events. A callback may free r (the transport closing): r is then only
 * marked doomed and freed by whoever holds it busy, once the callback returned. The inbox cannot
 * grow meanwhile: libcurl is not re-entered while the loop dispatches. */
static void deliver(mcp_hreq *r)
{
    while (!r->doomed && r->inbox.len >= 8) {
        const char *p = mcp_buf_head(&r->inbox);
        size_t tlen = get_u32(p), dlen = get_u32(p + 4 + tlen);
        const char *type = p + 4, *dat = p + 8 + tlen;
        if (tlen == 7 && memcmp(type, "message", 7) == 0) {
            if (dlen > 0)
                r->ops->on_message(r, dat, dlen);
        } else if (r->ops->on_event != NULL) {
            r->ops->on_event(r, type, tlen, dat, dlen);
        }
        if (!r->doomed)
            mcp_buf_consume(&r->inbox, 8 + tlen + dlen);
    }
    /* A long-lived stream (legacy SSE carries every response on it, the standalone GET) gives
     * back the memory of a large event once it is delivered, not when the stream ends. */
    if (!r->doomed)
        mcp_buf_shrink(&r->inbox, INBOX_KEEP);
}

static void flush(mcp_xfer *x)
{
    mcp_hreq *r = (mcp_hreq *)x;
    r->busy++;
    deliver(r);
    if (--r->busy == 0 && r->doomed)
        really_free(r);
}

static void done(mcp_xfer *x, CURLcode rc)
{
    mcp_hreq *r = (mcp_hreq *)x;
    if (r->idle_ms)
        mcp_timer_stop(hreq_loop(r), &r->idle);
    if (r->mode == MCP_HREQ_UNDECIDED)
        curl_easy_getinfo(r->x.easy, CURLINFO_RESPONSE_CODE, &r->status);
    r->finished_ok = rc == CURLE_OK;
    r->busy++;
    deliver(r);
    if (!r->doomed)
        r->ops->on_done(r, rc);
    if (--r->busy == 0 && r->doomed)
        really_free(r);
}

static const mcp_xfer_ops hreq_xfer_ops = {flush, done};

/* The POST's body, copied into the request's buffer (kept by a recycled request when it fits). */
static int set_payload(mcp_hreq *r, const char *payload, size_t len)
{
    if (r->payload == NULL || len > r->payload_cap) {
        char *p = malloc(len ? len : 1);
        if (p == NULL)
            return -1;
        free(r->payload);
        r->payload = p;
        r->payload_cap = len ? len : 1;
    }
    memcpy(r->payload, payload, len);
    r->payload_len = len;
    curl_easy_setopt(r->x.easy, CURLOPT_POSTFIELDS, r->payload);
    curl_easy_setopt(r->x.easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    return 0;
}

mcp_hreq *mcp_hreq_new(mcp_curl *c, int method, const char *url, const char *payload,
                       size_t payload_len, size_t body_max, const mcp_hreq_ops *ops, void *owner)
{
    mcp_hreq *r = calloc(1, sizeof *r);
    CURL *e;
    if (r == NULL)
        return NULL;
    if (mcp_xfer_init(&r->x, c, &hreq_xfer_ops, r) != 0) {
        free(r);
        return NULL;
    }
    e = r->x.easy;
    r->ops = ops;
    r->owner = owner;
    r->method = method;
    r->body_max = body_max;
    mcp_buf_init(&r->body);
    mcp_buf_init(&r->inbox);
    mcp_buf_init(&r->resp_headers);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    if (method == MCP_HREQ_POST) {
        if (set_payload(r, payload, payload_len) != 0) {
            mcp_hreq_free(r);
            return NULL;
        }
        curl_easy_setopt(e, CURLOPT_POST, 1L);
    } else if (method == MCP_HREQ_DELETE) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
    return r;
}

/* A payload buffer at most this large stays with a recycled request for the next one. */
#define PAYLOAD_KEEP_MAX 4096

int mcp_hreq_recycle(mcp_hreq *r)
{
    char *payload = r->payload;
    size_t cap = r->payload_cap;
    int busy = r->busy;
    /* From its own done callback too: libcurl has let go of the handle by then. */
    if (r->doomed || !r->finished_ok || r->x.curl == NULL || r->x.attached ||
        r->method != MCP_HREQ_POST)
        return -1;
    if (r->idle_ms)
        mcp_timer_stop(hreq_loop(r), &r->idle);
    free_exchange(r);
    if (cap > PAYLOAD_KEEP_MAX) {
        free(payload);
        payload = NULL;
        cap = 0;
    }
    /* Everything after the transfer as calloc left it (r->x comes first: flush and done cast
     * it to r). The handle keeps pointing at r (PRIVATE, ERRORBUFFER, WRITEDATA, HEADERDATA), so
     * none of that is set again. busy stays: this may run inside r's done callback, which still
     * holds it. */
    memset((char *)r + sizeof r->x, 0, sizeof *r - sizeof r->x);
    r->x.errbuf[0] = '\0';
    r->payload = payload;
    r->payload_cap = cap;
    r->busy = busy;
    r->method = MCP_HREQ_POST;
    r->reused = 1;
    return 0;
}

mcp_hreq *mcp_hreq_renew(mcp_hreq *r, const char *payload, size_t payload_len, size_t body_max,
                         const mcp_hreq_ops *ops, void *owner)
{
    r->ops = ops;
    r->owner = owner;
    r->body_max = body_max;
    if (set_payload(r, payload, payload_len) != 0) {
        mcp_hreq_free(r);
        return NULL;
    }
    return r;
}

void mcp_hreq_set_headers(mcp_hreq *r, struct curl_slist *headers)
{
    curl_slist_free_all(r->headers);
    mcp_hdrs_unref(r->shared_headers);
    r->shared_headers = NULL;
    r->headers = headers;
    curl_easy_setopt(r->x.easy, CURLOPT_HTTPHEADER, headers);
}

void mcp_hreq_share_headers(mcp_hreq *r, mcp_hdrs *headers)
{
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    headers->refs++;
    mcp_hdrs_unref(r->shared_headers);
    r->shared_headers = headers;
    curl_easy_setopt(r->x.easy, CURLOPT_HTTPHEADER, headers->list);
}

mcp_hdrs *mcp_hdrs_new(struct curl_slist *list)
{
    mcp_hdrs *h = malloc(sizeof *h);
    if (h == NULL)
        return NULL;
    h->refs = 1;
    h->list = list;
    return h;
}

void mcp_hdrs_unref(mcp_hdrs *h)
{
    if (h == NULL || --h->refs > 0)
        return;
    curl_slist_free_all(h->list);
    free(h);
}

/* CURLOPT_XFERINFOFUNCTION (inside libcurl): note when bytes last moved; the timer reads it. */
static int xferinfo_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    mcp_hreq *r = userp;
    (void)dltotal;
    (void)ultotal;
    if (dlnow + ulnow != r->progress) {
        r->progress = dlnow + ulnow;
        r->last_progress_ms = mcp_now_ms();
    }
    return 0;
}

static void on_idle(mcp_loop *loop, mcp_timer *t)
{
    mcp_hreq *r = t->data;
    uint64_t now = mcp_now_ms(), quiet = now - r->last_progress_ms;
    if (quiet < r->idle_ms) {
        mcp_timer_start(loop, &r->idle, r->idle_ms - quiet);
        return;
    }
    snprintf(r->x.errbuf, sizeof r->x.errbuf, "no data for %llu ms (the idle timeout)",
             (unsigned long long)quiet);
    mcp_xfer_abort(&r->x, CURLE_OPERATION_TIMEDOUT); /* may free r */
}

void mcp_hreq_set_idle_timeout(mcp_hreq *r, uint64_t ms)
{
    r->idle_ms = ms;
    if (ms == 0)
        return;
    mcp_timer_init(&r->idle, on_idle, r);
    curl_easy_setopt(r->x.easy, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
    curl_easy_setopt(r->x.easy, CURLOPT_XFERINFODATA, r);
    curl_easy_setopt(r->x.easy, CURLOPT_NOPROGRESS, 0L);
}

int mcp_hreq_start(mcp_hreq *r)
{
    if (mcp_xfer_start(&r->x) != 0)
        return -1;
    if (r->idle_ms) {
        r->last_progress_ms = mcp_now_ms();
        mcp_timer_start(hreq_loop(r), &r->idle, r->idle_ms);
    }
    return 0;
}

void mcp_hreq_free(mcp_hreq *r)
{
    if (r == NULL)
        return;
    if (r->busy) {
        /* In one of its own callbacks: stop the transfer now, free when the callback is over. */
        if (r->idle_ms && r->x.curl != NULL)
            mcp_timer_stop(hreq_loop(r), &r->idle);
        r->doomed = 1;
        mcp_xfer_cleanup(&r->x);
        return;
    }
    really_free(r);
}

const char *mcp_hreq_last_event_id(mcp_hreq *r, size_t *len)
{
    const char *id;
    if (!r->sse_ready)
        return NULL;
    id = mcp_sse_last_event_id(&r->sse, len);
    return id != NULL && *len > 0 ? id : NULL;
}

void mcp_hreq_describe(mcp_hreq *r, CURLcode rc, char *out, size_t outlen)
{
    const char *what = rc != CURLE_OK && r->x.errbuf[0] ? r->x.errbuf : curl_easy_strerror(rc);
    if (rc != CURLE_OK && r->x.socket_errno != 0) {
        char why[160]; /* out of descriptors: say so, and name the limits (fdlimit.h) */
        mcp_fdlimit_describe(r->x.socket_errno, why, sizeof why);
        snprintf(out, outlen, "%s (no socket: %s)", what, why);
    } else if (rc != CURLE_OK)
        snprintf(out, outlen, "%s", what);
    else
        snprintf(out, outlen, "HTTP %ld", r->status);
}

int mcp_headers_has(const struct curl_slist *list, const char *name)
{
    size_t n = strlen(name);
    for (; list != NULL; list = list->next)
        if (strncasecmp(list->data, name, n) == 0 && (list->data[n] == ':' || list->data[n] == ';'))
            return 1;
    return 0;
}

struct curl_slist *mcp_headers_add(struct curl_slist *list, const char *name, const char *value)
{
    /* Any length: a session id or a token is never cut (libcurl copies the line). */
    size_t nlen = strlen(name), vlen = strlen(value);
    char *line;
    struct curl_slist *n;
    if (mcp_headers_has(list, name))
        return list;
    line = malloc(nlen + vlen + 3);
    if (line == NULL)
        return list;
    memcpy(line, name, nlen);
    memcpy(line + nlen, ": ", 2);
    memcpy(line + nlen + 2, value, vlen + 1);
    n = curl_slist_append(list, line);
    free(line);
    return n != NULL ? n : list;
}
