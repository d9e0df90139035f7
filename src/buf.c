#include "buf.h"

#include <stdlib.h>

void mcp_buf_init(mcp_buf *b)
{
    b->data = NULL;
    b->len = b->off = b->cap = 0;
}

void mcp_buf_free(mcp_buf *b)
{
    free(b->data);
    mcp_buf_init(b);
}

int mcp_buf_reserve(mcp_buf *b, size_t n)
{
    size_t need, ncap;
    char *p;
    if (b->cap - b->off - b->len >= n)
        return 0;
    /* Reclaim the consumed prefix before growing. */
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
        if (b->cap - b->len >= n)
            return 0;
    }
    need = b->len + n;
    if (need < b->len)
        return -1;
    ncap = b->cap ? b->cap : 256;
    while (ncap < need) {
        if (ncap > ((size_t)-1) / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    p = realloc(b->data, ncap);
    if (p == NULL)
        return -1;
    b->data = p;
    b->cap = ncap;
    return 0;
}

int mcp_buf_append_grow(mcp_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (mcp_buf_reserve(b, n) != 0)
        return -1;
    memcpy(mcp_buf_tail(b), p, n);
    b->len += n;
    return 0;
}

void mcp_buf_consume(mcp_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        b->off = 0;
        return;
    }
    b->off += n;
    b->len -= n;
}

void mcp_buf_shrink(mcp_buf *b, size_t keep)
{
    size_t ncap;
    char *p;
    if (b->cap <= keep || b->len > b->cap / 4)
        return;
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
    }
    ncap = b->len > keep ? b->len : keep;
    p = realloc(b->data, ncap);
    if (p != NULL) { /* (a failed shrink keeps the larger block, which still works) */
        b->data = p;
        b->cap = ncap;
    }
}
