#include "stdio_transport.h"

#include "sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "close_later.h"
#include "framing.h"

#define READ_CHUNK (64 * 1024)
#define READ_KEEP (256 * 1024) /* the read buffer shrinks back to this after a larger message */
#define READ_BUDGET (4 * 1024 * 1024) /* per wake-up, so one busy server can't starve others */
#define GROW_AHEAD_MIN (1024 * 1024)  /* a read buffer this large prepares its growth (buf.h) */
#define STDERR_LINE_MAX (64 * 1024)
/* Per wake-up of the stderr reader: a server flooding its stderr gets the same share of the
 * loop as anyone else, and timers (a call's timeout) still fire on time. */
#define STDERR_BUDGET (64 * 1024)

typedef struct mcp_stdio {
    mcp_transport base;
    mcp_stdio_config cfg;
    mcp_child *child;
    int fd_in, fd_out, fd_err;
    int fd_in_queued; /* the stdin handed to close_later, until the child exits */
    mcp_watch w_in, w_out, w_err;
    mcp_framer fr; /* stdout, cut into messages */
    mcp_buf wbuf, ebuf;
    int started, closing, closed_notified;
    int busy; /* inside on_stdout or on_stderr: the read buffers are in use */
    /* The server looks gone (stdout EOF, EPIPE): give its exit a moment to be reaped, so the
     * error names the exit status, then close. */
    int lose_pending;
    char lose_why[96];
    mcp_timer lose_timer;
    mcp_stderr_cb stderr_cb;
    void *stderr_ctx;
    mcp_stdio_started_cb started_cb;
    void *started_ctx;
    /* What was sent into the server's stdin (bytes the pipe took), and whether, when it went, it
     * had read none of it: it died of its own start, not of a message (the discovery probe does
     * not start such a server again, lua/mcp/era/init.lua). */
    int sent_any, input_untouched;
    size_t written;
} mcp_stdio;

static void close_fd(mcp_loop *loop, mcp_watch *w, int *fd)
{
    if (*fd < 0)
        return;
    mcp_watch_stop(loop, w);
    close(*fd);
    *fd = -1;
}

/* Tell the session once, with the best reason we have. */
static void notify_closed(mcp_stdio *s, const char *why)
{
    char reason[256], exit_text[96];
    const mcp_sink *sink = s->base.sink;
    if (s->closed_notified)
        return;
    s->closed_notified = 1;
    if (s->child != NULL && mcp_child_poll(s->child)) {
        mcp_child_describe(s->child, exit_text, sizeof exit_text);
        snprintf(reason, sizeof reason, "the server process %s%s", exit_text,
                 s->input_untouched ? " before reading its input" : "");
    } else {
        snprintf(reason, sizeof reason, "%s", why);
    }
    if (sink != NULL)
        sink->on_closed(s->base.sink_ctx, reason);
}

/* close() frees what the transport holds, not __gc (after a 200 MB result, 256 MiB): the
 * buffers go at once, or when the reader that is using them returns. */
static void release_buffers(mcp_stdio *s)
{
    if (!s->closing || s->busy)
        return;
    mcp_buf_free(&s->fr.buf);
    s->fr.scanned = 0;
    mcp_buf_free(&s->wbuf);
    mcp_buf_free(&s->ebuf);
}

/* Every byte written to the server's stdin is still in the pipe (or the first write found it
 * closed). Unknown counts as read: where FIONREAD on a pipe's write end does not count the pipe's
 * bytes (macOS), a server that died at start is started again, as before. */
static int input_untouched(mcp_stdio *s)
{
    int n = -1;
    if (!s->sent_any || s->fd_in < 0)
        return 0;
    if (s->written == 0)
        return 1;
#ifdef FIONREAD
    if (ioctl(s->fd_in, FIONREAD, &n) == 0 && n >= 0 && (size_t)n == s->written)
        return 1;
#endif
    return 0;
}

static void stdio_close(mcp_transport *t)
{
    mcp_stdio *s = (mcp_stdio *)t;
    mcp_loop *loop = t->loop;
    if (s->closing)
        return;
    s->closing = 1;
    s->input_untouched = input_untouched(s);
    mcp_timer_stop(loop, &s->lose_timer);
    /* Best effort: what is queued (a cancellation, say) goes out before stdin closes. */
    if (s->fd_in >= 0 && s->wbuf.len > 0) {
        ssize_t n = write(s->fd_in, mcp_buf_head(&s->wbuf), s->wbuf.len);
        (void)n;
    }
    mcp_buf_reset(&s->wbuf);
    /* The server wakes on its stdin's EOF and exits, often on the host's CPU: the close waits
     * for the next step, one a budgeted step (close_later.h). */
    if (s->fd_in >= 0) {
        mcp_watch_stop(loop, &s->w_in);
        mcp_close_later(loop, s->fd_in);
        s->fd_in_queued = s->fd_in;
        s->fd_in = -1;
    }
    close_fd(loop, &s->w_out, &s->fd_out);
    close_fd(loop, &s->w_err, &s->fd_err);
    if (s->child != NULL)
        mcp_child_stop(s->child, 2000);
    release_buffers(s);
}

