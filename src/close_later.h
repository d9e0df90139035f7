/* Descriptors whose close wakes another process, closed one per budgeted host step.
 *
 * Closing a server's stdin wakes the server, which reads EOF and exits; on a busy machine the
 * kernel often runs it on the host's CPU at once, so each close costs the host's step about a
 * millisecond of wall time (the server's exit), and a task that closes eight clients cost one
 * frame 4-9 ms. The stdio transport hands such a descriptor here instead: a budgeted step
 * (core.step with a budget) closes one, an unbudgeted one (blocking calls, mcp.run()) all of
 * them before it waits. The loop owns them until then; its shutdown closes what is left first
 * (the hook is the loop's first, so the children's shutdown, which waits for them to exit, runs
 * after their stdin is closed). */
#ifndef MCP_CLOSE_LATER_H
#define MCP_CLOSE_LATER_H

#include <stddef.h>

#include "loop.h"

/* Adds the hook that owns the list; called once, right after the loop is made. 0, or -1 when out
 * of memory. */
int mcp_close_later_open(mcp_loop *loop);

/* Closes fd at the next step (at once when the hook is missing or the list cannot grow). */
void mcp_close_later(mcp_loop *loop, int fd);

/* Closes up to max of the descriptors waiting (0: all of them), the oldest first. */
void mcp_close_later_run(mcp_loop *loop, size_t max);

/* How many wait (tests). */
size_t mcp_close_later_pending(mcp_loop *loop);

#endif
