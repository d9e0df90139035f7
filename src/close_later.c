/* Descriptors closed one per loop round (close_later.h says why). */
#include "close_later.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct closer {
    int *fds; /* the oldest first */
    size_t len, cap;
    mcp_timer timer; /* due at once while fds wait */
} closer;

static const char closer_key = 0;

static void close_first(closer *c, size_t n)
{
    size_t i;
    if (n == 0) /* (fds may be NULL: nothing was ever queued) */
        return;
    for (i = 0; i < n; i++)
        close(c->fds[i]);
    memmove(c->fds, c->fds + n, (c->len - n) * sizeof *c->fds);
    c->len -= n;
}

/* One per round: a timer armed from its own callback runs in the next round. */
static void on_timer(mcp_loop *loop, mcp_timer *t)
{
    closer *c = (closer *)t->data;
    if (c->len > 0)
        close_first(c, 1);
    if (c->len > 0)
        mcp_timer_start(loop, &c->timer, 0);
}

static void closer_shutdown(mcp_loop *loop, void *data)
{
    closer *c = (closer *)data;
    mcp_timer_stop(loop, &c->timer);
    close_first(c, c->len);
}

static void closer_release(mcp_loop *loop, void *data)
{
    closer *c = (closer *)data;
    closer_shutdown(loop, data); /* (a loop freed without a shutdown) */
    free(c->fds);
    free(c);
}

int mcp_close_later_open(mcp_loop *loop)
{
    closer *c = (closer *)calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    mcp_timer_init(&c->timer, on_timer, c);
    if (mcp_loop_add_hook(loop, &closer_key, c, closer_shutdown, closer_release) != 0) {
        free(c);
        return -1;
    }
    return 0;
}

/* Room for one more; 0, or -1 when out of memory. */
static int reserve(closer *c)
{
    size_t cap;
    int *fds;
    if (c->len < c->cap)
        return 0;
    cap = c->cap ? c->cap * 2 : 8;
    fds = (int *)realloc(c->fds, cap * sizeof *fds);
    if (fds == NULL)
        return -1;
    c->fds = fds;
    c->cap = cap;
    return 0;
}

void mcp_close_later(mcp_loop *loop, int fd)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    if (fd < 0)
        return;
    if (c == NULL || reserve(c) != 0 || mcp_timer_start(loop, &c->timer, 0) != 0) {
        close(fd);
        return;
    }
    c->fds[c->len++] = fd;
}

void mcp_close_later_now(mcp_loop *loop, int fd)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    size_t i;
    for (i = 0; c != NULL && i < c->len; i++) {
        if (c->fds[i] == fd) {
            close(fd);
            memmove(c->fds + i, c->fds + i + 1, (c->len - i - 1) * sizeof *c->fds);
            c->len--;
            return;
        }
    }
}

size_t mcp_close_later_pending(mcp_loop *loop)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    return c != NULL ? c->len : 0;
}