static void on_stderr(mcp_loop *loop, mcp_watch *w, unsigned events);

/* The far end is gone (EOF, exit, write failure): close and tell the session. What the server
 * wrote on stderr before it went may still be in the pipe, unread when its exit came first (the
 * poll(2) backend's order): read it (one bounded pass) so that its last lines reach the host. */
static void stdio_lost(mcp_stdio *s, const char *why)
{
    if (!s->closing && s->fd_err >= 0 && s->w_err.cb != NULL)
        on_stderr(s->base.loop, &s->w_err, MCP_EV_READ);
    stdio_close(&s->base);
    notify_closed(s, why);
}

#define LOSE_GRACE_MS 250

static void on_lose_timer(mcp_loop *loop, mcp_timer *t)
{
    mcp_stdio *s = t->data;
    (void)loop;
    mcp_transport_ref(&s->base);
    stdio_lost(s, s->lose_why);
    mcp_transport_unref(&s->base);
}

static void lose_soon(mcp_stdio *s, const char *why)
{
    if (s->closing || s->lose_pending)
        return;
    s->lose_pending = 1;
    snprintf(s->lose_why, sizeof s->lose_why, "%s", why);
    mcp_timer_start(s->base.loop, &s->lose_timer, LOSE_GRACE_MS);
}

static void on_child_exit(mcp_child *c, void *owner)
{
    mcp_stdio *s = owner;
    (void)c;
    /* The server is gone: its stdin, if it still waits for a step, wakes no one (and a blocking
     * close() that returns now must not leave it open). */
    if (s->fd_in_queued >= 0) {
        mcp_close_later_now(s->base.loop, s->fd_in_queued);
        s->fd_in_queued = -1;
    }
    /* Output the child wrote before exiting is still in the pipe: read it first. */
    if (!s->closing && s->fd_out >= 0 && s->w_out.cb != NULL) {
        mcp_transport_ref(&s->base);
        s->w_out.cb(s->base.loop, &s->w_out, MCP_EV_READ);
        if (!s->closing)
            stdio_lost(s, "the server process exited");
        mcp_transport_unref(&s->base);
    } else if (!s->closing) {
        stdio_lost(s, "the server process exited");
    }
}

static void report(mcp_stdio *s, const char *kind, const char *msg)
{
    if (s->base.sink != NULL)
        s->base.sink->on_error(s->base.sink_ctx, kind, msg);
}

/* A response was dropped for its size: the request it answers fails now, with that reason,
 * rather than at its timeout. */
static void fail_dropped(mcp_stdio *s)
{
    int64_t id;
    mcp_transport_failure f;
    char msg[200];
    const mcp_sink *sink = s->base.sink;
    if (sink == NULL || sink->on_request_failed == NULL ||
        !mcp_idscan_response_id(&s->fr.skipped, &id))
        return;
    if (sink->is_pending != NULL && !sink->is_pending(s->base.sink_ctx, id))
        return;
    snprintf(msg, sizeof msg,
             "stdio: the response exceeds max_message_size (%zu bytes) and was dropped",
             s->cfg.max_message);
    memset(&f, 0, sizeof f);
    f.message = msg;
    sink->on_request_failed(s->base.sink_ctx, id, &f);
}

/* A large line goes to the session with the block that holds it, when the session takes it (no
 * copy of a message it keeps over several steps): the framer's unread bytes move to a new
 * buffer first. 0: not offered (deliver it as usual). */
static int offer_line(mcp_stdio *s, char *line, size_t len)
{
    const mcp_sink *sink = s->base.sink;
    void *ctx = s->base.sink_ctx;
    mcp_buf old, rest;
    if (sink->take_message == NULL || len < MCP_SINK_TAKE_MIN)
        return 0;
    mcp_buf_drop_growth(&s->fr.buf); /* its block goes, and with it what it would grow into */
    old = s->fr.buf;
    mcp_buf_init(&rest);
    if (old.len > 0 && mcp_buf_append(&rest, mcp_buf_head(&old), old.len) != 0) {
        mcp_buf_free(&rest);
        return 0;
    }
    s->fr.buf = rest; /* before the session runs: a callback may close us and free it */
    if (!sink->take_message(ctx, old.data, line, len)) {
        sink->on_message_inplace(ctx, line, len, NULL);
        mcp_buf_free(&old);
    }
    return 1;
}

