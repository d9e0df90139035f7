#include "origin.h"

#include <string.h>

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

int mcp_origin_parse(const char *url, size_t len, mcp_origin *out)
{
    const char *p = url, *end = url + len, *auth_end, *host, *host_end, *at;
    size_t i, n;
    unsigned long port = 0;
    memset(out, 0, sizeof *out);
    /* scheme */
    for (i = 0; p + i < end && p[i] != ':' && i < sizeof out->scheme - 1; i++)
        out->scheme[i] = lower(p[i]);
    if (p + i + 3 > end || memcmp(p + i, "://", 3) != 0)
        return -1;
    if (strcmp(out->scheme, "http") == 0)
        out->port = 80;
    else if (strcmp(out->scheme, "https") == 0)
        out->port = 443;
    else
        return -1;
    p += i + 3;
    /* authority: up to the first '/', '?' or '#' */
    for (auth_end = p; auth_end < end && *auth_end != '/' && *auth_end != '?' && *auth_end != '#';
         auth_end++)
        if (*auth_end == '\\')
            return -1; /* browsers read it as '/', servers may not: refuse both readings */
    /* userinfo: up to the last '@' of the authority */
    host = p;
    for (at = p; at < auth_end; at++)
        if (*at == '@')
            host = at + 1;
    if (host < auth_end && *host == '[') {
        host_end = memchr(host, ']', (size_t)(auth_end - host));
        if (host_end == NULL)
            return -1;
        host_end++;
    } else {
        host_end = memchr(host, ':', (size_t)(auth_end - host));
        if (host_end == NULL)
            host_end = auth_end;
    }
    n = (size_t)(host_end - host);
    if (n == 0 || n >= sizeof out->host)
        return -1;
    for (i = 0; i < n; i++) {
        char c = lower(host[i]);
        if ((unsigned char)c <= 0x20 || c == 0x7f)
            return -1;
        out->host[i] = c;
    }
    if (host_end < auth_end) {
        const char *q = host_end;
        if (*q != ':')
            return -1;
        q++;
        if (q == auth_end)
            return 0; /* "host:" keeps the default port */
        for (; q < auth_end; q++) {
            if (*q < '0' || *q > '9')
                return -1;
            port = port * 10 + (unsigned long)(*q - '0');
            if (port > 65535)
                return -1;
        }
        out->port = (unsigned)port;
    }
    return 0;
}

int mcp_same_origin(const char *a, const char *b)
{
    mcp_origin x, y;
    if (a == NULL || b == NULL || mcp_origin_parse(a, strlen(a), &x) != 0 ||
        mcp_origin_parse(b, strlen(b), &y) != 0)
        return 0;
    return strcmp(x.scheme, y.scheme) == 0 && strcmp(x.host, y.host) == 0 && x.port == y.port;
}
