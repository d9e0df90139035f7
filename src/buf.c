#include "buf.h"

#include <stdlib.h>

void mcp_buf_init(mcp_buf *b)
{
    b->data = b->next = NULL;
    b->len = b->off = b->cap = b->next_cap = b->next_ready = 0;
}

void mcp_buf_drop_growth(mcp_buf *b)
{
    free(b->next);
    b->next = NULL;
    b->next_cap = b->next_ready = 0;
}

void mcp_buf_free(mcp_buf *b)
{
    free(b->data);
    free(b->next);
    mcp_buf_init(b);
}

/* Grow into the prepared block: one copy, into pages already mapped. */
static int grow_into_next(mcp_buf *b, size_t need)
{
    if (b->next == NULL || b->next_cap < need) {
        mcp_buf_drop_growth(b);
        return -1;
    }
    memcpy(b->next, b->data + b->off, b->len);
    free(b->data);
    b->data = b->next;
    b->cap = b->next_cap;
    b->off = 0;
    b->next = NULL;
    b->next_cap = b->next_ready = 0;
    return 0;
}

#define PAGE 4096 /* one write every PAGE bytes reaches every page: none is smaller */

void mcp_buf_prepare_growth(mcp_buf *b, size_t min_cap, size_t bytes)
{
    volatile char *p;
    size_t i, stop;
    if (b->cap < min_cap || b->off + b->len < b->cap / 2 || b->cap > ((size_t)-1) / 2)
        return;
    if (b->next == NULL) {
        if ((b->next = malloc(b->cap * 2)) == NULL)
            return;
        b->next_cap = b->cap * 2;
    }
    /* what the copy fills: the buffer's size; the rest fills as it is read into */
    p = b->next;
    stop = bytes < b->cap - b->next_ready ? b->next_ready + bytes : b->cap;
    for (i = b->next_ready; i < stop; i += PAGE)
        p[i] = 0;
    b->next_ready = i;
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
    if (grow_into_next(b, need) == 0)
        return 0;
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
    mcp_buf_drop_growth(b);
    ncap = b->len > keep ? b->len : keep;
    p = realloc(b->data, ncap);
    if (p != NULL) { /* (a failed shrink keeps the larger block, which still works) */
        b->data = p;
        b->cap = ncap;
    }
}
