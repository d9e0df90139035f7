/* Streamable HTTP (MCP 2025-03-26 .. 2025-11-25), what legacy SSE does not have: the session id
 * (adopted, expired, terminated with DELETE), the standalone inbound GET stream and its
 * reconnection, and the resumption of POST event streams with Last-Event-ID. */
#include "http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DELETE_TIMEOUT_MS 2000L

static void schedule_resume(mcp_http *h, int64_t request_id, const char *last_id,
                            unsigned long retry_ms, int attempts);
/* No reconnection or resumption comes sooner than this, whatever the server's retry field says. */
#define MIN_RECONNECT_MS 100ul

/* A POST event stream that ended before its response, waiting to be resumed. */
typedef struct resume {
    mcp_timer timer;
    struct mcp_http *h;
    int64_t request_id;
    char *last_id;
    unsigned long retry_ms;
    int attempts;
    struct resume *next;
} resume;

/* The streamable HTTP transport: the shared object, then what only this protocol has. */
typedef struct streamable {
    mcp_http h;
    int inbound_wanted;
    int reconnects;
    int empty_streams; /* inbound streams in a row that ended without a message */
    int worked_gen; /* the last session (session_gen) a request was answered on or a GET stream was live on */
    int get_live_gen; /* the last session a standalone GET stream was live on */
    unsigned long inbound_retry_ms;
    char *inbound_last_id;
    mcp_timer reconnect_timer;
    resume *resumes;
} streamable;

#define S(h) ((streamable *)(h))

/* The stateless 2026-07-28 protocol (or later) is in use: no session, no GET stream, no DELETE,
 * and closing a request's response stream is its cancellation. */
static int is_modern(const mcp_http *h)
{
    /* Versions are dates, so they compare as strings. */
    return h->protocol_version != NULL && strcmp(h->protocol_version, "2026-07-28") >= 0;
}

/* The session id r's response named, when it is another than the current one (a first one, or a
 * new one the server gave without refusing the old first: initialize again): a new session. */
static void adopt_session_id(mcp_http *h, mcp_hreq *r)
{
    if (r->session_id == NULL || is_modern(h))
        return;
    if (h->session_id != NULL && strcmp(h->session_id, r->session_id) == 0)
        return;
    mcp_http_set_str(&h->session_id, r->session_id, strlen(r->session_id));
    h->session_gen++;
    free(S(h)->inbound_last_id); /* an event id of one session means nothing to another */
    S(h)->inbound_last_id = NULL;
    mcp_http_headers_changed(h);
    mcp_http_emit(h, "session_id", h->session_id);
}

/* Whether the server refused r for its session: a 404 to a request that carried one, or a 400
 * whose body names the session (the TypeScript SDK's servers answer an unknown session with 400
 * "No valid session ID provided"). */
static int session_refused(mcp_hreq *r, long status)
{
    const char *b = r->body.len ? mcp_buf_head(&r->body) : NULL;
    size_t n = r->body.len > 4096 ? 4096 : r->body.len, i;
    if (!r->sent_session || (status != 404 && status != 400))
        return 0;
    if (status == 404)
        return 1;
    for (i = 0; b != NULL && i + 7 <= n; i++)
        if (strncasecmp(b + i, "session", 7) == 0)
            return 1;
    return 0;
}

/* The server refused r's session: forget it, unless r carried an older one (a new session was
 * made meanwhile, which stays). A session that had worked (a request answered, a live GET stream)
 * was lost by the server: "session_lost" says so, also when no call was there to see the refusal
 * (the GET stream's reconnection, a notification). One that never worked (only a notification
 * was sent on it) is not said to be lost, so that a new one is not made over and over. */
static void expire_session(mcp_http *h, mcp_hreq *r)
{
    char *old = h->session_id;
    int worked = r->sent_session == S(h)->worked_gen;
    if (old == NULL || r->sent_session != h->session_gen)
        return; /* another exchange already found it expired (and maybe made a new one) */
    h->session_id = NULL;
    h->session_gen++;
    free(S(h)->inbound_last_id); /* an event id of the old session means nothing to a new one */
    S(h)->inbound_last_id = NULL;
    mcp_http_headers_changed(h);
    mcp_http_emit(h, "session_expired", old);
    mcp_http_emit(h, "session_id", NULL);
    free(old);
    if (worked)
        mcp_http_emit(h, "session_lost", NULL);
}

static unsigned long backoff_ms(int attempt)
{
    double d = 1000.0;
    int i;
    for (i = 0; i < attempt && d < 30000.0; i++)
        d *= 1.5;
    return d > 30000.0 ? 30000ul : (unsigned long)d;
}

