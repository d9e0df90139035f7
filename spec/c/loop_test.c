/* Unit test of the event loop alone (src/loop.c): no Lua, no transport, no libcurl.
 * Built and run by `make test-c` (part of `make test`), once per backend (epoll, and poll(2)
 * with -DMCP_LOOP_POLL). Exits 0 when every check passes; prints each failure. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

static int failures, checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

/* ---- timers ---------------------------------------------------------------------------------- */

typedef struct fired {
    int order[8];
    int n;
} fired;

typedef struct tagged {
    mcp_timer t;
    fired *log;
    int tag;
} tagged;

static void on_tagged(mcp_loop *loop, mcp_timer *t)
{
    tagged *x = t->data;
    (void)loop;
    if (x->log->n < 8)
        x->log->order[x->log->n++] = x->tag;
}

/* Rounds until nothing is left; one check, whatever the number of rounds (a loaded machine
 * wakes late and fires several deadlines in one round: the count of checks stays the same). */
static void run_until_idle(mcp_loop *loop)
{
    int guard = 0, ok = 1;
    while (mcp_loop_alive(loop) && guard++ < 1000)
        if (mcp_loop_run_once(loop, -1) < 0)
            ok = 0;
    CHECK(ok && !mcp_loop_alive(loop));
}

/* Wait (without the loop) until every timer armed before now + ms is due. */
static void pass_ms(uint64_t ms)
{
    struct timespec tick = {0, 1000000};
    uint64_t until = mcp_now_ms() + ms;
    while (mcp_now_ms() <= until)
        nanosleep(&tick, NULL);
}

static void test_timer_order(void)
{
    mcp_loop *loop = mcp_loop_new();
    fired log;
    tagged a, b, c, d;
    memset(&log, 0, sizeof log);
    a.log = b.log = c.log = d.log = &log;
    a.tag = 1, b.tag = 2, c.tag = 3, d.tag = 4;
    mcp_timer_init(&a.t, on_tagged, &a);
    mcp_timer_init(&b.t, on_tagged, &b);
    mcp_timer_init(&c.t, on_tagged, &c);
    mcp_timer_init(&d.t, on_tagged, &d);
    CHECK(!mcp_loop_alive(loop));
    CHECK(mcp_loop_next_timeout(loop) == -1);
    CHECK(mcp_loop_run_once(loop, -1) == 0); /* nothing could wake it: returns at once */
    /* deadlines 30, 10, 20 ms and a stopped one: fired by deadline, the stopped never */
    CHECK(mcp_timer_start(loop, &a.t, 30) == 0);
    CHECK(mcp_timer_start(loop, &b.t, 10) == 0);
    CHECK(mcp_timer_start(loop, &c.t, 20) == 0);
    CHECK(mcp_timer_start(loop, &d.t, 5) == 0);
    mcp_timer_stop(loop, &d.t);
    CHECK(mcp_loop_alive(loop));
    CHECK(mcp_loop_next_timeout(loop) >= 0);
    run_until_idle(loop);
    CHECK(log.n == 3);
    CHECK(log.order[0] == 2 && log.order[1] == 3 && log.order[2] == 1);
    /* all three due before the round (as after a late wake-up): one round fires them by deadline */
    log.n = 0;
    CHECK(mcp_timer_start(loop, &a.t, 30) == 0);
    CHECK(mcp_timer_start(loop, &b.t, 10) == 0);
    CHECK(mcp_timer_start(loop, &c.t, 20) == 0);
    pass_ms(30);
    CHECK(mcp_loop_run_once(loop, 0) == 3);
    CHECK(log.n == 3 && log.order[0] == 2 && log.order[1] == 3 && log.order[2] == 1);
    /* equal deadlines fire in the order they were armed; re-arming moves one to the back */
    log.n = 0;
    mcp_timer_start(loop, &a.t, 0);
    mcp_timer_start(loop, &b.t, 0);
    mcp_timer_start(loop, &c.t, 0);
    mcp_timer_start(loop, &a.t, 0);
    CHECK(mcp_loop_next_timeout(loop) == 0);
    run_until_idle(loop);
    CHECK(log.n == 3);
    CHECK(log.order[0] == 2 && log.order[1] == 3 && log.order[2] == 1);
    CHECK(!mcp_loop_alive(loop));
    mcp_loop_unref(loop);
}

