#define MCP_CURL_API_IMPL
#include "curl_api.h"

#include <stdio.h>

#include "lazylib.h"

/* Written once under pthread_once, read-only afterwards (see lazylib.h). */
static mcp_curl_api api;

#define SYM(n, f)                                                                                  \
    {                                                                                              \
        n, (void **)&api.f                                                                         \
    }

static const mcp_lazysym syms[] = {
    SYM("curl_global_init", global_init),
    SYM("curl_easy_init", easy_init),
    SYM("curl_easy_setopt", easy_setopt),
    SYM("curl_easy_getinfo", easy_getinfo),
    SYM("curl_easy_cleanup", easy_cleanup),
    SYM("curl_easy_strerror", easy_strerror),
    SYM("curl_multi_init", multi_init),
    SYM("curl_multi_setopt", multi_setopt),
    SYM("curl_multi_cleanup", multi_cleanup),
    SYM("curl_multi_add_handle", multi_add_handle),
    SYM("curl_multi_remove_handle", multi_remove_handle),
    SYM("curl_multi_assign", multi_assign),
    SYM("curl_multi_socket_action", multi_socket_action),
    SYM("curl_multi_info_read", multi_info_read),
    SYM("curl_slist_append", slist_append),
    SYM("curl_slist_free_all", slist_free_all),
    SYM("curl_url", url),
    SYM("curl_url_set", url_set),
    SYM("curl_url_get", url_get),
    SYM("curl_url_cleanup", url_cleanup),
    SYM("curl_free", free),
    {NULL, NULL},
};

static int global_init(char *err, size_t errlen)
{
    if (api.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
        return 0;
    snprintf(err, errlen, "curl_global_init failed");
    return -1;
}

static void load(void);
static mcp_lazylib lib = MCP_LAZYLIB_INIT(MCP_LIBCURL, syms, global_init, load);
static void load(void) { mcp_lazylib_fill(&lib); }

int mcp_curl_load(char *err, size_t errlen)
{
    char why[256];
    if (mcp_lazylib_open(&lib, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "libcurl is needed for HTTP transports: %s", why);
    return -1;
}

const mcp_curl_api *mcp_curl_fn(void) { return &api; }
