#define MCP_CURL_API_IMPL
#include "curl_api.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lazylib.h"

/* Written once under pthread_once, read-only afterwards (see lazylib.h). */
static mcp_curl_api api;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = -1;
static char load_err[256];

#define SYM(n, f)                                                                                  \
    {                                                                                              \
        n, (void **)&api.f                                                                         \
    }

static void load(void)
{
    static const char *const names[] = {"libcurl.so.4", "libcurl.so", "libcurl.4.dylib",
                                        "libcurl.dylib", NULL};
    const mcp_lazysym syms[] = {
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
    load_rc = mcp_lazylib_load(names, syms, load_err, sizeof load_err);
    if (load_rc == 0 && api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_err, sizeof load_err, "curl_global_init failed");
        load_rc = -1;
    }
}

int mcp_curl_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (load_rc != 0)
        snprintf(err, errlen, "libcurl is needed for HTTP transports: %s", load_err);
    return load_rc;
}

const mcp_curl_api *mcp_curl_fn(void) { return &api; }
