/* libcurl's multi socket API driven by the core's loop: curl's sockets become loop watches and
 * its timer a loop timer, so any number of HTTP transfers share the one loop with the stdio
 * clients. No threads, no curl_multi_poll.
 *
 * libcurl forbids multi calls from inside its callbacks, so transfers only buffer what they
 * receive in their write callbacks; the owner dispatches it from `flush`, which runs after
 * curl_multi_socket_action has returned, and completions run there too. */
#ifndef MCP_CURL_LOOP_H
#define MCP_CURL_LOOP_H

#include "curl_api.h"

#include "addrguard.h"
#include "loop.h"

typedef struct mcp_curl mcp_curl;
typedef struct mcp_xfer mcp_xfer;

typedef struct mcp_xfer_ops {
    /* Data arrived (called after socket_action returned, outside libcurl). */
    void (*flush)(mcp_xfer *x);
    /* The transfer finished (rc: CURLE_OK or the failure); the xfer is already detached and
     * data not yet flushed is still buffered: done delivers it first. */
    void (*done)(mcp_xfer *x, CURLcode rc);
} mcp_xfer_ops;

struct mcp_xfer {
    CURL *easy;
    const mcp_xfer_ops *ops;
    void *owner;
    mcp_curl *curl;
    int attached;
    int dirty; /* flush wanted */
    mcp_xfer *next_dirty;
    char errbuf[CURL_ERROR_SIZE];
    /* Addresses this transfer must not connect to (the SSRF guard; set before it starts), and
     * the first one it refused, as text ("" while none). */
    mcp_addr_guard guard;
    char refused[64];
    /* Why the transfer got no socket (EMFILE at the hard limit, ENFILE), 0 while it got them:
     * its error names the limit instead of only libcurl's "Couldn't connect". */
    int socket_errno;
};

/* The curl context of the loop (created on first use, reference counted). */
mcp_curl *mcp_curl_new(mcp_loop *loop);
void mcp_curl_ref(mcp_curl *c);
void mcp_curl_unref(mcp_curl *c);

/* Prepare x around a new easy handle (CURLOPT_PRIVATE and ERRORBUFFER set). -1: out of memory. */
int mcp_xfer_init(mcp_xfer *x, mcp_curl *c, const mcp_xfer_ops *ops, void *owner);
/* Start it. Returns 0 or -1. */
int mcp_xfer_start(mcp_xfer *x);
/* The loop the transfers run on. */
mcp_loop *mcp_curl_loop(mcp_curl *c);
/* End a running transfer now as if libcurl had finished it with rc: detached, then done(x, rc).
 * From a loop callback only (a timer), never from inside libcurl. */
void mcp_xfer_abort(mcp_xfer *x, CURLcode rc);
/* Stop it without a done callback, and free the easy handle. Safe outside libcurl callbacks. */
void mcp_xfer_cleanup(mcp_xfer *x);
/* From a write/header callback: ask for a flush once libcurl has returned. */
void mcp_xfer_mark_dirty(mcp_xfer *x);

#endif
