/* Server-Sent Events parser: WHATWG HTML "9.2.6 Interpreting an event stream".
 *
 * A feed is cut at CR/LF (memchr, no per-byte work on long lines) into line fragments; a
 * fragment is the part of one line that is in this feed, plus whether the line ends here.
 * Per line the parser is in one of three states:
 *   S_NAME   reading the field name (at most 5 bytes: longer names are unknown fields);
 *   S_VALUE  reading the value of a known field: `data` values go straight into the data
 *            buffer, event/id/retry values into `value` only when the line spans feeds;
 *   S_SKIP   a comment, an unknown field, or a line of an event being discarded.
 * So each data byte is copied once into the data buffer, and comments and unknown fields are
 * never buffered. The result does not depend on how the stream is split into feeds. */
#include "sse_parser.h"

#include <limits.h>
#include <string.h>

enum { S_NAME, S_VALUE, S_SKIP };
enum { F_NONE, F_EVENT, F_DATA, F_ID, F_RETRY };

/* Buffers larger than this are freed after use instead of kept for the next event. */
#define SSE_KEEP_BYTES (64 * 1024)

static const char BOM[3] = {'\xEF', '\xBB', '\xBF'};

void mcp_sse_init(mcp_sse_parser *p, mcp_sse_event_cb on_event, mcp_sse_retry_cb on_retry,
                  void *ctx, size_t max_event_bytes)
{
    memset(p, 0, sizeof *p);
    mcp_buf_init(&p->data);
    mcp_buf_init(&p->type);
    mcp_buf_init(&p->value);
    mcp_buf_init(&p->id);
    mcp_buf_init(&p->last_id);
    p->on_event = on_event;
    p->on_retry = on_retry;
    p->ctx = ctx;
    p->max_event_bytes = max_event_bytes;
    p->state = S_NAME;
}

void mcp_sse_free(mcp_sse_parser *p)
{
    mcp_buf_free(&p->data);
    mcp_buf_free(&p->type);
    mcp_buf_free(&p->value);
    mcp_buf_free(&p->id);
    mcp_buf_free(&p->last_id);
}

void mcp_sse_abort(mcp_sse_parser *p) { p->aborted = 1; }

const char *mcp_sse_last_event_id(const mcp_sse_parser *p, size_t *len)
{
    if (len != NULL)
        *len = p->last_id.len;
    return p->last_id.len > 0 ? p->last_id.data : "";
}

/* b := s[0..n), NUL-terminated. These buffers are never consumed from the front (off == 0). */
static int buf_set(mcp_buf *b, const char *s, size_t n)
{
    mcp_buf_reset(b);
    if (mcp_buf_reserve(b, n + 1) != 0)
        return -1;
    if (n > 0)
        memcpy(b->data, s, n);
    b->len = n;
    b->data[n] = '\0';
    return 0;
}

static void buf_recycle(mcp_buf *b)
{
    if (b->cap > SSE_KEEP_BYTES)
        mcp_buf_free(b);
    else
        mcp_buf_reset(b);
}

/* Would have + add bytes exceed the limit? */
static int too_big(const mcp_sse_parser *p, size_t have, size_t add)
{
    size_t max = p->max_event_bytes;
    return max != 0 && (add > max || have > max - add);
}

/* The `id` buffer goes back to the last event ID string. Cannot fail: `id` has held every
 * value `last_id` was given, and buffers never shrink except when freed (which resets both). */
static void forget_uncommitted_id(mcp_sse_parser *p)
{
    if (!p->id_dirty)
        return;
    if (buf_set(&p->id, p->last_id.data, p->last_id.len) != 0)
        mcp_buf_reset(&p->id);
    p->id_dirty = 0;
}

/* The current event is too large (or memory ran out): drop everything it set and skip lines
 * until the next blank line. */
static void drop_event(mcp_sse_parser *p)
{
    p->failed = 1;
    p->discard = 1;
    buf_recycle(&p->data);
    mcp_buf_reset(&p->type);
    buf_recycle(&p->value);
    forget_uncommitted_id(p);
    p->state = S_SKIP;
}

