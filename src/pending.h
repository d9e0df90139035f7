/* Requests in flight, keyed by their numeric id: open addressing with linear probing and
 * backward-shift deletion (ids are sequential, so the table stays dense and fast). */
#ifndef MCP_PENDING_H
#define MCP_PENDING_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"

struct mcp_session;

typedef struct mcp_pending {
    int64_t id;
    int cb_ref; /* registry ref of the Lua completion function */
    uint32_t timeout_ms;
    mcp_timer timer;
    struct mcp_session *session;
} mcp_pending;

typedef struct mcp_pending_map {
    mcp_pending **slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
} mcp_pending_map;

void mcp_pending_map_init(mcp_pending_map *m);
void mcp_pending_map_free(mcp_pending_map *m);           /* frees the table, not the entries */
int mcp_pending_put(mcp_pending_map *m, mcp_pending *p); /* 0, or -1 out of memory */
mcp_pending *mcp_pending_get(const mcp_pending_map *m, int64_t id);
mcp_pending *mcp_pending_take(mcp_pending_map *m, int64_t id);
/* Any one entry (for failing them all), or NULL when empty. */
mcp_pending *mcp_pending_first(const mcp_pending_map *m);

#endif
