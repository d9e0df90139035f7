/* libcurl's entry points, loaded on first use (see lazylib.h). Include this instead of
 * <curl/curl.h> in code that calls libcurl: its names are redirected to the loaded table, so
 * the calls read as usual. mcp_curl_load must have succeeded before any of them runs: the
 * HTTP transports' constructor does it. */
#ifndef MCP_CURL_API_H
#define MCP_CURL_API_H

#ifdef MCP_OWN_CURL_ABI
#include "abi/curl.h" /* lua-mcp's own declarations (`make nvim` without libcurl's headers) */
#else
#include <curl/curl.h>
#endif

typedef struct mcp_curl_api {
    __typeof__(&curl_global_init) global_init;
    __typeof__(&curl_easy_init) easy_init;
    __typeof__(&curl_easy_setopt) easy_setopt;
    __typeof__(&curl_easy_getinfo) easy_getinfo;
    __typeof__(&curl_easy_cleanup) easy_cleanup;
    __typeof__(&curl_easy_strerror) easy_strerror;
    __typeof__(&curl_multi_init) multi_init;
    __typeof__(&curl_multi_setopt) multi_setopt;
    __typeof__(&curl_multi_cleanup) multi_cleanup;
    __typeof__(&curl_multi_add_handle) multi_add_handle;
    __typeof__(&curl_multi_remove_handle) multi_remove_handle;
    __typeof__(&curl_multi_assign) multi_assign;
    __typeof__(&curl_multi_socket_action) multi_socket_action;
    __typeof__(&curl_multi_info_read) multi_info_read;
    __typeof__(&curl_slist_append) slist_append;
    __typeof__(&curl_slist_free_all) slist_free_all;
    __typeof__(&curl_url) url;
    __typeof__(&curl_url_set) url_set;
    __typeof__(&curl_url_get) url_get;
    __typeof__(&curl_url_cleanup) url_cleanup;
    __typeof__(&curl_free) free;
} mcp_curl_api;

/* Load libcurl once per process and curl_global_init it. Returns 0, or -1 with a message. */
int mcp_curl_load(char *err, size_t errlen);
/* The table (valid after a successful mcp_curl_load). */
const mcp_curl_api *mcp_curl_fn(void);

#ifndef MCP_CURL_API_IMPL
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init (mcp_curl_fn()->global_init)
#define curl_easy_init (mcp_curl_fn()->easy_init)
#define curl_easy_setopt (mcp_curl_fn()->easy_setopt)
#define curl_easy_getinfo (mcp_curl_fn()->easy_getinfo)
#define curl_easy_cleanup (mcp_curl_fn()->easy_cleanup)
#define curl_easy_strerror (mcp_curl_fn()->easy_strerror)
#define curl_multi_init (mcp_curl_fn()->multi_init)
#define curl_multi_setopt (mcp_curl_fn()->multi_setopt)
#define curl_multi_cleanup (mcp_curl_fn()->multi_cleanup)
#define curl_multi_add_handle (mcp_curl_fn()->multi_add_handle)
#define curl_multi_remove_handle (mcp_curl_fn()->multi_remove_handle)
#define curl_multi_assign (mcp_curl_fn()->multi_assign)
#define curl_multi_socket_action (mcp_curl_fn()->multi_socket_action)
#define curl_multi_info_read (mcp_curl_fn()->multi_info_read)
#define curl_slist_append (mcp_curl_fn()->slist_append)
#define curl_slist_free_all (mcp_curl_fn()->slist_free_all)
#define curl_url (mcp_curl_fn()->url)
#define curl_url_set (mcp_curl_fn()->url_set)
#define curl_url_get (mcp_curl_fn()->url_get)
#define curl_url_cleanup (mcp_curl_fn()->url_cleanup)
#define curl_free (mcp_curl_fn()->free)
#endif

#endif
