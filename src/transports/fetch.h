/* One plain HTTP exchange on the core's loop (the OAuth discovery, registration and token
 * requests): any method, request headers and body, and the final response's status, headers and
 * body, bounded. Redirects are never followed: a 3xx is an answer like any other, its Location a
 * header, so the caller decides (and re-validates) each hop. */
#ifndef MCP_FETCH_H
#define MCP_FETCH_H

#include "buf.h"
#include "curl_loop.h"

typedef struct mcp_fetch mcp_fetch;

/* The exchange finished (rc CURLE_OK or the failure), detached from libcurl; the callback owns
 * f from then on and frees it with mcp_fetch_free (it may do so inside the callback). */
typedef void (*mcp_fetch_cb)(mcp_fetch *f, CURLcode rc, void *ctx);

struct mcp_fetch {
    mcp_xfer x;
    struct curl_slist *req_headers;
    struct curl_slist *resolve; /* CURLOPT_RESOLVE entries, or NULL */
    char *req_body;
    long status;
    int truncated; /* the body went beyond body_max and was cut there */
    size_t body_max;
    mcp_buf body;
    mcp_buf headers; /* the final response's "name\0value\0" pairs, names lower-cased */
    mcp_fetch_cb cb;
    void *ctx;
};

typedef struct mcp_fetch_opts {
    const char *method; /* "GET", "POST", ... */
    const char *url;
    const char *body; /* may be NULL */
    size_t body_len;
    struct curl_slist *headers; /* taken over (also on failure) */
    long timeout_ms;            /* the whole exchange; 0: none */
    long connect_timeout_ms;    /* 0: libcurl's default */
    size_t body_max;            /* 0: 1 MiB */
    /* The SSRF guard: addresses the connection must not go to, whatever the name resolves to
     * (a fresh connection then, so no cached one bypasses the check). */
    mcp_addr_guard guard;
    struct curl_slist *resolve; /* "host:port:address" pins (CURLOPT_RESOLVE); taken over */
    /* NULL: libcurl's default (http_proxy, https_proxy, ... from the environment), except for a
     * guarded exchange, which then goes direct; "": none; else the proxy to use (a guarded
     * exchange through it is not checked at connect time: the proxy resolves the target). */
    const char *proxy;
} mcp_fetch_opts;

/* Create and start an exchange. NULL (with a message in err) when it cannot start. */
mcp_fetch *mcp_fetch_start(mcp_curl *c, const mcp_fetch_opts *o, mcp_fetch_cb cb, void *ctx,
                           char *err, size_t errlen);
/* Abort (no callback) if still running, and free. */
void mcp_fetch_free(mcp_fetch *f);
/* curl's text for a failed exchange (the guard's, when it refused every address). */
const char *mcp_fetch_error(mcp_fetch *f, CURLcode rc);

#endif
