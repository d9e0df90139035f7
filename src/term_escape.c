/* Terminal-safe text (term_escape.h): the rules of lua/mcp/util/term.lua. */
#include "term_escape.h"

#include <string.h>

static const char HEX[] = "0123456789abcdef";

/* The bidirectional formatting controls (LRM, RLM, ALM, the embeddings, overrides and isolates):
 * on a terminal that shows bidirectional text they reorder what follows ("Trojan Source"). */
static int is_bidi(unsigned long cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* The length of the valid UTF-8 sequence at s[0..len) and its code point in *cp, or 0. */
static size_t utf8_len(const unsigned char *s, size_t len, unsigned long *cp)
{
    size_t n, k;
    unsigned long min, c;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        n = 2, min = 0x80, c = s[0] & 0x1Fu;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3, min = 0x800, c = s[0] & 0x0Fu;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4, min = 0x10000, c = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (k = 1; k < n; k++) {
        if (s[k] < 0x80 || s[k] > 0xBF)
            return 0;
        c = c << 6 | (unsigned long)(s[k] - 0x80);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

/* `\xHH` */
static size_t hex_byte(unsigned char c, char *out, size_t *outlen)
{
    out[0] = '\\';
    out[1] = 'x';
    out[2] = HEX[c >> 4];
    out[3] = HEX[c & 15];
    *outlen = 4;
    return 1;
}

size_t mcp_term_escape_unit(const char *s, size_t len, int keep_newlines, char *out, size_t *outlen)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned long cp = 0;
    size_t n;
    if (u[0] < 0x80) {
        if ((u[0] >= 0x20 && u[0] != 0x7F) || u[0] == '\t' || (u[0] == '\n' && keep_newlines)) {
            out[0] = s[0];
            *outlen = 1;
            return 1;
        }
        return hex_byte(u[0], out, outlen);
    }
    n = utf8_len(u, len, &cp);
    if (n == 0)
        return hex_byte(u[0], out, outlen); /* not UTF-8: a raw 0x9B is CSI to some terminals */
    if (cp < 0xA0 || is_bidi(cp)) {         /* a C1 control, or a bidi control */
        out[0] = '\\';
        out[1] = 'u';
        out[2] = HEX[(cp >> 12) & 15];
        out[3] = HEX[(cp >> 8) & 15];
        out[4] = HEX[(cp >> 4) & 15];
        out[5] = HEX[cp & 15];
        *outlen = 6;
    } else {
        memcpy(out, s, n);
        *outlen = n;
    }
    return n;
}

/* A buffer in front of f (stderr is unbuffered: one write per unit would be slow, and other
 * writers' lines could come between the pieces of one). */
typedef struct sink {
    FILE *f;
    size_t used;
    char buf[512];
} sink;

static void put(sink *k, const char *p, size_t n)
{
    if (k->used + n > sizeof k->buf) {
        fwrite(k->buf, 1, k->used, k->f);
        k->used = 0;
    }
    if (n > sizeof k->buf) {
        fwrite(p, 1, n, k->f);
        return;
    }
    memcpy(k->buf + k->used, p, n);
    k->used += n;
}

void mcp_term_report(FILE *f, const char *prefix, const char *msg, size_t len)
{
    sink k;
    char unit[MCP_TERM_UNIT_MAX];
    size_t i = 0, n;
    k.f = f;
    k.used = 0;
    if (msg == NULL) {
        msg = "(an error object that is not a string)";
        len = strlen(msg);
    }
    put(&k, prefix, strlen(prefix));
    while (i < len) {
        i += mcp_term_escape_unit(msg + i, len - i, 0, unit, &n);
        put(&k, unit, n);
    }
    put(&k, "\n", 1);
    fwrite(k.buf, 1, k.used, f);
    fflush(f);
}
