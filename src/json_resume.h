/* A resumable JSON decoder: one large message decoded into Lua tables over several runs, each
 * bounded by a deadline or a number of units of work, so that a host's frame is never spent
 * decoding. It gives what mcp_json_decode_value gives for the same bytes: the same values (the
 * same tables, built by the same calls in the same order), the same error at the same byte.
 *
 * The decoder is a userdata that owns everything of one decode: the input (a copy, or the
 * malloc'd block a transport handed over, mcp_json_resume_pnew), its position, the stack of containers being filled (their state in the userdata, their partly
 * built tables and pending members in a table in its uservalue, where the collector sees them),
 * and the one-shot decoder's state. Dropping it mid-message frees everything (__gc). Inside a
 * container, members that end within `limit` bytes are decoded in one go by the one-shot
 * decoder; only longer ones are opened (containers) or scanned in chunks (strings). */
#ifndef MCP_JSON_RESUME_H
#define MCP_JSON_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "lua_api.h"

#define MCP_JSON_RESUME_MT "mcp.json.resume"
/* Members up to this long are decoded in one go: about 0.1 ms of small objects. */
#define MCP_JSON_RESUME_LIMIT ((size_t)16 * 1024)

enum { MCP_RESUME_MORE = 0, MCP_RESUME_DONE = 1, MCP_RESUME_FAILED = 2 };

/* Push a decoder of the JSON value at the start of s[0..n) (leading whitespace allowed), copied.
 * depth: the nesting depth of that value, as for mcp_json_decode_value (-1: the members of a
 * top-level array count as top-level values). limit: see above (0: open everything). */
void mcp_json_resume_push(lua_State *L, const char *s, size_t n, int depth, size_t limit);

/* The same for lua_pcall, without a copy: (block, s, n, depth [, limit]), block and s light
 * userdata, s..s+n inside the malloc'd block, which the decoder frees once it returned (when it
 * raised, the caller still owns the block). */
int mcp_json_resume_pnew(lua_State *L);

/* Decode with the decoder at idx until the value is complete (MCP_RESUME_DONE: the value is
 * pushed), the input is refused (MCP_RESUME_FAILED: mcp_json_resume_error tells why) or the run is
 * over (MCP_RESUME_MORE): the monotonic clock (mcp_now_us) reached deadline_us (0: no deadline) or
 * `units` units of work were done (0: no bound). Every run does at least one unit. May raise (out
 * of memory): the decoder is then failed, and the next call (which returns MCP_RESUME_FAILED)
 * undoes what the raised run left (the collector stopped around an allocation). Pushes nothing
 * but the value. */
int mcp_json_resume_run(lua_State *L, int idx, uint64_t deadline_us, unsigned units);

/* Free the decoder's input now (its value was taken); it decodes nothing more. */
void mcp_json_resume_release(lua_State *L, int idx);

/* The message of a failed decoder ("JSON parse error at byte N: ..."), or NULL. */
const char *mcp_json_resume_error(lua_State *L, int idx);
/* The decoder's copy of its input; *end_of_value (when not NULL): the offset just past the value
 * once done. */
const char *mcp_json_resume_input(lua_State *L, int idx, size_t *len, size_t *end_of_value);

#endif
