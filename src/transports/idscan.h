/* A streaming scan of one JSON-RPC message for its top-level "id", for messages too large to
 * keep: the stdio transport drops a line over max_message_size as it arrives, and this tells
 * it which request the dropped response answered, so that call fails at once instead of
 * waiting for its timeout. Bytes are fed in pieces; nothing of the message is kept but the
 * id's text (at most 31 bytes). Malformed input never fails: it only yields "no id". */
#ifndef MCP_IDSCAN_H
#define MCP_IDSCAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct mcp_idscan {
    int depth;       /* nesting: 1 inside the top-level object */
    int in_str, esc; /* inside a string, after a backslash */
    int want_key;    /* at depth 1, the next string is a member name */
    int key_len;     /* bytes of the current member name (capped) */
    char key[8];
    int in_id; /* reading the value of "id" */
    int id_len, id_is_str, id_done, id_bad;
    int id_closed; /* a number id ended (whitespace); only ',' or '}' may follow */
    char id[32];
    int has_method; /* a "method" member: a request or notification, not a response */
    int started;    /* saw the opening '{' */
} mcp_idscan;

void mcp_idscan_init(mcp_idscan *s);
void mcp_idscan_feed(mcp_idscan *s, const char *p, size_t n);
/* 1 and the id's numeric key (as the session matches them: 7, 7.0, 7e0 and "7" are 7) when
 * the message looks like a response carrying a usable id; else 0. */
int mcp_idscan_response_id(const mcp_idscan *s, int64_t *out);

#endif