/* A timer re-armed (ms >= 1) from its own callback runs in a later round, not the same one. */
typedef struct rearm {
    mcp_timer t;
    int runs;
} rearm;

static void on_rearm(mcp_loop *loop, mcp_timer *t)
{
    rearm *r = t->data;
    if (++r->runs < 3)
        mcp_timer_start(loop, t, 1);
}

static void test_timer_rearm(void)
{
    mcp_loop *loop = mcp_loop_new();
    rearm r;
    int rounds = 0, one_each = 1;
    memset(&r, 0, sizeof r);
    mcp_timer_init(&r.t, on_rearm, &r);
    mcp_timer_start(loop, &r.t, 0);
    while (mcp_loop_alive(loop) && rounds < 100) {
        int n = mcp_loop_run_once(loop, -1);
        if (n < 0 || n > 1)
            one_each = 0;
        rounds++;
    }
    CHECK(one_each); /* (one check however many rounds the waits took) */
    CHECK(r.runs == 3);
    mcp_loop_unref(loop);
}

/* A weak timer (a retry in the background) does not keep the loop alive: a wait until something
 * happens with nothing else alive returns at once and does not run it, even when it is due; a
 * bounded wait runs it, and so does a wait that a strong timer keeps alive. Weakening twice counts
 * once; re-arming, stopping and making it strong again keep the count right. */
static void test_weak_timer(void)
{
    mcp_loop *loop = mcp_loop_new();
    fired log;
    tagged w, s;
    memset(&log, 0, sizeof log);
    w.log = s.log = &log;
    w.tag = 1, s.tag = 2;
    mcp_timer_init(&w.t, on_tagged, &w);
    mcp_timer_init(&s.t, on_tagged, &s);
    mcp_timer_weaken(loop, &w.t, 1);
    mcp_timer_weaken(loop, &w.t, 1);
    CHECK(mcp_timer_start(loop, &w.t, 0) == 0);
    CHECK(!mcp_loop_alive(loop));
    CHECK(mcp_loop_next_timeout(loop) == 0); /* a host loop still learns when it is due */
    CHECK(mcp_loop_run_once(loop, -1) == 0 && log.n == 0);
    CHECK(mcp_loop_run_once(loop, 0) == 1 && log.n == 1 && log.order[0] == 1);
    CHECK(!mcp_loop_alive(loop));
    /* the strong timer keeps the wait alive: the weak one, due first, fires first */
    log.n = 0;
    mcp_timer_start(loop, &w.t, 1);
    mcp_timer_start(loop, &s.t, 20);
    CHECK(mcp_loop_alive(loop));
    run_until_idle(loop);
    CHECK(log.n == 2 && log.order[0] == 1 && log.order[1] == 2);
    /* the count */
    mcp_timer_start(loop, &w.t, 50);
    mcp_timer_start(loop, &w.t, 50);
    CHECK(!mcp_loop_alive(loop));
    mcp_timer_weaken(loop, &w.t, 0);
    CHECK(mcp_loop_alive(loop));
    mcp_timer_weaken(loop, &w.t, 1);
    CHECK(!mcp_loop_alive(loop));
    mcp_timer_start(loop, &s.t, 50);
    CHECK(mcp_loop_alive(loop));
    mcp_timer_stop(loop, &s.t);
    CHECK(!mcp_loop_alive(loop));
    mcp_timer_stop(loop, &w.t);
    mcp_timer_weaken(loop, &w.t, 0);
    CHECK(!mcp_loop_alive(loop)); /* strong but stopped */
    CHECK(mcp_loop_next_timeout(loop) == -1);
    mcp_loop_unref(loop);
}