static void on_reconnect_timer(mcp_loop *loop, mcp_timer *t)
{
    mcp_http *h = t->data;
    (void)loop;
    mcp_transport_ref(&h->base); /* the request hooks (Lua) may drop the last other one */
    if (!h->closing && h->inbound == NULL)
        mcp_http_start_get(h, 0, S(h)->inbound_last_id, S(h)->reconnects);
    mcp_transport_unref(&h->base);
}

/* The server offers no standalone GET stream: a 405, or a 404 to the first GET of a session (no
 * GET stream was ever live on it). Servers without a GET route often answer 404, the status that
 * also means "unknown session"; taking that first 404 as a lost session would drop a session the
 * server had just accepted (notifications/initialized, 202) and race the calls sent meanwhile. A
 * session that is really gone is found by the next POST. */
static int no_get_route(mcp_http *h, mcp_hreq *r, long status)
{
    return status == 405 ||
           (status == 404 && r->sent_session && r->sent_session != S(h)->get_live_gen);
}

/* A GET was refused for its session: a resumed POST stream fails its request, the standalone
 * stream reports it. */
static void get_refused(mcp_http *h, mcp_hreq *r, int status, const char *what)
{
    char msg[1400];
    expire_session(h, r);
    snprintf(msg, sizeof msg,
             "MCP HTTP Transport Error: GET SSE failed (%s). The MCP session expired", what);
    if (r->for_request)
        mcp_http_post_failed(h, r, status, msg);
    else
        mcp_http_report(h, msg);
}

/* A GET of streamable HTTP finished: the standalone inbound stream (reconnect) or a resumed
 * POST stream (resume again while its request waits). */
static void stream_done(mcp_http *h, mcp_hreq *r, CURLcode rc, const char *what)
{
    long status = r->status;
    size_t idlen;
    const char *last_id = mcp_hreq_last_event_id(r, &idlen);
    char msg[1400], id[512];
    int64_t req = r->for_request ? r->request_id : 0;
    int ok =
        rc == CURLE_OK || r->mode == MCP_HREQ_STREAM; /* a stream that broke after it started */
    id[0] = '\0';
    if (last_id != NULL)
        snprintf(id, sizeof id, "%.*s", (int)idlen, last_id);
    if (!r->for_request && status >= 200 && status < 300)
        S(h)->worked_gen = S(h)->get_live_gen = r->sent_session; /* live on this session */
    if (!r->for_request && no_get_route(h, r, status)) {
        S(h)->inbound_wanted = 0; /* the server offers no standalone stream: fine */
    } else if (session_refused(r, status)) {
        get_refused(h, r, (int)status, what);
    } else if (req != 0) {
        /* A resumed POST stream: resume again while the request waits, a bounded number of
         * times without progress. */
        if (mcp_http_request_pending(h, req)) {
            if (ok && (r->mode == MCP_HREQ_STREAM || (status >= 200 && status < 300)))
                schedule_resume(h, req, id[0] ? id : NULL, r->retry_ms,
                                r->messages_seen > 0 ? 0 : r->attempt);
            else {
                snprintf(msg, sizeof msg,
                         "MCP HTTP Transport Error: resuming the event stream failed: %s", what);
                mcp_http_post_failed(h, r, (int)status, msg);
            }
        }
    } else if (ok || rc != CURLE_OK) {
        /* The inbound stream ended, broke, or could not connect: reconnect from the last event
         * id after the server's retry delay, else 1 s x 1.5 up to 30 s; a server that answered
         * resets the count, so only consecutive failures run out. */
        if (id[0] && r->sent_session == h->session_gen) /* (not an id of a session gone since) */
            mcp_http_set_str(&S(h)->inbound_last_id, id, strlen(id));
        if (r->retry_ms)
            S(h)->inbound_retry_ms = r->retry_ms;
        if (r->mode == MCP_HREQ_STREAM || (rc == CURLE_OK && status >= 200 && status < 300)) {
            S(h)->reconnects = 0;
            /* A stream that ends without a single message is no progress: past max_reconnects
             * of them in a row the delay grows (1 s x 1.5 up to 30 s), so a server answering
             * every GET with "retry: 1" and an empty stream gets a few reconnects a minute,
             * not hundreds a second. A message resets it. */
            if (r->messages_seen > 0)
                S(h)->empty_streams = 0;
            else if (++S(h)->empty_streams == h->cfg.max_reconnects + 1)
                mcp_http_report(h, "MCP HTTP Transport Error: the GET stream keeps ending "
                                   "without a message; reconnecting less often");
        } else {
            snprintf(msg, sizeof msg, "MCP HTTP Transport Error: GET SSE failed: %s", what);
            mcp_http_report(h, msg);
        }
        if (S(h)->reconnects >= h->cfg.max_reconnects) {
            snprintf(msg, sizeof msg,
                     "MCP HTTP Transport Error: Maximum reconnection attempts (%d) exceeded.",
                     h->cfg.max_reconnects);
            mcp_http_report(h, msg);
        } else {
            unsigned long delay =
                S(h)->inbound_retry_ms ? S(h)->inbound_retry_ms : backoff_ms(S(h)->reconnects);
            if (S(h)->empty_streams > h->cfg.max_reconnects) {
                unsigned long slow = backoff_ms(S(h)->empty_streams - h->cfg.max_reconnects - 1);
                if (delay < slow)
                    delay = slow;
            }
            if (delay < MIN_RECONNECT_MS)
                delay = MIN_RECONNECT_MS;
            S(h)->reconnects++;
            mcp_timer_start(h->base.loop, &S(h)->reconnect_timer, delay);
        }
    } else {
        snprintf(msg, sizeof msg, "MCP HTTP Transport Error: GET SSE failed: %s", what);
        mcp_http_report(h, msg);
    }
}

