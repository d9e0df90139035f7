/* Exact JSON codec for the wire: integers stay integers, floats round-trip, [] stays [].
 *
 * Encoding:
 *   nil (top level), light userdata NULL (mcp.null) and the registry's MCP_JSON_NULL_ALIAS value -> null;
 *   integers (5.3+) -> decimal; floats -> JavaScript-like text that round-trips (NaN/Inf are errors);
 *   tables: metatable __jsontype "array" -> array of 1..rawlen (nil -> null), "object" -> object
 *   (its keys in the order of the metatable's __keyorder list when it has one, the others after);
 *   otherwise {} -> {}, string keys -> object, keys 1..n -> array, anything else -> error.
 * Decoding (RFC 8259, strict):
 *   objects -> plain tables; arrays -> tables with the MCP_JSON_ARRAY_MT metatable; null -> light userdata NULL;
 *   integer literals that fit int64 -> Lua integers on 5.3+, else doubles (exact up to 2^53 everywhere).
 * Nesting deeper than MCP_JSON_MAX_DEPTH containers is an error both ways (cycles included).
 * Both directions are independent of the C locale's decimal point. */
#ifndef MCP_JSON_H
#define MCP_JSON_H

#include "buf.h"
#include "compat.h"

#define MCP_JSON_MAX_DEPTH 512

/* Registry keys used by the codec (strings): */
#define MCP_JSON_ARRAY_MT                                                                          \
    "mcp.json.array_mt" /* metatable marking a table as a JSON array: {__jsontype="array"} */
#define MCP_JSON_OBJECT_MT "mcp.json.object_mt" /* {__jsontype="object"} */
#define MCP_JSON_NULL_ALIAS                                                                        \
    "mcp.json.null_alias" /* optional registry value that also encodes as null (e.g. vim.NIL) */

/* Create the two metatables (and the encoder's private buffer metatable) in the registry. Idempotent.
 * Call once from luaopen; the codec also calls it lazily if it was forgotten. */
void mcp_json_init(lua_State *L);

/* Append the JSON text of the Lua value at idx to b. Returns 0 on success, -1 on failure with a message in err
 * (NUL-terminated, errlen bytes). Never raises for unencodable values (function, sparse array, NaN,
 * depth > MCP_JSON_MAX_DEPTH, mixed keys...); only an out-of-memory inside the Lua API may raise.
 * On failure b->len may have grown: the caller truncates. Leaves the Lua stack as it found it. */
int mcp_json_encode(lua_State *L, int idx, mcp_buf *b, char *err, size_t errlen);

/* Append a JSON string literal (with quotes and escapes) for s[0..n). Returns 0 or -1 (OOM). */
int mcp_json_encode_string(mcp_buf *b, const char *s, size_t n);

/* Decode one JSON value starting at p (leading whitespace allowed), push it, return the pointer just past it
 * (trailing whitespace is not consumed). depth is the nesting depth of the value at p (0 at top level).
 * On error push nothing, write "JSON parse error at byte N: ..." into err, N being the 0-based offset of the
 * offending byte from base, and return NULL. Must be called inside a protected call (may raise on OOM).
 * Never reads at or past end; the input need not be NUL-terminated. */
const char *mcp_json_decode_value(lua_State *L, const char *base, const char *p, const char *end,
                                  int depth, char *err, size_t errlen);

/* mcp_json_decode_value on a message its caller lends for writing: escaped strings are decoded
 * over their own source bytes (a decoded string is never longer than its source), so no scratch
 * holds a second copy of a large string. The bytes of [p, end) are then clobbered where escaped
 * strings were, whatever the outcome. With undo NULL they may become anything. With an undo
 * buffer, only strings whose escapes are all two-byte ones other than \/ are decoded in place
 * (their source is the decoded text escaped again) and the long ones are logged in undo:
 * mcp_json_undo_apply then restores [p, end) byte for byte. The same values and the same errors
 * as mcp_json_decode_value. */
const char *mcp_json_decode_value_inplace(lua_State *L, const char *base, char *p, const char *end,
                                          int depth, mcp_buf *undo, char *err, size_t errlen);
/* mcp_json_decode_value (inplace 0) or _inplace (inplace 1, undo as there) where every object
 * with members records its key order: a metatable {__jsontype = "object", __keyorder = {key, ...}}
 * (the keys as the peer wrote them, each once), which mcp_json_encode follows. Without it only the
 * value of a "properties" key does. */
const char *mcp_json_decode_value_ordered(lua_State *L, const char *base, char *p, const char *end,
                                          int depth, int inplace, mcp_buf *undo, char *err,
                                          size_t errlen);
/* Restore the bytes that decodes logged in undo clobbered (base: their base), and empty undo. */
void mcp_json_undo_apply(mcp_buf *undo, char *base);

/* First byte at or after p that is not JSON whitespace (space, \t, \n, \r), or end. */
const char *mcp_json_skip_ws(const char *p, const char *end);

/* Lua functions: */
int mcp_json_lua_encode(
    lua_State *L); /* encode(v) -> string; raises on unencodable with the message */
int mcp_json_lua_decode(
    lua_State *L); /* decode(s [, order]) -> value | nil, errmsg (trailing non-space -> error) */

#endif
