/* The event loop: one per Lua state. It owns the readiness of every fd and every timer of every
 * client and transport; epoll on Linux (its fd is the one pollable fd a host waits on), poll(2)
 * elsewhere. Callbacks run inside mcp_loop_run_once, i.e. inside the Lua call `core.step`.
 * It knows no transport and no Lua: modules keep their per-loop state in hooks, and the host
 * passes what callbacks need (the Lua binding: its lua_State) as the dispatch context. */
#ifndef MCP_LOOP_H
#define MCP_LOOP_H

#include <stddef.h>
#include <stdint.h>

#define MCP_EV_READ 1u
#define MCP_EV_WRITE 2u
#define MCP_EV_HUP 4u /* hang-up or error: reported with READ so readers see EOF */

typedef struct mcp_loop mcp_loop;
typedef struct mcp_watch mcp_watch;
typedef struct mcp_timer mcp_timer;
typedef void (*mcp_io_cb)(mcp_loop *loop, mcp_watch *w, unsigned events);
typedef void (*mcp_timer_cb)(mcp_loop *loop, mcp_timer *t);

struct mcp_watch {
    int fd;
    unsigned events; /* MCP_EV_READ | MCP_EV_WRITE wanted */
    int active;
    int weak;    /* does not keep the loop alive (mcp_watch_weaken) */
    size_t slot; /* poll backend: index in the watch array */
    mcp_io_cb cb;
    void *data;
};

struct mcp_timer {
    uint64_t deadline; /* monotonic ms */
    uint64_t seq;      /* FIFO among equal deadlines */
    size_t heap_index;
    int active;
    int weak; /* does not keep the loop alive (mcp_timer_weaken) */
    mcp_timer_cb cb;
    void *data;
};

/* The loop is reference counted: the Lua state's loop userdata holds one reference, and so does
 * every transport, session and child that points at it, so none of them outlives it. */
mcp_loop *mcp_loop_new(void);
void mcp_loop_ref(mcp_loop *loop);
void mcp_loop_unref(mcp_loop *loop);
/* The host is closing: run every hook's shutdown, in the order they were added (blocking,
 * bounded: the child hook stops and reaps every child still alive). */
void mcp_loop_shutdown(mcp_loop *loop);

/* Per-loop state of a module (child.c keeps its list of children here), found by key (the
 * address of something of the module's own). shutdown (may be NULL) runs in mcp_loop_shutdown;
 * release (may be NULL) when the loop is freed. Returns 0, or -1 when out of memory or when key
 * already has a hook. */
typedef void (*mcp_loop_hook_fn)(mcp_loop *loop, void *data);
int mcp_loop_add_hook(mcp_loop *loop, const void *key, void *data, mcp_loop_hook_fn shutdown,
                      mcp_loop_hook_fn release);
/* The data of key's hook, or NULL. */
void *mcp_loop_hook_data(mcp_loop *loop, const void *key);

void mcp_watch_init(mcp_watch *w, int fd, mcp_io_cb cb, void *data);
/* Set the wanted events (0 stops watching). Returns 0 or -1 with errno. */
int mcp_watch_set(mcp_loop *loop, mcp_watch *w, unsigned events);
void mcp_watch_stop(mcp_loop *loop, mcp_watch *w);
/* A weak watch still reports its events but does not count for mcp_loop_alive: an idle socket
 * kept registered for its next use must not keep a host's loop running (or hide a deadlock). */
void mcp_watch_weaken(mcp_loop *loop, mcp_watch *w, int weak);

void mcp_timer_init(mcp_timer *t, mcp_timer_cb cb, void *data);
/* (Re)arm to fire once after ms milliseconds. Returns 0 or -1 (out of memory). A timer armed by
 * a timer callback runs in a later round, even with ms 0. */
int mcp_timer_start(mcp_loop *loop, mcp_timer *t, uint64_t ms);
void mcp_timer_stop(mcp_loop *loop, mcp_timer *t);
/* A weak timer still fires in a round that waits for it (a bounded wait, or one that something
 * else keeps alive) but does not count for mcp_loop_alive: a retry in the background must not
 * keep a run going (or hide a deadlock). */
void mcp_timer_weaken(mcp_loop *loop, mcp_timer *t, int weak);

uint64_t mcp_now_ms(void);
/* The same clock in microseconds. */
uint64_t mcp_now_us(void);

/* Milliseconds until the next timer (0 if one is due), or -1 when no timer is armed. */
int64_t mcp_loop_next_timeout(mcp_loop *loop);
/* Wait up to timeout_ms (-1: until something happens) and dispatch what is ready.
 * Returns the number of callbacks run, or -1 with errno on a poll failure. With -1 and nothing
 * alive it returns 0 at once: weak watches and weak timers (even a due one) do not run then. */
int mcp_loop_run_once(mcp_loop *loop, int64_t timeout_ms);
/* End the round running now, as mcp_loop_run_once does when it returns: not dispatching, no
 * budget. For a host whose callback left mcp_loop_run_once without returning (the Lua binding's
 * callbacks may raise: a longjmp out of the round): it ends the round it caught. Nothing of the round is lost: a watch's event not yet
 * dispatched is reported again by the next round (level-triggered), a timer due and not yet
 * run fires in it; the timer whose callback raised was stopped before its call (one-shot). */
void mcp_loop_end_round(mcp_loop *loop);
/* Something to wait for: an active watch or timer that is not weak. */
int mcp_loop_alive(mcp_loop *loop);
/* The pollable fd (epoll) or -1 when the backend has none. */
int mcp_loop_fd(mcp_loop *loop);

/* Bound the work of each round's callbacks to budget_us microseconds from the end of its wait
 * (0: unbounded, the default). A callback that can split its work (a large message's decoding)
 * stops at mcp_loop_deadline and carries on in a later round (a timer of 0 ms). */
void mcp_loop_set_budget(mcp_loop *loop, uint64_t budget_us);
/* The mcp_now_us time the round running now should be done by, or 0 when it is unbounded. */
uint64_t mcp_loop_deadline(mcp_loop *loop);

/* What the host set for the callbacks of the dispatch running now (NULL outside one). */
void *mcp_loop_context(mcp_loop *loop);
void mcp_loop_set_context(mcp_loop *loop, void *ctx);

#endif
