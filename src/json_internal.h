/* Shared by json_encode.c and json_decode.c only. */
#ifndef MCP_JSON_INTERNAL_H
#define MCP_JSON_INTERNAL_H

#include "json.h"

/* Push a userdata holding an empty mcp_buf whose __gc frees it: malloc'd scratch that cannot leak when Lua
 * raises, yet stays out of the Lua heap (no GC debt, no fresh pages for every large string). */
mcp_buf *mcp_json_pushbuf(lua_State *L);

/* The steps of the one-shot decoder that the resumable one (json_resume.c) takes itself, one
 * container at a time: the state of one decode (struct dec of json_decode.c), made for the bytes
 * [base, end) with its messages written to err. */
typedef struct dec mcp_json_dec;
/* Containers in the first MCP_JSON_BATCH_DEPTH levels gather up to MCP_JSON_BATCH members on the
 * stack before their table is made at its size (json_decode.c, "containers"). */
#define MCP_JSON_BATCH 16
#define MCP_JSON_BATCH_DEPTH 32
mcp_json_dec *mcp_json_dec_new(const char *base, const char *end, char *err, size_t errlen);
/* Decode on L from now on; slots and slots + 1 are its two reserved stack slots (the array
 * metatable and the scratch buffer's owner), nil at first and kept by the caller between uses. */
void mcp_json_dec_bind(mcp_json_dec *d, lua_State *L, int slots);
/* Free d (NULL: nothing); scratch_too: also the scratch buffer's memory now (not from a __gc:
 * the buffer's own finalizer may have run). */
void mcp_json_dec_free(mcp_json_dec *d, int scratch_too);
const char *mcp_json_dec_value(mcp_json_dec *d, const char *p, int depth); /* decode_value */
const char *mcp_json_dec_string(mcp_json_dec *d, const char *p);           /* p at the quote */
const char *mcp_json_dec_fail(mcp_json_dec *d, const char *at, const char *msg); /* NULL */
const char *mcp_json_dec_unexpected(mcp_json_dec *d, const char *p);             /* NULL */
/* First byte in [p, end) that ends a run of plain string bytes ('"', '\\', a control byte). */
const char *mcp_json_dec_plain(const char *p, const char *end);
/* The escape at p (a backslash) written at *o (advanced), as decode_string decodes it; returns
 * the byte after it, or NULL when it is not a valid escape (decode_string then says why). */
const char *mcp_json_dec_escape(const char *p, const char *end, char **o);
void mcp_json_dec_make_array(mcp_json_dec *d, int base, int n, int hint);
/* make_array's second half: the table on top (made by the caller) becomes the array of the n
 * elements at base+1..base+n, in their place. */
void mcp_json_dec_fill_array(mcp_json_dec *d, int base, int n);
void mcp_json_dec_make_object(lua_State *L, int base, int n, int hint);
/* The "properties" key order: taken (and cleared) by an object as it opens; set from the key on
 * top of the stack (on) or cleared before and after a member's value; set on an object whose
 * keys list sits above it (decode_object's end). */
int mcp_json_dec_take_order(mcp_json_dec *d);
void mcp_json_dec_order_next(mcp_json_dec *d, int on);
void mcp_json_dec_set_key_order(lua_State *L);

#endif
