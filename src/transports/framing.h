/* Newline-delimited JSON framing of the stdio transport, apart from any fd: bytes go in, whole
 * lines come out (without "\n" and one trailing "\r", empty lines skipped), and a message longer
 * than max is dropped as it arrives, while its top-level "id" is picked out (idscan.h) so the
 * request it answers can fail at once. Split anywhere, the same bytes give the same events. */
#ifndef MCP_FRAMING_H
#define MCP_FRAMING_H

#include <stddef.h>

#include "buf.h"
#include "idscan.h"

typedef struct mcp_framer {
    mcp_buf buf;        /* read into its tail (mcp_buf_reserve, then buf.len += n) */
    size_t max;         /* the longest message kept */
    size_t scanned;     /* bytes of buf already searched for '\n' */
    int skipping;       /* inside an oversized message: drop until its newline */
    int dropped_ready;  /* a whole oversized line was seen: MCP_FRAME_DROPPED comes next */
    mcp_idscan skipped; /* what the dropped message answered */
} mcp_framer;

enum {
    MCP_FRAME_NEED_MORE, /* nothing more in the buffer */
    MCP_FRAME_LINE,      /* *line, *len: one message, 1..max bytes */
    MCP_FRAME_TOO_LARGE, /* a message exceeds max; it is being dropped (once per message) */
    MCP_FRAME_DROPPED    /* the dropped message ended; f->skipped holds what it answered */
};

void mcp_framer_init(mcp_framer *f, size_t max);
void mcp_framer_free(mcp_framer *f);
/* The next event. A line stays valid until the buffer is written to again. */
int mcp_framer_next(mcp_framer *f, const char **line, size_t *len);

#endif
