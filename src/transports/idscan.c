#include "idscan.h"

#include <stdlib.h>
#include <string.h>

void mcp_idscan_init(mcp_idscan *s) { memset(s, 0, sizeof *s); }

static void id_put(mcp_idscan *s, char c)
{
    if (s->id_len + 1 < (int)sizeof s->id)
        s->id[s->id_len++] = c;
    else
        s->id_bad = 1;
}

/* The member name just ended at depth 1. */
static void key_done(mcp_idscan *s)
{
    if (s->key_len == 2 && memcmp(s->key, "id", 2) == 0) {
        s->in_id = 1;
        s->id_len = 0;
        s->id_is_str = 0;
        s->id_closed = 0;
        s->id_done = 0;
        s->id_bad = 0;
    } else if (s->key_len == 6 && memcmp(s->key, "method", 6) == 0) {
        s->has_method = 1;
    }
}

/* One byte inside a string. */
static void string_byte(mcp_idscan *s, char c)
{
    if (s->esc) {
        s->esc = 0;
        if (s->depth == 1 && s->in_id)
            s->id_bad = 1; /* escapes in an id: not one of ours */
        return;
    }
    if (c == '\\') {
        s->esc = 1;
        return;
    }
    if (c == '"') {
        s->in_str = 0;
        if (s->depth == 1 && s->want_key) {
            s->want_key = 0;
            key_done(s);
        } else if (s->depth == 1 && s->in_id && s->id_is_str) {
            s->in_id = 0; /* the id's value is complete: later bytes are not it */
            s->id_done = 1;
        }
        return;
    }
    if (s->depth == 1 && s->want_key) {
        if (s->key_len < (int)sizeof s->key)
            s->key[s->key_len] = c;
        s->key_len++;
    } else if (s->depth == 1 && s->in_id && s->id_is_str) {
        id_put(s, c);
    }
}

/* One byte outside any string. */
static void structure_byte(mcp_idscan *s, char c)
{
    switch (c) {
    case '"':
        s->in_str = 1;
        if (s->depth == 1 && s->want_key)
            s->key_len = 0;
        else if (s->depth == 1 && s->in_id) {
            if (s->id_len > 0 || s->id_closed)
                s->id_bad = 1; /* "id": 12 "x" */
            else
                s->id_is_str = 1;
        }
        break;
    case '{':
    case '[':
        if (s->depth == 0 && c == '{') {
            s->started = 1;
            s->want_key = 1;
        } else if (s->depth == 1 && s->in_id) {
            s->id_bad = 1; /* an object or array as id */
        }
        s->depth++;
        break;
    case '}':
    case ']':
        if (s->depth > 0)
            s->depth--;
        if (s->depth == 0 && s->in_id)
            s->in_id = 0, s->id_done = 1;
        break;
    case ',':
        if (s->depth == 1) {
            if (s->in_id)
                s->in_id = 0, s->id_done = 1;
            s->want_key = 1;
        }
        break;
    case ':': break;
    case ' ':
    case '\t':
    case '\r':
    case '\n':
        /* whitespace ends a number, but only ',' or '}' completes it */
        if (s->depth == 1 && s->in_id && !s->id_is_str && s->id_len > 0)
            s->id_closed = 1;
        break;
    default:
        if (s->depth == 1 && s->in_id && !s->id_is_str) {
            if (s->id_closed)
                s->id_bad = 1; /* "id": 12 34 */
            else
                id_put(s, c);
        }
        break;
    }
}

void mcp_idscan_feed(mcp_idscan *s, const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (s->in_str)
            string_byte(s, p[i]);
        else
            structure_byte(s, p[i]);
    }
}

/* A JSON number that is a non-negative integer below 2^53 (7, 7.0, 70e-1), without strtod and
 * its locale. */
static int number_key(const char *p, int64_t *out)
{
    char digits[40];
    int nd = 0, frac = 0, exp = 0, eneg = 0, any = 0;
    int64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++, any = 1)
        if (nd > 0 || *p != '0')
            digits[nd++] = *p;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, any = 1)
            digits[nd++] = *p, frac++;
    if (!any)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        if (*p < '0' || *p > '9')
            return 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if (exp < 1000)
                exp = exp * 10 + (*p - '0');
    }
    if (*p != '\0')
        return 0;
    exp = (eneg ? -exp : exp) - frac;
    for (; exp < 0 && nd > 0 && digits[nd - 1] == '0'; exp++)
        nd--;
    if (nd == 0) {
        *out = 0;
        return 1;
    }
    if (exp < 0 || nd + exp > 16)
        return 0;
    for (int i = 0; i < nd; i++)
        v = v * 10 + (digits[i] - '0');
    for (; exp > 0; exp--)
        v *= 10;
    if (v >= ((int64_t)1 << 53))
        return 0;
    *out = v;
    return 1;
}

int mcp_idscan_response_id(const mcp_idscan *s, int64_t *out)
{
    char text[sizeof s->id];
    if (!s->started || s->has_method || s->id_len == 0 || s->id_bad)
        return 0;
    if (!s->id_done) /* cut short: not a response we can trust */
        return 0;
    memcpy(text, s->id, (size_t)s->id_len);
    text[s->id_len] = '\0';
    if (s->id_is_str) {
        int64_t v = 0;
        int i;
        if (s->id_len > 15)
            return 0;
        for (i = 0; i < s->id_len; i++) {
            if (text[i] < '0' || text[i] > '9')
                return 0;
            v = v * 10 + (text[i] - '0');
        }
        *out = v;
        return 1;
    }
    return number_key(text, out);
}
