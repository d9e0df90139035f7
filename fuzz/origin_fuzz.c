/* libFuzzer target for the origin checks of the redirect policy (src/transports/origin.c).
 *   make fuzz FUZZ_TARGET=origin / fuzz-smoke
 *
 * The input is two URLs separated by the first '\n' (or one URL twice). Checked:
 * - a parsed origin has scheme http or https, a non-empty lower-case host without control
 *   bytes or spaces, a port in 0..65535;
 * - mcp_same_origin is reflexive for a parsable URL and symmetric;
 * - differential, in the direction that matters (headers kept): when mcp_same_origin says two
 *   URLs share an origin and libcurl's URL parser accepts both, libcurl sees the same scheme,
 *   host (case-insensitively) and port in both. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "transports/origin.h"

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "origin_fuzz: check failed: %s (%s)\n", what, #cond);                  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

typedef struct curl_origin {
    char *scheme, *host, *port;
} curl_origin;

static int curl_parse(const char *url, curl_origin *o)
{
    CURLU *u = curl_url();
    int ok;
    memset(o, 0, sizeof *o);
    if (u == NULL)
        return 0;
    ok = curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
         curl_url_get(u, CURLUPART_SCHEME, &o->scheme, 0) == CURLUE_OK &&
         curl_url_get(u, CURLUPART_HOST, &o->host, 0) == CURLUE_OK &&
         curl_url_get(u, CURLUPART_PORT, &o->port, CURLU_DEFAULT_PORT) == CURLUE_OK;
    curl_url_cleanup(u);
    return ok;
}

static void curl_origin_free(curl_origin *o)
{
    curl_free(o->scheme);
    curl_free(o->host);
    curl_free(o->port);
}

static void check_origin(const char *url)
{
    mcp_origin o;
    size_t i;
    if (mcp_origin_parse(url, strlen(url), &o) != 0) {
        CHECK(!mcp_same_origin(url, url), "an unparsable URL is nobody's origin");
        return;
    }
    CHECK(strcmp(o.scheme, "http") == 0 || strcmp(o.scheme, "https") == 0, "http(s) only");
    CHECK(o.host[0] != '\0', "a host");
    for (i = 0; o.host[i]; i++) {
        unsigned char c = (unsigned char)o.host[i];
        CHECK(c > 0x20 && c != 0x7f && !(c >= 'A' && c <= 'Z'), "host bytes");
    }
    CHECK(o.port <= 65535, "port range");
    CHECK(mcp_same_origin(url, url), "reflexive");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *a, *b, *nl;
    int same;
    if (size > 4096)
        return 0;
    a = malloc(size + 1);
    if (a == NULL)
        return 0;
    memcpy(a, data, size);
    a[size] = '\0';
    if (strlen(a) != size) { /* a NUL inside: libcurl and the transport see C strings */
        free(a);
        return 0;
    }
    nl = strchr(a, '\n');
    if (nl != NULL) {
        *nl = '\0';
        b = nl + 1;
    } else {
        b = a;
    }
    check_origin(a);
    check_origin(b);
    same = mcp_same_origin(a, b);
    CHECK(same == mcp_same_origin(b, a), "symmetric");
    if (same) {
        curl_origin x, y;
        int ax = curl_parse(a, &x), by = curl_parse(b, &y);
        if (ax && by) {
            CHECK(strcasecmp(x.scheme, y.scheme) == 0, "libcurl: same scheme");
            CHECK(strcasecmp(x.host, y.host) == 0, "libcurl: same host");
            CHECK(strtoul(x.port, NULL, 10) == strtoul(y.port, NULL, 10), "libcurl: same port");
        }
        curl_origin_free(&x);
        curl_origin_free(&y);
    }
    free(a);
    return 0;
}