/* ---- fd watches -------------------------------------------------------------------------------- */

typedef struct reader {
    mcp_watch w;
    struct reader *other; /* stopped by this one's callback, when set */
    unsigned events;
    int calls;
} reader;

static void on_readable(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    reader *r = w->data;
    r->calls++;
    r->events = events;
    if (r->other != NULL)
        mcp_watch_stop(loop, &r->other->w);
    mcp_watch_stop(loop, w);
}

static void test_watch(void)
{
    mcp_loop *loop = mcp_loop_new();
    int p[2];
    reader r;
    memset(&r, 0, sizeof r);
    CHECK(pipe(p) == 0);
    mcp_watch_init(&r.w, p[0], on_readable, &r);
    CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
    CHECK(mcp_loop_alive(loop));
    CHECK(mcp_loop_run_once(loop, 0) == 0); /* nothing to read yet */
    CHECK(r.calls == 0);
    CHECK(write(p[1], "x", 1) == 1);
    CHECK(mcp_loop_run_once(loop, -1) == 1);
    CHECK(r.calls == 1);
    CHECK(r.events & MCP_EV_READ);
    CHECK(!(r.events & MCP_EV_HUP));
    CHECK(!mcp_loop_alive(loop)); /* the callback stopped its watch */
    /* hang-up: reported as READ | HUP so a reader sees EOF */
    memset(&r, 0, sizeof r);
    mcp_watch_init(&r.w, p[0], on_readable, &r);
    mcp_watch_set(loop, &r.w, MCP_EV_READ);
    close(p[1]);
    {
        char c;
        CHECK(read(p[0], &c, 1) == 1);
    }
    CHECK(mcp_loop_run_once(loop, -1) == 1);
    CHECK((r.events & (MCP_EV_READ | MCP_EV_HUP)) == (MCP_EV_READ | MCP_EV_HUP));
    close(p[0]);
    mcp_loop_unref(loop);
}

/* A weak watch (an idle socket kept registered) still gets its events but does not keep the loop
 * alive; made strong again, it does, and weakening twice counts once. */
static void test_weak_watch(void)
{
    mcp_loop *loop = mcp_loop_new();
    int p[2];
    reader r;
    memset(&r, 0, sizeof r);
    CHECK(pipe(p) == 0);
    mcp_watch_init(&r.w, p[0], on_readable, &r);
    CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
    mcp_watch_weaken(loop, &r.w, 1);
    mcp_watch_weaken(loop, &r.w, 1);
    CHECK(!mcp_loop_alive(loop));
    mcp_watch_weaken(loop, &r.w, 0);
    CHECK(mcp_loop_alive(loop));
    mcp_watch_weaken(loop, &r.w, 1);
    CHECK(!mcp_loop_alive(loop));
    CHECK(write(p[1], "x", 1) == 1);
    CHECK(mcp_loop_run_once(loop, 0) == 1); /* weak, and still reported */
    CHECK(r.calls == 1);
    CHECK(!mcp_loop_alive(loop)); /* stopped while weak: the count did not go below zero */
    mcp_watch_weaken(loop, &r.w, 0);
    CHECK(!mcp_loop_alive(loop)); /* strong but stopped */
    CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
    CHECK(mcp_loop_alive(loop));
    mcp_watch_stop(loop, &r.w);
    CHECK(!mcp_loop_alive(loop));
    /* weakened before it is set: set does not count it */
    mcp_watch_weaken(loop, &r.w, 1);
    CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
    CHECK(!mcp_loop_alive(loop));
    mcp_watch_stop(loop, &r.w);
    mcp_watch_weaken(loop, &r.w, 0);
    CHECK(!mcp_loop_alive(loop));
    close(p[0]);
    close(p[1]);
    mcp_loop_unref(loop);
}