/* Hand every complete line to the session; stops early if a callback closed us. */
static void deliver_lines(mcp_stdio *s)
{
    for (;;) {
        const char *line = NULL;
        size_t len = 0;
        int ev = mcp_framer_next(&s->fr, &line, &len);
        if (ev == MCP_FRAME_NEED_MORE)
            return;
        if (ev == MCP_FRAME_TOO_LARGE) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "stdio: a message exceeds max_message_size (%zu bytes); it is skipped",
                     s->cfg.max_message);
            report(s, "message_too_large", msg);
        } else if (ev == MCP_FRAME_DROPPED) {
            fail_dropped(s);
        } else if (s->base.sink != NULL) {
            /* The line is consumed (behind the buffer's offset) and nothing reads it again:
             * decoded in place. */
            if (!offer_line(s, (char *)line, len))
                s->base.sink->on_message_inplace(s->base.sink_ctx, (char *)line, len, NULL);
        }
        if (s->closing)
            return;
    }
}

static void on_stdout(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    mcp_stdio *s = w->data;
    size_t budget = READ_BUDGET, room;
    (void)events;
    mcp_transport_ref(&s->base);
    s->busy++;
    while (!s->closing && budget > 0) {
        ssize_t n;
        if (mcp_buf_reserve(&s->fr.buf, READ_CHUNK) != 0) {
            report(s, "out_of_memory", "stdio: out of memory reading from the server");
            stdio_lost(s, "out of memory");
            break;
        }
        room = s->fr.buf.cap - s->fr.buf.off - s->fr.buf.len;
        n = read(s->fd_out, mcp_buf_tail(&s->fr.buf), room);
        if (n > 0) {
            s->fr.buf.len += (size_t)n;
            /* in a step with a budget, the copy of the next growth is written ahead (twice
             * what the buffer took in); a blocking wait keeps realloc, which may not copy */
            if (mcp_loop_deadline(loop) != 0)
                mcp_buf_prepare_growth(&s->fr.buf, GROW_AHEAD_MIN, 2 * (size_t)n);
            budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
            deliver_lines(s);
            /* A short read emptied the pipe: the loop (level-triggered) wakes us when more
             * comes, so asking again would only return EAGAIN, one syscall per message. */
            if ((size_t)n < room)
                break;
            /* a step with a budget reads on in the next step (level-triggered) */
            if (mcp_loop_deadline(loop) != 0 && mcp_now_us() >= mcp_loop_deadline(loop))
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        /* Level-triggered EOF would fire forever: stop reading, then wait for the exit. */
        close_fd(s->base.loop, &s->w_out, &s->fd_out);
        lose_soon(s,
                  n == 0 ? "the server closed its stdout" : "reading the server's stdout failed");
        break;
    }
    s->busy--;
    mcp_buf_shrink(&s->fr.buf, READ_KEEP); /* after a large message, give its memory back */
    release_buffers(s);
    mcp_transport_unref(&s->base);
}

static void emit_stderr(mcp_stdio *s, const char *line, size_t len)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (s->stderr_cb != NULL)
        s->stderr_cb(s->stderr_ctx, line, len);
}

static void on_stderr(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    mcp_stdio *s = w->data;
    char chunk[READ_CHUNK];
    size_t budget = STDERR_BUDGET;
    (void)events;
    mcp_transport_ref(&s->base);
    s->busy++;
    /* Level-triggered: what is left after the budget wakes us again on the next round. */
    while (budget > 0) {
        ssize_t n = read(s->fd_err, chunk, budget < sizeof chunk ? budget : sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                if (s->ebuf.len > 0)
                    emit_stderr(s, mcp_buf_head(&s->ebuf), s->ebuf.len);
                mcp_buf_reset(&s->ebuf);
                close_fd(loop, &s->w_err, &s->fd_err);
            }
            break;
        }
        budget -= (size_t)n;
        /* Always drained; only split into lines when someone listens. */
        if (s->stderr_cb == NULL)
            continue;
        if (mcp_buf_append(&s->ebuf, chunk, (size_t)n) != 0) {
            mcp_buf_reset(&s->ebuf);
            continue;
        }
        for (;;) {
            char *head = mcp_buf_head(&s->ebuf);
            char *nl = memchr(head, '\n', s->ebuf.len);
            size_t len = nl ? (size_t)(nl - head) : s->ebuf.len;
            if (nl == NULL && len < STDERR_LINE_MAX)
                break;
            emit_stderr(s, head, len);
            mcp_buf_consume(&s->ebuf, nl ? len + 1 : len);
            if (s->fd_err < 0)
                break;
        }
        if (s->fd_err < 0)
            break;
    }
    s->busy--;
    release_buffers(s);
    mcp_transport_unref(&s->base);
}

