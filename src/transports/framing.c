#include "framing.h"

#include <string.h>

void mcp_framer_init(mcp_framer *f, size_t max)
{
    memset(f, 0, sizeof *f);
    mcp_buf_init(&f->buf);
    f->max = max;
}

void mcp_framer_free(mcp_framer *f) { mcp_buf_free(&f->buf); }

/* A partial message is too large once what it holds, less a final '\r' that its '\n' may still
 * follow, exceeds max: the same verdict as for the whole line, however the bytes were split. */
static int partial_too_large(const mcp_framer *f)
{
    size_t n = f->buf.len;
    if (n > 0 && mcp_buf_head((mcp_buf *)&f->buf)[n - 1] == '\r')
        n--;
    return n > f->max;
}

int mcp_framer_next(mcp_framer *f, const char **line, size_t *len)
{
    if (f->dropped_ready) {
        f->dropped_ready = 0;
        return MCP_FRAME_DROPPED;
    }
    for (;;) {
        char *head;
        if (f->buf.len == 0) /* also before the first read: no buffer yet */
            return MCP_FRAME_NEED_MORE;
        head = mcp_buf_head(&f->buf);
        char *nl = memchr(head + f->scanned, '\n', f->buf.len - f->scanned);
        size_t n;
        if (nl == NULL) {
            f->scanned = f->buf.len;
            if (!f->skipping && partial_too_large(f)) {
                f->skipping = 1;
                mcp_idscan_init(&f->skipped);
                mcp_idscan_feed(&f->skipped, head, f->buf.len);
                mcp_buf_reset(&f->buf);
                f->scanned = 0;
                return MCP_FRAME_TOO_LARGE;
            }
            if (f->skipping) {
                mcp_idscan_feed(&f->skipped, head, f->buf.len);
                mcp_buf_reset(&f->buf);
                f->scanned = 0;
            }
            return MCP_FRAME_NEED_MORE;
        }
        n = (size_t)(nl - head);
        /* head stays valid: consume only moves the offset; nothing reallocates before the
         * caller writes into the buffer again. */
        mcp_buf_consume(&f->buf, n + 1);
        f->scanned = 0;
        if (f->skipping) {
            f->skipping = 0;
            mcp_idscan_feed(&f->skipped, head, n);
            return MCP_FRAME_DROPPED;
        }
        if (n > 0 && head[n - 1] == '\r')
            n--;
        if (n == 0)
            continue;
        if (n > f->max) {
            mcp_idscan_init(&f->skipped);
            mcp_idscan_feed(&f->skipped, head, n);
            f->dropped_ready = 1;
            return MCP_FRAME_TOO_LARGE;
        }
        *line = head;
        *len = n;
        return MCP_FRAME_LINE;
    }
}
