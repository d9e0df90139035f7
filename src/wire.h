/* The JSON-RPC 2.0 wire format of MCP messages, apart from the session that uses it: scanning an
 * incoming object into Lua stack slots without building a table for it, the numeric key of a
 * request id, the error object of an HTTP error body, and writers of outgoing messages. */
#ifndef MCP_WIRE_H
#define MCP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lua_api.h"

#include "buf.h"

/* The members of an envelope that matter, each in its stack slot (base + slot). */
enum {
    MCP_WIRE_ID = 1,
    MCP_WIRE_METHOD,
    MCP_WIRE_PARAMS,
    MCP_WIRE_RESULT,
    MCP_WIRE_ERROR,
    MCP_WIRE_JSONRPC,
    MCP_WIRE_NSLOTS = 6
};

typedef struct mcp_envelope {
    const char *msg; /* the whole message (for byte offsets in errors) */
    size_t len;
    int writable;  /* msg may be decoded in place (mcp_json_decode_value_inplace) */
    mcp_buf *undo; /* its undo log then, or NULL */
    int key_order; /* objects record their key order (mcp_json_decode_value_ordered) */
    int base;      /* stack index before slot 1; the caller pushed MCP_WIRE_NSLOTS values */
    int has[MCP_WIRE_NSLOTS + 1];
    int id_known; /* the id was read and has a numeric key: id_key (kept when decoding fails) */
    int64_t id_key;
} mcp_envelope;

/* Parse the object at p (a '{') into the slots; other members are skipped. Returns the byte
 * after it, or NULL with a message in err. May raise (out of memory). */
const char *mcp_wire_parse_envelope(lua_State *L, mcp_envelope *e, const char *p, const char *end,
                                    char *err, size_t errlen);
/* The numeric key of the id at idx: 7, 7.0, 7e0 and "7" all give 7. Returns 0 for other ids. */
int mcp_wire_id_key(lua_State *L, int idx, int64_t *out);
/* Push code, message, data of the JSON-RPC error response in body and return 1; or push nothing
 * and return 0 when the body is not one. May raise (out of memory). */
int mcp_wire_push_rpc_error(lua_State *L, const char *body, size_t len);
/* Push the header lines of an HTTP response ("Name: value\r\n"...) as a table with lower-cased
 * names (repeated headers joined with ", "), or nil when there are none. */
void mcp_wire_push_http_headers(lua_State *L, const char *h, size_t len);

/* Writers: they append to b (mcp_wire_begin, _cancelled and _ping_result reset it first). */
void mcp_wire_put_int(mcp_buf *b, int64_t v);
/* {"jsonrpc":"2.0", */
void mcp_wire_begin(mcp_buf *b);
/* "id":<id>, */
void mcp_wire_put_id(mcp_buf *b, int64_t id);
/* "method":"<method>" */
void mcp_wire_put_method(mcp_buf *b, const char *method, size_t len);
/* ,"<key>": */
void mcp_wire_put_key(mcp_buf *b, const char *key);
/* ,"error":{"code":<code>,"message":"<message>"  (the caller closes it) */
void mcp_wire_put_error_head(mcp_buf *b, int64_t code, const char *message, size_t len);
/* The whole notifications/cancelled message for request id. */
void mcp_wire_cancelled(mcp_buf *b, int64_t id, const char *reason);
/* The whole empty result answering a ping whose id is at id_idx. 0, or -1 with err. */
int mcp_wire_ping_result(lua_State *L, int id_idx, mcp_buf *b, char *err, size_t errlen);

#endif
