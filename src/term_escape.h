/* Text lua-mcp did not make (an error a Lua callback raised, which may quote a server's text),
 * made safe to write to a terminal: the C twin of lua/mcp/util/term.lua's escape, with the same
 * rules and the same output for the same input. C0 controls (tabs stay; newlines stay only when
 * keep_newlines), DEL, the C1 controls (U+0080..U+009F, and raw bytes 0x80..0x9F), the
 * bidirectional formatting controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069)
 * and every byte that is not valid UTF-8 become visible escapes: `\x1b`, `\u009b`, `\u202e`.
 * spec/term_escape_spec.lua compares the two; fuzz/term_fuzz.c too. No allocation. */
#ifndef MCP_TERM_ESCAPE_H
#define MCP_TERM_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* The longest text one unit escapes to (`\u202e`; a kept UTF-8 sequence is at most 4 bytes). */
#define MCP_TERM_UNIT_MAX 6

/* The first unit of s[0..len), len > 0 (a byte, or a valid UTF-8 sequence): its escaped form in
 * out (at most MCP_TERM_UNIT_MAX bytes, no NUL) and its length in *outlen; returns how many bytes
 * of s it took (1..4). */
size_t mcp_term_escape_unit(const char *s, size_t len, int keep_newlines, char *out,
                            size_t *outlen);

/* Writes prefix (as it is: lua-mcp's own words), msg[0..len) escaped on one line (newlines
 * escaped too) and "\n" to f, in few writes. A NULL msg (an error object that is not a string)
 * is written as "(an error object that is not a string)". */
void mcp_term_report(FILE *f, const char *prefix, const char *msg, size_t len);

#endif