static void end_line(mcp_sse_parser *p)
{
    p->state = S_NAME;
    p->name_len = 0;
    p->field = F_NONE;
    p->space_pending = 0;
    if (p->value.len > 0)
        buf_recycle(&p->value);
}

static int field_of(const char *name, size_t len)
{
    switch (len) {
    case 2: return memcmp(name, "id", 2) == 0 ? F_ID : F_NONE;
    case 4: return memcmp(name, "data", 4) == 0 ? F_DATA : F_NONE;
    case 5:
        if (memcmp(name, "event", 5) == 0)
            return F_EVENT;
        return memcmp(name, "retry", 5) == 0 ? F_RETRY : F_NONE;
    default: return F_NONE;
    }
}

static void set_retry(mcp_sse_parser *p, const char *v, size_t n)
{
    unsigned long ms = 0;
    size_t i;
    if (n == 0)
        return;
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned char)v[i] - (unsigned)'0';
        if (d > 9)
            return;
        if (ms > (ULONG_MAX - d) / 10)
            ms = ULONG_MAX; /* saturate; later digits keep it there */
        else
            ms = ms * 10 + d;
    }
    if (p->on_retry != NULL)
        p->on_retry(p->ctx, ms);
}

/* A complete value of an event, id or retry field. */
static void apply_field(mcp_sse_parser *p, const char *v, size_t n)
{
    switch (p->field) {
    case F_EVENT:
        if (buf_set(&p->type, v, n) != 0)
            drop_event(p);
        break;
    case F_ID:
        if (n > 0 && memchr(v, '\0', n) != NULL)
            break;
        p->id_dirty = 1;
        /* Room in last_id now, so committing it at the blank line cannot fail. */
        if (mcp_buf_reserve(&p->last_id, n + 1) != 0 || buf_set(&p->id, v, n) != 0)
            drop_event(p);
        break;
    case F_RETRY: set_retry(p, v, n); break;
    default: break;
    }
}

/* Part of a value: data goes to the data buffer, other fields are applied at the line end. */
static void value_fragment(mcp_sse_parser *p, const char *s, size_t n, int eol)
{
    if (p->field == F_DATA) {
        size_t add = n + (eol ? 1 : 0);
        if (too_big(p, p->data.len, add) || mcp_buf_reserve(&p->data, add) != 0) {
            drop_event(p);
            return;
        }
        if (n > 0)
            memcpy(mcp_buf_tail(&p->data), s, n);
        p->data.len += n;
        if (eol)
            mcp_buf_put_unchecked(&p->data, '\n');
        return;
    }
    if (eol && p->value.len == 0) { /* the whole value is in this feed */
        if (too_big(p, 0, n))
            drop_event(p);
        else
            apply_field(p, s, n);
        return;
    }
    if (too_big(p, p->value.len, n) || mcp_buf_append(&p->value, s, n) != 0) {
        drop_event(p);
        return;
    }
    if (eol)
        apply_field(p, p->value.data, p->value.len);
}

/* A blank line: commit the id, dispatch the event if it has data, start a new event. */
static void blank_line(mcp_sse_parser *p)
{
    mcp_sse_event ev;
    if (p->discard) { /* the end of a dropped event: resynchronised */
        p->discard = 0;
        mcp_buf_reset(&p->data);
        mcp_buf_reset(&p->type);
        return;
    }
    if (p->id_dirty) {
        p->id_dirty = 0;
        if (buf_set(&p->last_id, p->id.data, p->id.len) != 0) { /* not reached: reserved */
            mcp_buf_reset(&p->last_id);
            p->failed = 1;
        }
    }
    if (p->data.len == 0) {
        mcp_buf_reset(&p->type);
        return;
    }
    p->data.len--; /* the final '\n' becomes the terminating NUL */
    p->data.data[p->data.len] = '\0';
    if (p->type.len > 0) {
        ev.type = p->type.data;
        ev.type_len = p->type.len;
    } else {
        ev.type = "message";
        ev.type_len = 7;
    }
    ev.data = p->data.data;
    ev.data_len = p->data.len;
    ev.id = mcp_sse_last_event_id(p, &ev.id_len);
    if (p->on_event != NULL)
        p->on_event(p->ctx, &ev);
    buf_recycle(&p->data);
    mcp_buf_reset(&p->type);
}

