#include "fetch.h"

#include "fdlimit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BODY_MAX ((size_t)1024 * 1024)
#define HEADERS_MAX ((size_t)256 * 1024)

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp_fetch *f = userp;
    size_t n = size * nmemb, room;
    if (f->truncated)
        return n;
    room = f->body_max > f->body.len ? f->body_max - f->body.len : 0;
    if (n > room) {
        f->truncated = 1;
        if (room > 0 && mcp_buf_append(&f->body, data, room) != 0)
            return 0;
        return n;
    }
    if (mcp_buf_append(&f->body, data, n) != 0)
        return 0;
    return n;
}

/* Keep the headers of the last response only (a 100 Continue starts over). */
static size_t header_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    mcp_fetch *f = userp;
    size_t n = size * nmemb, i, nlen;
    const char *colon, *v, *end = data + n;
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        mcp_buf_reset(&f->headers);
        return n;
    }
    colon = memchr(data, ':', n);
    if (colon == NULL || colon == data)
        return n; /* the blank line, or not a header */
    nlen = (size_t)(colon - data);
    v = colon + 1;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && isspace((unsigned char)end[-1]))
        end--;
    if (f->headers.len + nlen + (size_t)(end - v) + 2 > HEADERS_MAX)
        return n; /* beyond the bound: ignored rather than failing the exchange */
    if (mcp_buf_reserve(&f->headers, nlen + (size_t)(end - v) + 2) != 0)
        return 0;
    for (i = 0; i < nlen; i++)
        mcp_buf_put_unchecked(&f->headers, (char)tolower((unsigned char)data[i]));
    mcp_buf_put_unchecked(&f->headers, '\0');
    mcp_buf_append(&f->headers, v, (size_t)(end - v));
    mcp_buf_put_unchecked(&f->headers, '\0');
    return n;
}

static void flush(mcp_xfer *x) { (void)x; }

static void done(mcp_xfer *x, CURLcode rc)
{
    mcp_fetch *f = (mcp_fetch *)x;
    curl_easy_getinfo(f->x.easy, CURLINFO_RESPONSE_CODE, &f->status);
    f->cb(f, rc, f->ctx);
}

static const mcp_xfer_ops fetch_xfer_ops = {flush, done};

mcp_fetch *mcp_fetch_start(mcp_curl *c, const mcp_fetch_opts *o, mcp_fetch_cb cb, void *ctx,
                           char *err, size_t errlen)
{
    mcp_fetch *f = calloc(1, sizeof *f);
    CURL *e;
    if (f == NULL || mcp_xfer_init(&f->x, c, &fetch_xfer_ops, f) != 0) {
        free(f);
        curl_slist_free_all(o->headers);
        curl_slist_free_all(o->resolve);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e = f->x.easy;
    f->req_headers = o->headers;
    f->resolve = o->resolve;
    if (f->resolve != NULL)
        curl_easy_setopt(e, CURLOPT_RESOLVE, f->resolve);
    if (o->proxy != NULL)
        curl_easy_setopt(e, CURLOPT_PROXY, o->proxy);
    /* The guard sees the address libcurl connects to, which is a proxy's when one is used: a
     * loopback proxy would make every guarded exchange fail, a remote one would let any target
     * through. So a guarded exchange goes direct ("" turns off the environment's proxies), unless
     * the caller named a proxy (then the proxy resolves the target: only the URL checks apply). */
    if (o->guard != MCP_GUARD_NONE && (o->proxy == NULL || o->proxy[0] == '\0')) {
        f->x.guard = o->guard;
        curl_easy_setopt(e, CURLOPT_PROXY, "");
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
    }
    f->cb = cb;
    f->ctx = ctx;
    f->body_max = o->body_max ? o->body_max : DEFAULT_BODY_MAX;
    mcp_buf_init(&f->body);
    mcp_buf_init(&f->headers);
    curl_easy_setopt(e, CURLOPT_URL, o->url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, f);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "lua-mcp/0.1.0");
    if (o->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    if (o->connect_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    if (o->body != NULL) {
        f->req_body = malloc(o->body_len ? o->body_len : 1);
        if (f->req_body == NULL) {
            mcp_fetch_free(f);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        memcpy(f->req_body, o->body, o->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, f->req_body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
        /* No 100-continue round trip. */
        {
            struct curl_slist *l = curl_slist_append(f->req_headers, "Expect:");
            if (l != NULL)
                f->req_headers = l;
        }
    }
    if (strcmp(o->method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else if (strcmp(o->method, "HEAD") == 0)
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    else if (!(strcmp(o->method, "POST") == 0 && o->body != NULL))
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, o->method);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->req_headers);
    if (mcp_xfer_start(&f->x) != 0) {
        mcp_fetch_free(f);
        snprintf(err, errlen, "cannot start the HTTP request");
        return NULL;
    }
    return f;
}

void mcp_fetch_free(mcp_fetch *f)
{
    if (f == NULL)
        return;
    mcp_xfer_cleanup(&f->x);
    curl_slist_free_all(f->req_headers);
    curl_slist_free_all(f->resolve);
    free(f->req_body);
    mcp_buf_free(&f->body);
    mcp_buf_free(&f->headers);
    free(f);
}

const char *mcp_fetch_error(mcp_fetch *f, CURLcode rc)
{
    if (rc == CURLE_COULDNT_CONNECT && f->x.refused[0] != '\0') {
        snprintf(f->x.errbuf, sizeof f->x.errbuf,
                 "refused to connect to %s: the host name resolved to a loopback or link-local "
                 "address, where a remote server may not send the client (SSRF guard)",
                 f->x.refused);
        return f->x.errbuf;
    }
    if (rc != CURLE_OK && f->x.socket_errno != 0) { /* out of descriptors: name the limits */
        char why[160], what[CURL_ERROR_SIZE];
        mcp_fdlimit_describe(f->x.socket_errno, why, sizeof why);
        snprintf(what, sizeof what, "%s", f->x.errbuf[0] ? f->x.errbuf : curl_easy_strerror(rc));
        snprintf(f->x.errbuf, sizeof f->x.errbuf, "%.100s (no socket: %.120s)", what, why);
        return f->x.errbuf;
    }
    return f->x.errbuf[0] ? f->x.errbuf : curl_easy_strerror(rc);
}
