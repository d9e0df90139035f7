/* Descriptors whose close wakes another process, closed one per loop round.
 *
 * Closing a server's stdin wakes the server, which reads EOF and exits; on a busy machine the
 * kernel often runs it on the host's CPU at once, so each close costs the host's step about a
 * millisecond of wall time (the server's exit), and a task that closed eight clients cost one
 * frame 4-9 ms. The stdio transport hands such a descriptor here instead: a timer due at once
 * closes one per round of the loop (one per host step), so the loop's timeout is 0 while any
 * waits. The loop owns them until then; its shutdown closes what is left first (the hook is the
 * loop's first, so the children's shutdown, which waits for them to exit, runs after their stdin
 * is closed). */
#ifndef MCP_CLOSE_LATER_H
#define MCP_CLOSE_LATER_H

#include <stddef.h>

#include "loop.h"

/* Adds the hook that owns the list; called once, right after the loop is made. 0, or -1 when out
 * of memory. */
int mcp_close_later_open(mcp_loop *loop);

/* Closes fd in a coming round (at once when the hook is missing or the list cannot grow). */
void mcp_close_later(mcp_loop *loop, int fd);

/* Closes fd now if it still waits (its reader is gone: nothing to wake). */
void mcp_close_later_now(mcp_loop *loop, int fd);

/* How many wait (tests). */
size_t mcp_close_later_pending(mcp_loop *loop);

#endif