static void on_stdin_writable(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    mcp_stdio *s = w->data;
    (void)events;
    while (s->wbuf.len > 0) {
        ssize_t n = write(s->fd_in, mcp_buf_head(&s->wbuf), s->wbuf.len);
        if (n > 0) {
            s->written += (size_t)n;
            mcp_buf_consume(&s->wbuf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        mcp_buf_reset(&s->wbuf);
        mcp_watch_stop(loop, w);
        lose_soon(s, "the server's stdin is closed");
        return;
    }
    mcp_watch_stop(loop, w);
}

static int stdio_send(mcp_transport *t, const char *msg, size_t len, const mcp_send_info *info,
                      char *err, size_t errlen)
{
    mcp_stdio *s = (mcp_stdio *)t;
    (void)info;
    size_t done = 0, total = len + 1;
    if (!s->started || s->closing || s->fd_in < 0) {
        snprintf(err, errlen, "stdio transport is %s", s->started ? "closed" : "not started");
        return -1;
    }
    s->sent_any = 1;
    /* The server is going: the message is dropped and what waits fails with the close. */
    if (s->lose_pending)
        return 0;
    if (s->wbuf.len == 0) {
        /* Fast path: straight from the caller's buffer, message and newline in one call. */
        struct iovec iov[2];
        ssize_t n;
        iov[0].iov_base = (void *)msg;
        iov[0].iov_len = len;
        iov[1].iov_base = (void *)"\n";
        iov[1].iov_len = 1;
        do
            n = writev(s->fd_in, iov, 2);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EPIPE) {
            lose_soon(s, "the server's stdin is closed");
            return 0;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            snprintf(err, errlen, "writing to the server failed: %s", strerror(errno));
            return -1;
        }
        done = n > 0 ? (size_t)n : 0;
        s->written += done;
        if (done == total)
            return 0;
    }
    /* Bounded: a server that never reads its stdin must not grow the client without limit.
     * One message always fits an empty queue, whatever its size. */
    if (s->wbuf.len > 0 && s->wbuf.len + (total - done) > s->cfg.max_write_queue) {
        snprintf(err, errlen,
                 "stdio: the server is not reading its stdin (%zu bytes already queued, "
                 "max_write_queue %zu); the message is not sent",
                 s->wbuf.len, s->cfg.max_write_queue);
        return -1;
    }
    if (done < len) {
        if (mcp_buf_append(&s->wbuf, msg + done, len - done) != 0 ||
            mcp_buf_append(&s->wbuf, "\n", 1) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    } else if (mcp_buf_append(&s->wbuf, "\n", 1) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (mcp_watch_set(t->loop, &s->w_in, MCP_EV_WRITE) != 0) {
        snprintf(err, errlen, "cannot watch the server's stdin: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* A start on a helper thread is done (child.h: on_started). */
static void on_child_started(mcp_child *c, void *owner, const char *why)
{
    mcp_stdio *s = owner;
    mcp_stdio_started_cb cb = s->started_cb;
    (void)c;
    s->started_cb = NULL;
    if (why == NULL && s->closing)
        why = "the transport was closed while the server was starting";
    if (cb != NULL)
        cb(s->started_ctx, why);
}

static int start_server(mcp_transport *t, int background, char *err, size_t errlen)
{
    mcp_stdio *s = (mcp_stdio *)t;
    mcp_spawn_opts o;
    int fds[3];
    if (s->started) {
        snprintf(err, errlen, "stdio transport already started");
        return -1;
    }
    o.command = s->cfg.command;
    o.argv = s->cfg.argv;
    o.envp = s->cfg.envp;
    o.cwd = s->cfg.cwd;
    o.stderr_mode = s->cfg.stderr_mode;
    o.sandbox = s->cfg.sandbox;
    o.background = background;
    if (mcp_child_spawn(t->loop, &o, &s->child, fds, err, errlen) != 0)
        return -1;
    s->started = 1;
    mcp_child_set_owner(s->child, s, on_child_exit, on_child_started);
    s->fd_in = fds[0];
    s->fd_out = fds[1];
    s->fd_err = fds[2];
    mcp_watch_init(&s->w_in, s->fd_in, on_stdin_writable, s);
    mcp_watch_init(&s->w_out, s->fd_out, on_stdout, s);
    mcp_watch_init(&s->w_err, s->fd_err, on_stderr, s);
    if (mcp_watch_set(t->loop, &s->w_out, MCP_EV_READ) != 0 ||
        (s->fd_err >= 0 && mcp_watch_set(t->loop, &s->w_err, MCP_EV_READ) != 0)) {
        snprintf(err, errlen, "cannot watch the server's pipes: %s", strerror(errno));
        stdio_close(t);
        return -1;
    }
    return 0;
}

static int stdio_start(mcp_transport *t, char *err, size_t errlen)
{
    return start_server(t, 0, err, errlen);
}

int mcp_stdio_start_background(mcp_transport *t, char *err, size_t errlen)
{
    return start_server(t, 1, err, errlen);
}

void mcp_stdio_on_started(mcp_transport *t, mcp_stdio_started_cb cb, void *ctx)
{
    mcp_stdio *s = (mcp_stdio *)t;
    s->started_cb = cb;
    s->started_ctx = ctx;
}

static int stdio_is_open(mcp_transport *t)
{
    mcp_stdio *s = (mcp_stdio *)t;
    return s->started && !s->closing;
}

static void stdio_destroy(mcp_transport *t)
{
    mcp_stdio *s = (mcp_stdio *)t;
    mcp_loop *loop = t->loop;
    t->sink = NULL;
    stdio_close(t);
    if (s->child != NULL)
        mcp_child_detach(s->child);
    mcp_framer_free(&s->fr);
    mcp_buf_free(&s->wbuf);
    mcp_buf_free(&s->ebuf);
    mcp_stdio_config_free(&s->cfg);
    free(s);
    mcp_loop_unref(loop);
}

static const mcp_transport_vt stdio_vt = {
    "stdio", stdio_start, stdio_send, NULL, stdio_close, stdio_is_open, stdio_destroy,
};

void mcp_stdio_config_free(mcp_stdio_config *cfg)
{
    char **p;
    free(cfg->command);
    free(cfg->cwd);
    for (p = cfg->argv; p && *p; p++)
        free(*p);
    free(cfg->argv);
    for (p = cfg->envp; p && *p; p++)
        free(*p);
    free(cfg->envp);
    mcp_sandbox_free(cfg->sandbox);
    memset(cfg, 0, sizeof *cfg);
}

mcp_transport *mcp_stdio_new(mcp_loop *loop, mcp_stdio_config *cfg)
{
    mcp_stdio *s = calloc(1, sizeof *s);
    if (s == NULL) {
        mcp_stdio_config_free(cfg);
        return NULL;
    }
    s->base.vt = &stdio_vt;
    s->base.refs = 1;
    s->base.loop = loop;
    mcp_loop_ref(loop);
    s->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    if (s->cfg.max_message == 0)
        s->cfg.max_message = MCP_STDIO_DEFAULT_MAX_MESSAGE;
    if (s->cfg.max_write_queue == 0)
        s->cfg.max_write_queue = MCP_STDIO_DEFAULT_MAX_WRITE_QUEUE;
    s->fd_in = s->fd_out = s->fd_err = -1;
    s->fd_in_queued = -1;
    mcp_framer_init(&s->fr, s->cfg.max_message);
    mcp_buf_init(&s->wbuf);
    mcp_buf_init(&s->ebuf);
    mcp_timer_init(&s->lose_timer, on_lose_timer, s);
    return &s->base;
}

void mcp_stdio_on_stderr(mcp_transport *t, mcp_stderr_cb cb, void *ctx)
{
    mcp_stdio *s = (mcp_stdio *)t;
    s->stderr_cb = cb;
    s->stderr_ctx = ctx;
}

pid_t mcp_stdio_pid(mcp_transport *t)
{
    mcp_stdio *s = (mcp_stdio *)t;
    if (s->child != NULL && s->child->job != NULL)
        mcp_child_settle(s->child);
    return s->child ? s->child->pid : 0;
}

int mcp_stdio_reaped(mcp_transport *t)
{
    mcp_stdio *s = (mcp_stdio *)t;
    return s->child == NULL ? !s->started : s->child->exited;
}

void mcp_stdio_describe_exit(mcp_transport *t, char *out, size_t outlen)
{
    mcp_stdio *s = (mcp_stdio *)t;
    if (s->child == NULL)
        snprintf(out, outlen, "was never started");
    else
        mcp_child_describe(s->child, out, outlen);
}
