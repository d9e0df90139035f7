/* Descriptors closed at the next host step (close_later.h says why). */
#include "close_later.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct closer {
    int *fds;
    size_t len, cap;
} closer;

static const char closer_key = 0;

static void closer_shutdown(mcp_loop *loop, void *data)
{
    (void)data;
    mcp_close_later_run(loop, 0);
}

static void closer_release(mcp_loop *loop, void *data)
{
    closer *c = (closer *)data;
    size_t i;
    (void)loop;
    for (i = 0; i < c->len; i++)
        close(c->fds[i]);
    free(c->fds);
    free(c);
}

int mcp_close_later_open(mcp_loop *loop)
{
    closer *c = (closer *)calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    if (mcp_loop_add_hook(loop, &closer_key, c, closer_shutdown, closer_release) != 0) {
        free(c);
        return -1;
    }
    return 0;
}

void mcp_close_later(mcp_loop *loop, int fd)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    if (fd < 0)
        return;
    if (c != NULL && c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        int *fds = (int *)realloc(c->fds, cap * sizeof *fds);
        if (fds != NULL) {
            c->fds = fds;
            c->cap = cap;
        }
    }
    if (c == NULL || c->len == c->cap) {
        close(fd);
        return;
    }
    c->fds[c->len++] = fd;
}

void mcp_close_later_run(mcp_loop *loop, size_t max)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    size_t n, i;
    if (c == NULL || c->len == 0)
        return;
    n = (max == 0 || max > c->len) ? c->len : max;
    for (i = 0; i < n; i++)
        close(c->fds[i]);
    memmove(c->fds, c->fds + n, (c->len - n) * sizeof *c->fds);
    c->len -= n;
}

size_t mcp_close_later_pending(mcp_loop *loop)
{
    closer *c = (closer *)mcp_loop_hook_data(loop, &closer_key);
    return c != NULL ? c->len : 0;
}