/* The part s[0..n) of the current line that is in this feed; eol: the line ends after it. */
static void line_fragment(mcp_sse_parser *p, const char *s, size_t n, int eol)
{
    for (;;) {
        switch (p->state) {
        case S_NAME:
            if (p->name_len == 0) {
                if (n == 0) {
                    if (eol)
                        blank_line(p);
                    return;
                }
                if (p->discard || s[0] == ':') { /* a dropped event's line, or a comment */
                    p->state = S_SKIP;
                    continue;
                }
            }
            while (n > 0 && *s != ':') {
                if (p->name_len == sizeof p->name) { /* longer than every known field name */
                    p->state = S_SKIP;
                    break;
                }
                p->name[p->name_len++] = *s++;
                n--;
            }
            if (p->state == S_SKIP)
                continue;
            if (n == 0 && !eol)
                return; /* the name goes on in the next feed */
            /* At ':' (strip it, then maybe one space), or the line is a name alone. */
            p->field = (unsigned char)field_of(p->name, p->name_len);
            if (n > 0) {
                s++;
                n--;
                p->space_pending = 1;
            }
            p->state = p->field == F_NONE ? S_SKIP : S_VALUE;
            continue;
        case S_VALUE:
            if (p->space_pending && n > 0) {
                if (*s == ' ') {
                    s++;
                    n--;
                }
                p->space_pending = 0;
            }
            value_fragment(p, s, n, eol);
            if (eol)
                end_line(p);
            return;
        default: /* S_SKIP */
            if (eol)
                end_line(p);
            return;
        }
    }
}

static const char *find_byte(const char *s, const char *end, char c)
{
    const char *e = memchr(s, c, (size_t)(end - s));
    return e != NULL ? e : end;
}

int mcp_sse_feed(mcp_sse_parser *p, const char *bytes, size_t n)
{
    const char *s = bytes, *end, *cr, *lf;
    if (p->aborted || n == 0)
        return 0;
    end = bytes + n;
    p->failed = 0;
    /* One UTF-8 BOM at the start of the stream, possibly split across feeds. */
    while (p->bom < 3 && s < end) {
        if (*s == BOM[p->bom]) {
            p->bom++;
            s++;
        } else {
            size_t matched = p->bom;
            p->bom = 3;
            if (matched > 0) /* not a BOM after all: those bytes start the first line */
                line_fragment(p, BOM, matched, 0);
        }
    }
    if (p->pending_cr && s < end) { /* CR at the end of the last feed, LF at the start of this */
        p->pending_cr = 0;
        if (*s == '\n')
            s++;
    }
    /* cr, lf: the next CR / LF at or after s, or end. Each is searched again only once
     * passed, so a feed costs two memchr passes at most. */
    cr = find_byte(s, end, '\r');
    lf = find_byte(s, end, '\n');
    while (s < end && !p->aborted) {
        const char *e = cr < lf ? cr : lf;
        if (e == end) {
            line_fragment(p, s, (size_t)(end - s), 0);
            break;
        }
        line_fragment(p, s, (size_t)(e - s), 1);
        if (*e == '\r') {
            if (e + 1 == end)
                p->pending_cr = 1;
            else if (e[1] == '\n')
                e++;
        }
        s = e + 1;
        if (cr < s)
            cr = find_byte(s, end, '\r');
        if (lf < s)
            lf = find_byte(s, end, '\n');
    }
    return p->failed ? -1 : 0;
}

void mcp_sse_reset(mcp_sse_parser *p)
{
    buf_recycle(&p->data);
    mcp_buf_reset(&p->type);
    buf_recycle(&p->value);
    forget_uncommitted_id(p);
    p->state = S_NAME;
    p->name_len = 0;
    p->field = F_NONE;
    p->space_pending = 0;
    p->pending_cr = 0;
    p->bom = 0;
    p->discard = 0;
    p->aborted = 0;
    p->failed = 0;
}