/* ---- resuming POST streams ------------------------------------------------------------------ */

static void free_resume(mcp_http *h, resume *z)
{
    resume **pp;
    for (pp = &S(h)->resumes; *pp != NULL; pp = &(*pp)->next)
        if (*pp == z) {
            *pp = z->next;
            break;
        }
    mcp_timer_stop(h->base.loop, &z->timer);
    free(z->last_id);
    free(z);
}

static void on_resume_timer(mcp_loop *loop, mcp_timer *t)
{
    resume *z = t->data;
    mcp_http *h = z->h;
    int64_t id = z->request_id;
    int attempts = z->attempts;
    char *last_id = z->last_id;
    (void)loop;
    /* Done with z first: the request hooks (Lua) may close the transport, which frees resumes. */
    z->last_id = NULL;
    free_resume(h, z);
    mcp_transport_ref(&h->base);
    if (!h->closing && mcp_http_request_pending(h, id))
        mcp_http_start_get(h, id, last_id, attempts);
    free(last_id);
    mcp_transport_unref(&h->base);
}

static void schedule_resume(mcp_http *h, int64_t request_id, const char *last_id,
                            unsigned long retry_ms, int attempts)
{
    resume *z;
    char msg[200];
    if (attempts >= h->cfg.max_reconnects) {
        mcp_transport_failure f;
        snprintf(msg, sizeof msg,
                 "MCP HTTP Transport Error: the event stream was lost and could not be resumed "
                 "after %d attempts",
                 attempts);
        memset(&f, 0, sizeof f);
        f.message = msg;
        if (h->base.sink != NULL)
            h->base.sink->on_request_failed(h->base.sink_ctx, request_id, &f);
        return;
    }
    z = calloc(1, sizeof *z);
    if (z == NULL)
        return;
    z->h = h;
    z->request_id = request_id;
    z->attempts = attempts + 1;
    z->retry_ms = retry_ms;
    if (last_id != NULL)
        mcp_http_set_str(&z->last_id, last_id, strlen(last_id));
    mcp_timer_init(&z->timer, on_resume_timer, z);
    z->next = S(h)->resumes;
    S(h)->resumes = z;
    /* The server's retry field wins; else back off as for the inbound stream. */
    if (!retry_ms)
        retry_ms = backoff_ms(attempts);
    mcp_timer_start(h->base.loop, &z->timer,
                    retry_ms < MIN_RECONNECT_MS ? MIN_RECONNECT_MS : retry_ms);
}

/* A DELETE of the session to url, bounded, started and linked; NULL when it could not start. */
static mcp_hreq *start_delete(mcp_http *h, const char *url)
{
    mcp_hreq *d = mcp_http_new_request(h, MCP_HREQ_DELETE, url, NULL, 0, NULL, NULL);
    if (d == NULL)
        return NULL;
    curl_easy_setopt(d->x.easy, CURLOPT_TIMEOUT_MS, DELETE_TIMEOUT_MS);
    if (mcp_hreq_start(d) != 0) {
        mcp_hreq_free(d);
        return NULL;
    }
    mcp_http_link_req(h, d);
    return d;
}

/* Best effort: end the session on the server (DELETE); bounded, and holding the transport alive. */
static void terminate(mcp_http *h)
{
    if (start_delete(h, h->cfg.url) != NULL)
        mcp_transport_ref(&h->base);
}

static int retry_delete(mcp_http *h, mcp_hreq *refused, int memo)
{
    mcp_hreq *d = start_delete(h, refused->hook_url);
    if (d == NULL)
        return -1;
    d->auth_attempts = refused->auth_attempts + 1;
    d->auth_memo = memo;
    return 0;
}

