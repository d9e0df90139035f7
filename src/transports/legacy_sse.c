/* The legacy HTTP+SSE transport (MCP 2024-11-05): a GET event stream whose first "endpoint"
 * event names the URL messages are POSTed to (same origin as the stream). */
#include "http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The legacy SSE transport: the shared object, then what only this protocol has. */
typedef struct legacy_sse {
    mcp_http h;
    char *endpoint;               /* where messages are POSTed (the endpoint event's) */
    mcp_sse_endpoint_state ready; /* whether that event came */
} legacy_sse;

#define L(h) ((legacy_sse *)(h))
#define CL(h) ((const legacy_sse *)(h))

/* Open the event stream; messages can be sent once its endpoint event arrives. */
static int sse_start(mcp_http *h, char *err, size_t errlen)
{
    mcp_http_start_get(h, 0, NULL, 0);
    if (h->inbound == NULL) {
        snprintf(err, errlen, "MCP SSE Transport Error: cannot open the event stream");
        return -1;
    }
    h->inbound->start_waits = 1; /* (a refusal of it is the start's, not the background's) */
    if (h->start_own)
        h->inbound->background = MCP_SEND_OWN; /* (the client's own start: it never logs in) */
    return 0;
}

/* A 401 or 403 on the stream's GET (the request hooks did not settle it): "endpoint_auth" with
 * "<status>\n<response header lines>", for the error start() returns (status_code,
 * WWW-Authenticate). */
static void emit_auth_failure(mcp_http *h, mcp_hreq *r)
{
    size_t n = r->resp_headers.len, k;
    char *v = malloc(n + 24);
    if (v == NULL)
        return;
    k = (size_t)snprintf(v, 24, "%ld\n", r->status);
    if (n > 0)
        memcpy(v + k, mcp_buf_head(&r->resp_headers), n);
    v[k + n] = '\0';
    mcp_http_emit(h, "endpoint_auth", v);
    free(v);
}

/* The legacy event stream ended: before the endpoint event it failed the connection, after it
 * the connection is closed. */
static void sse_stream_done(mcp_http *h, mcp_hreq *r, CURLcode rc, const char *what)
{
    long status = r->status;
    char msg[1400];
    if (L(h)->ready != MCP_SSE_ENDPOINT_READY) {
        L(h)->ready = MCP_SSE_ENDPOINT_FAILED;
        if (status == 401 || status == 403)
            emit_auth_failure(h, r);
        snprintf(
            msg, sizeof msg, "MCP SSE Transport Error: %s%s",
            rc == CURLE_OK && r->mode == MCP_HREQ_STREAM ? "Connection closed unexpectedly" : what,
            status == 405
                ? ". This server does not support SSE transport. Try using `http` transport instead"
                : "");
        mcp_http_emit(h, "endpoint_failed", msg);
        mcp_http_report(h, msg);
    } else if (h->base.sink != NULL) {
        h->base.sink->on_closed(h->base.sink_ctx, "the SSE stream closed");
    }
}

/* Legacy SSE: the first "endpoint" event names the POST URL; it must keep the stream's origin. */
static void sse_on_event(mcp_hreq *r, const char *type, size_t tlen, const char *data, size_t dlen)
{
    mcp_http *h = r->owner;
    CURLU *base, *ep;
    char *rel, *url = NULL, *s1 = NULL, *h1 = NULL, *p1 = NULL, *s2 = NULL, *h2 = NULL, *p2 = NULL;
    char msg[1200];
    if (tlen != 8 || memcmp(type, "endpoint", 8) != 0 || L(h)->ready == MCP_SSE_ENDPOINT_READY)
        return;
    rel = malloc(dlen + 1);
    base = curl_url();
    ep = curl_url();
    if (rel == NULL || base == NULL || ep == NULL)
        goto out;
    memcpy(rel, data, dlen);
    rel[dlen] = '\0';
    if (curl_url_set(base, CURLUPART_URL, h->cfg.url, 0) != CURLUE_OK ||
        curl_url_set(ep, CURLUPART_URL, h->cfg.url, 0) != CURLUE_OK ||
        curl_url_set(ep, CURLUPART_URL, rel, 0) != CURLUE_OK ||
        curl_url_get(ep, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        snprintf(msg, sizeof msg, "MCP SSE Transport Error: invalid endpoint URL: %.200s", rel);
        goto fail;
    }
    curl_url_get(base, CURLUPART_SCHEME, &s1, 0);
    curl_url_get(base, CURLUPART_HOST, &h1, 0);
    curl_url_get(base, CURLUPART_PORT, &p1, CURLU_DEFAULT_PORT);
    curl_url_get(ep, CURLUPART_SCHEME, &s2, 0);
    curl_url_get(ep, CURLUPART_HOST, &h2, 0);
    curl_url_get(ep, CURLUPART_PORT, &p2, CURLU_DEFAULT_PORT);
    if (!s1 || !s2 || !h1 || !h2 || !p1 || !p2 || strcasecmp(s1, s2) != 0 ||
        strcasecmp(h1, h2) != 0 || strcmp(p1, p2) != 0) {
        snprintf(
            msg, sizeof msg,
            "MCP SSE Transport Error: Endpoint origin does not match connection origin: %.300s",
            url);
        goto fail;
    }
    mcp_http_set_str(&L(h)->endpoint, url, strlen(url));
    L(h)->ready = MCP_SSE_ENDPOINT_READY;
    mcp_http_emit(h, "endpoint", L(h)->endpoint);
    goto out;
fail:
    L(h)->ready = MCP_SSE_ENDPOINT_FAILED;
    mcp_http_emit(h, "endpoint_failed", msg);
    mcp_http_report(h, msg);
    if (h->inbound != NULL)
        mcp_http_drop_req(h, h->inbound); /* deferred if we are inside its callback */
out:
    curl_free(url);
    curl_free(s1);
    curl_free(h1);
    curl_free(p1);
    curl_free(s2);
    curl_free(h2);
    curl_free(p2);
    curl_url_cleanup(base);
    curl_url_cleanup(ep);
    free(rel);
}

/* ---- the protocol over the shared layer ----------------------------------------------------- */

static void sse_init(mcp_http *h) { (void)h; }

static const char *sse_post_url(const mcp_http *h) { return CL(h)->endpoint; }

static int sse_no_session(const mcp_http *h)
{
    (void)h;
    return 0; /* 2024-11-05 has no Mcp-Session-Id: the endpoint URL names the session */
}

static int sse_ready(const mcp_http *h) { return CL(h)->ready; }

static int sse_close(mcp_http *h)
{
    (void)h;
    return 0; /* no session to end */
}

static void sse_terminate(mcp_http *h) { (void)h; }

static int sse_retry_delete(mcp_http *h, mcp_hreq *refused, int memo)
{
    (void)h;
    (void)refused;
    (void)memo;
    return -1; /* (never: it sends no DELETE) */
}

static void sse_destroy(mcp_http *h)
{
    free(L(h)->endpoint);
    L(h)->endpoint = NULL;
}

const mcp_http_proto mcp_legacy_sse = {
    "SSE",
    "application/json",
    0,
    "",
    sse_init,
    sse_start,
    sse_post_url,
    sse_no_session,
    sse_ready,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    sse_stream_done,
    sse_on_event,
    NULL,
    sse_close,
    sse_terminate,
    sse_retry_delete,
    sse_destroy,
    sizeof(legacy_sse),
};
