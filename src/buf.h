/* Growable byte buffer: the one container for wire bytes (read side and write side). */
#ifndef MCP_BUF_H
#define MCP_BUF_H

#include <stddef.h>
#include <string.h>

typedef struct mcp_buf {
    char *data;
    size_t len; /* bytes in use, from data[off] */
    size_t off; /* consumed prefix (read side), compacted lazily */
    size_t cap;
    /* The block it grows into next, prepared ahead (mcp_buf_prepare_growth), or NULL. */
    char *next;
    size_t next_cap, next_ready;
} mcp_buf;

void mcp_buf_init(mcp_buf *b);
void mcp_buf_free(mcp_buf *b);
/* Ensure room for n more bytes after the used region. Returns 0, or -1 when out of memory. */
int mcp_buf_reserve(mcp_buf *b, size_t n);
/* mcp_buf_append when the buffer has to grow (buf.c). */
int mcp_buf_append_grow(mcp_buf *b, const void *p, size_t n);
/* Give memory back after a large message: a buffer with more than keep bytes of room that uses
 * less than a quarter of it shrinks to what it holds (at least keep). */
void mcp_buf_shrink(mcp_buf *b, size_t keep);
/* A read buffer of at least min_cap bytes, half full, prepares the block it grows into (twice
 * its size): `bytes` more of it are written once a page, so that growing copies into mapped
 * memory. A first write to a page costs a page fault, dear in a virtual machine (~15 us): the
 * copy of 4 MB into a fresh block cost 15 ms in one step; spread over the reads that fill the
 * buffer, it costs the step nothing it would notice. */
void mcp_buf_prepare_growth(mcp_buf *b, size_t min_cap, size_t bytes);
/* Free the block prepared for its growth (before its own block is handed to another owner). */
void mcp_buf_drop_growth(mcp_buf *b);
/* Drop n bytes from the front (read side). */
void mcp_buf_consume(mcp_buf *b, size_t n);
/* Start of unconsumed bytes. */
static inline char *mcp_buf_head(mcp_buf *b) { return b->data + b->off; }
/* Pointer to free space after the used region (call reserve first). */
static inline char *mcp_buf_tail(mcp_buf *b) { return b->data + b->off + b->len; }
static inline void mcp_buf_reset(mcp_buf *b)
{
    b->len = 0;
    b->off = 0;
}
/* Append n bytes. Returns 0, or -1 when out of memory. Inline: the encoders append piece by piece. */
static inline int mcp_buf_append(mcp_buf *b, const void *p, size_t n)
{
    if (b->cap - b->off - b->len < n)
        return mcp_buf_append_grow(b, p, n);
    if (n > 0) {
        memcpy(mcp_buf_tail(b), p, n);
        b->len += n;
    }
    return 0;
}
/* Fast append of one byte / small literal; the caller reserved room (unchecked). */
static inline void mcp_buf_put_unchecked(mcp_buf *b, char c) { b->data[b->off + b->len++] = c; }

#endif