int mcp_http_open_inbound(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    if (h->proto != &mcp_streamable_http || h->closing || !h->started || is_modern(h))
        return 0;
    S(h)->inbound_wanted = 1;
    if (h->inbound == NULL) {
        S(h)->reconnects = 0;
        mcp_http_start_get(h, 0, S(h)->inbound_last_id, 0);
    }
    return h->inbound != NULL;
}

const char *mcp_http_resumption_token(mcp_transport *t, size_t *len)
{
    mcp_http *h = (mcp_http *)t;
    const char *id = h->inbound != NULL ? mcp_hreq_last_event_id(h->inbound, len) : NULL;
    /* (legacy SSE keeps no id of a stream that ended: it resumes none) */
    if (id == NULL && h->proto == &mcp_streamable_http && S(h)->inbound_last_id != NULL) {
        id = S(h)->inbound_last_id;
        *len = strlen(id);
    }
    return id;
}

/* ---- the protocol over the shared layer ----------------------------------------------------- */

/* The reconnect timer is not weak (mcp_timer_weaken): the GET stream keeps the loop alive while
 * open (a task may wait for its notification), and so does the wait for its return. */
static void init(mcp_http *h) { mcp_timer_init(&S(h)->reconnect_timer, on_reconnect_timer, h); }

static int start(mcp_http *h, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    if (h->cfg.initial_session_id != NULL) {
        mcp_http_set_str(&h->session_id, h->cfg.initial_session_id,
                         strlen(h->cfg.initial_session_id));
        h->session_gen++;
        mcp_http_headers_changed(h);
    }
    return 0;
}

static const char *post_url(const mcp_http *h) { return h->cfg.url; }

static int sends_session(const mcp_http *h) { return h->session_id != NULL && !is_modern(h); }

static int ready(const mcp_http *h)
{
    (void)h;
    return MCP_SSE_ENDPOINT_READY; /* no endpoint to wait for */
}

/* After a 202 (initialized): the standalone GET stream, when it is wanted and not open. */
static void post_finished(mcp_http *h, mcp_hreq *r)
{
    if (r->sent_session && r->request_id != 0 && r->status >= 200 && r->status < 300)
        S(h)->worked_gen = r->sent_session; /* a request answered on this session */
    if (h->protocol_version != NULL && S(h)->inbound_wanted && h->inbound == NULL &&
        r->status == 202)
        mcp_http_open_inbound(&h->base);
}

static int session_lost(mcp_http *h, mcp_hreq *r, const char *what)
{
    char msg[1400];
    if (!session_refused(r, r->status))
        return 0; /* a 400 about something else */
    expire_session(h, r);
    snprintf(msg, sizeof msg,
             "MCP HTTP Transport Error: POSTing to endpoint (%s). The MCP session expired", what);
    r->keep_message = 1;
    mcp_http_post_failed(h, r, (int)r->status, msg);
    return 1;
}

static int resume_post(mcp_http *h, mcp_hreq *r, const char *last_id)
{
    schedule_resume(h, r->request_id, last_id, r->retry_ms, 0);
    return 1;
}

static void abandon(mcp_http *h, int64_t request_id)
{
    resume *z, *zn;
    for (z = S(h)->resumes; z != NULL; z = zn) {
        zn = z->next;
        if (z->request_id == request_id)
            free_resume(h, z);
    }
}

static void stop(mcp_http *h)
{
    mcp_timer_stop(h->base.loop, &S(h)->reconnect_timer);
    while (S(h)->resumes != NULL)
        free_resume(h, S(h)->resumes);
}

static void destroy(mcp_http *h)
{
    stop(h);
    free(S(h)->inbound_last_id);
    S(h)->inbound_last_id = NULL;
}

/* 2026-07-28: the session's abandon() closes the request's stream, which is the cancellation;
 * there is no notifications/cancelled over HTTP. */
static int skips(const mcp_http *h, const mcp_send_info *info)
{
    return is_modern(h) && info->request_id == 0 && info->method != NULL &&
           strcmp(info->method, "notifications/cancelled") == 0;
}

/* close(): the session ends with a DELETE, unless asked not to (or stateless 2026-07-28). */
static int closing(mcp_http *h)
{
    stop(h);
    return h->started && h->cfg.terminate_on_close && h->session_id != NULL && !is_modern(h);
}

const mcp_http_proto mcp_streamable_http = {
    "HTTP",
    "application/json, text/event-stream",
    1,
    ". This server does not support HTTP transport. Try using `sse` transport instead",
    init,
    start,
    post_url,
    sends_session,
    ready,
    skips,
    adopt_session_id,
    post_finished,
    session_lost,
    resume_post,
    stream_done,
    NULL,
    abandon,
    closing,
    terminate,
    retry_delete,
    destroy,
    sizeof(streamable),
};
