/* Web origins (scheme, host, port) of absolute http(s) URLs, for the redirect policy: a hop to
 * another origin must not carry the user's or the session's headers. Pure C, no libcurl, so the
 * fuzzer exercises exactly what the transport runs. */
#ifndef MCP_ORIGIN_H
#define MCP_ORIGIN_H

#include <stddef.h>

typedef struct mcp_origin {
    char scheme[8]; /* "http" or "https", lower case */
    char host[256]; /* lower case; an IPv6 literal keeps its brackets */
    unsigned port;  /* explicit, or the scheme's default */
} mcp_origin;

/* Parse the origin of an absolute http:// or https:// URL. Returns 0, or -1 when url is not
 * one (another scheme, no host, a bad port, a host too long). */
int mcp_origin_parse(const char *url, size_t len, mcp_origin *out);
/* 1 when both URLs parse and have the same origin; 0 otherwise (unparsable counts as other). */
int mcp_same_origin(const char *a, const char *b);

#endif