/* A watch stopped by another callback of the same round does not see that round's event. */
static void test_stop_during_dispatch(void)
{
    mcp_loop *loop = mcp_loop_new();
    int p1[2], p2[2];
    reader a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK(pipe(p1) == 0 && pipe(p2) == 0);
    mcp_watch_init(&a.w, p1[0], on_readable, &a);
    mcp_watch_init(&b.w, p2[0], on_readable, &b);
    a.other = &b;
    b.other = &a;
    mcp_watch_set(loop, &a.w, MCP_EV_READ);
    mcp_watch_set(loop, &b.w, MCP_EV_READ);
    CHECK(write(p1[1], "x", 1) == 1 && write(p2[1], "y", 1) == 1);
    CHECK(mcp_loop_run_once(loop, -1) == 1); /* whichever ran first stopped the other */
    CHECK(a.calls + b.calls == 1);
    CHECK(!mcp_loop_alive(loop));
    close(p1[0]), close(p1[1]), close(p2[0]), close(p2[1]);
    mcp_loop_unref(loop);
}

/* ---- a callback that leaves the round without returning ------------------------------------ */

typedef struct escaper {
    mcp_watch w;
    mcp_timer t;
    jmp_buf *out;
    int calls;
} escaper;

static void on_escape_watch(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    escaper *x = w->data;
    (void)loop;
    (void)events;
    x->calls++;
    longjmp(*x->out, 1); /* as lua_error does out of a Lua binding's callback */
}

static void on_escape_timer(mcp_loop *loop, mcp_timer *t)
{
    escaper *x = t->data;
    (void)loop;
    x->calls++;
    longjmp(*x->out, 1);
}

/* A round left by a longjmp (a Lua error) and ended with mcp_loop_end_round: the loop is usable,
 * nothing of the round is lost: the other watch's event comes in the next round, the timers
 * due after the one that escaped fire then, and the one that escaped does not fire again. */
static void test_escape(void)
{
    mcp_loop *loop = mcp_loop_new();
    jmp_buf out;
    int p[2];
    volatile int jumped = 0;
    escaper e;
    reader r;
    tagged later;
    fired log;
    memset(&e, 0, sizeof e);
    memset(&r, 0, sizeof r);
    memset(&log, 0, sizeof log);
    e.out = &out;
    CHECK(pipe(p) == 0);
    mcp_watch_init(&r.w, p[0], on_readable, &r);
    CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
    mcp_timer_init(&e.t, on_escape_timer, &e);
    later.log = &log;
    later.tag = 2;
    mcp_timer_init(&later.t, on_tagged, &later);
    CHECK(mcp_timer_start(loop, &e.t, 0) == 0);
    CHECK(mcp_timer_start(loop, &later.t, 0) == 0); /* due with it, after it */
    CHECK(write(p[1], "x", 1) == 1);
    pass_ms(1);
    mcp_loop_set_budget(loop, 1000000);
    /* the timer escapes: the watch's event ran, `later` did not */
    if (setjmp(out) == 0)
        mcp_loop_run_once(loop, 0);
    else
        jumped = 1;
    CHECK(jumped && e.calls == 1 && r.calls == 1 && log.n == 0);
    CHECK(mcp_loop_deadline(loop) != 0); /* the round was left running */
    mcp_loop_end_round(loop);
    CHECK(mcp_loop_deadline(loop) == 0);
    CHECK(!e.t.active && later.t.active && mcp_loop_alive(loop));
    CHECK(mcp_loop_run_once(loop, 0) == 1); /* `later` fires; the timer that escaped does not */
    CHECK(log.n == 1 && log.order[0] == 2 && e.calls == 1);
    /* a watch escapes before the rest of its round: the other watch's event comes next round */
    memset(&r, 0, sizeof r);
    mcp_watch_init(&r.w, p[0], on_readable, &r);
    mcp_watch_init(&e.w, p[0], on_escape_watch, &e);
    {
        int q[2];
        char c;
        CHECK(pipe(q) == 0);
        CHECK(read(p[0], &c, 1) == 1); /* (drained: the watches below see fresh events) */
        e.w.fd = q[0];
        CHECK(mcp_watch_set(loop, &e.w, MCP_EV_READ) == 0);
        CHECK(mcp_watch_set(loop, &r.w, MCP_EV_READ) == 0);
        CHECK(write(q[1], "e", 1) == 1 && write(p[1], "r", 1) == 1);
        jumped = 0;
        e.calls = 0;
        if (setjmp(out) == 0) {
            while (e.calls == 0)
                mcp_loop_run_once(loop, -1);
        } else {
            jumped = 1;
        }
        CHECK(jumped && e.calls == 1);
        mcp_loop_end_round(loop);
        mcp_watch_stop(loop, &e.w);
        if (r.calls == 0) /* it came after the escape in that round */
            CHECK(mcp_loop_run_once(loop, -1) == 1);
        CHECK(r.calls == 1 && !mcp_loop_alive(loop));
        close(q[0]), close(q[1]);
    }
    mcp_loop_set_budget(loop, 0);
    close(p[0]), close(p[1]);
    mcp_loop_unref(loop);
}

