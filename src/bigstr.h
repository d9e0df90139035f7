/* A long Lua string made over several slices of a budgeted decode (json_resume.c), so that the
 * slice that makes it only copies. Making a string of n bytes costs an allocation, one copy and
 * the first write to every fresh page of its block; that last one is most of it where a page
 * fault is dear (a virtual machine: ~15 us a page, 40 ms for 10 MB, next to 0.7 ms for the copy).
 * So the block is taken from the state's own allocator ahead of time, written once per page a
 * slice at a time, and handed to Lua when lua_pushlstring asks for it: for that one call the
 * state's allocator is a wrapper that answers the string's allocation with the block (shrunk
 * to the size asked, by the same allocator) and passes everything else through.
 * Unlike the one-shot decoder (json_decode.c's push_string), no collection runs ahead of the
 * string: the collector's smallest step can take 10 ms (Lua 5.4 sweeps ~100,000 objects a
 * step: the tables of a previous large result), so it is left to the collector's own pace.
 * Everything is the decoder's: the block is freed with it (close, __gc) when it was not used. */
#ifndef MCP_BIGSTR_H
#define MCP_BIGSTR_H

#include <stddef.h>

#include "lua_api.h"

typedef struct mcp_bigstr {
    lua_Alloc f; /* the state's allocator when the block was taken, and its data */
    void *ud;
    char *block; /* size bytes from f, not Lua's yet (NULL: none) */
    size_t size, len, touched;
    int phase;
} mcp_bigstr;

/* Start preparing a string of len bytes (b zeroed, nothing held). */
void mcp_bigstr_init(mcp_bigstr *b, size_t len);
/* One slice of the preparation: taking the block, or writing `bytes` more of it once a page. 1
 * when the string can be pushed. */
int mcp_bigstr_prepare(lua_State *L, mcp_bigstr *b, size_t bytes);
/* Push s[0..len) as a Lua string, in the prepared block when the state's allocator is still the
 * one it came from (else as lua_pushlstring does), without the collector's debt for it. The
 * block is then Lua's, or freed. May raise (out of memory). */
void mcp_bigstr_push(lua_State *L, mcp_bigstr *b, const char *s);
/* Free the block, when one is held. */
void mcp_bigstr_free(mcp_bigstr *b);

/* Scratch of at least n bytes (a long string's decoded text) mapped from the system, so that it
 * is given back a slice at a time (mcp_bigstr_unmap) rather than in one free, which costs as
 * much as the copy (10 MB: 2 ms in a virtual machine). *mapped: its size. NULL: none (smaller
 * than a megabyte, or no memory): malloc it. */
char *mcp_bigstr_map(size_t n, size_t *mapped);
/* Give back up to `bytes` of the scratch at p, from its end; *mapped: what is left. 1 when none
 * is. */
int mcp_bigstr_unmap(char *p, size_t *mapped, size_t bytes);

#endif