/* ---- hooks, context, fd ------------------------------------------------------------------------ */

typedef struct hook_log {
    char seq[16];
    int n;
} hook_log;

static void hook_a(mcp_loop *loop, void *data)
{
    (void)loop;
    ((hook_log *)data)->seq[((hook_log *)data)->n++] = 'a';
}

static void hook_b(mcp_loop *loop, void *data)
{
    (void)loop;
    ((hook_log *)data)->seq[((hook_log *)data)->n++] = 'b';
}

static void release_r(mcp_loop *loop, void *data)
{
    (void)loop;
    ((hook_log *)data)->seq[((hook_log *)data)->n++] = 'r';
}

static void test_hooks(void)
{
    static const char key_a = 0, key_b = 0, key_c = 0;
    mcp_loop *loop = mcp_loop_new();
    hook_log log;
    int ctx = 42;
    memset(&log, 0, sizeof log);
    CHECK(mcp_loop_hook_data(loop, &key_a) == NULL);
    CHECK(mcp_loop_add_hook(loop, &key_a, &log, hook_a, NULL) == 0);
    CHECK(mcp_loop_add_hook(loop, &key_b, &log, hook_b, release_r) == 0);
    CHECK(mcp_loop_add_hook(loop, &key_c, &log, NULL, NULL) == 0);
    CHECK(mcp_loop_add_hook(loop, &key_a, &log, hook_b, NULL) == -1); /* one per key */
    CHECK(mcp_loop_hook_data(loop, &key_b) == &log);
    mcp_loop_shutdown(loop);
    CHECK(log.n == 2 && memcmp(log.seq, "ab", 2) == 0); /* in the order added */
    CHECK(mcp_loop_context(loop) == NULL);
    mcp_loop_set_context(loop, &ctx);
    CHECK(mcp_loop_context(loop) == &ctx);
#if defined(__linux__) && !defined(MCP_LOOP_POLL)
    CHECK(mcp_loop_fd(loop) >= 0);
#else
    CHECK(mcp_loop_fd(loop) == -1);
#endif
    mcp_loop_ref(loop);
    mcp_loop_unref(loop);
    CHECK(log.n == 2); /* still referenced: not freed */
    mcp_loop_unref(loop);
    CHECK(log.n == 3 && log.seq[2] == 'r'); /* released with the loop */
}

int main(void)
{
    test_timer_order();
    test_timer_rearm();
    test_weak_timer();
    test_watch();
    test_weak_watch();
    test_stop_during_dispatch();
    test_escape();
    test_hooks();
    printf("loop_test (%s): %d checks, %d failed\n",
#if defined(__linux__) && !defined(MCP_LOOP_POLL)
           "epoll",
#else
           "poll",
#endif
           checks, failures);
    return failures == 0 ? 0 : 1;
}
