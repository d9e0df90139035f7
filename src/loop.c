#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__) && !defined(MCP_LOOP_POLL)
#define MCP_LOOP_EPOLL 1
#include <sys/epoll.h>
#else
#include <poll.h>
#endif

#define MCP_LOOP_BATCH 64

typedef struct loop_hook {
    const void *key;
    void *data;
    mcp_loop_hook_fn shutdown, release;
    struct loop_hook *next;
} loop_hook;

struct mcp_loop {
#ifdef MCP_LOOP_EPOLL
    int epfd;
    struct epoll_event events[MCP_LOOP_BATCH];
#else
    mcp_watch **watches; /* slot -> watch */
    struct pollfd *pfds;
    size_t nwatches, capwatches;
    mcp_watch **ready; /* snapshot of the watches of one poll round */
#endif
    int refs;
    int dispatching;
    int nready, cursor; /* events of the current round, and the next one to run */
    size_t nactive;     /* active watches */
    mcp_timer **heap;
    size_t nheap, capheap;
    size_t nweak; /* weak timers in the heap */
    uint64_t seq;
    void *context;
    uint64_t budget_us, deadline_us; /* of each round, and of the round running now (0: none) */
    loop_hook *hooks;                /* in the order they were added */
};

uint64_t mcp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t mcp_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

mcp_loop *mcp_loop_new(void)
{
    mcp_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
#ifdef MCP_LOOP_EPOLL
    loop->refs = 1;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
#else
    loop->refs = 1;
#endif
    return loop;
}

void mcp_loop_ref(mcp_loop *loop) { loop->refs++; }

void mcp_loop_shutdown(mcp_loop *loop)
{
    loop_hook *h;
    for (h = loop->hooks; h != NULL; h = h->next)
        if (h->shutdown != NULL)
            h->shutdown(loop, h->data);
}

int mcp_loop_add_hook(mcp_loop *loop, const void *key, void *data, mcp_loop_hook_fn shutdown,
                      mcp_loop_hook_fn release)
{
    loop_hook **pp, *h;
    for (pp = &loop->hooks; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->key == key)
            return -1;
    h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    h->key = key;
    h->data = data;
    h->shutdown = shutdown;
    h->release = release;
    *pp = h;
    return 0;
}

void *mcp_loop_hook_data(mcp_loop *loop, const void *key)
{
    loop_hook *h;
    for (h = loop->hooks; h != NULL; h = h->next)
        if (h->key == key)
            return h->data;
    return NULL;
}

void mcp_loop_unref(mcp_loop *loop)
{
    if (loop == NULL || --loop->refs > 0)
        return;
    while (loop->hooks != NULL) {
        loop_hook *h = loop->hooks;
        loop->hooks = h->next;
        if (h->release != NULL)
            h->release(loop, h->data);
        free(h);
    }
#ifdef MCP_LOOP_EPOLL
    close(loop->epfd);
#else
    free(loop->watches);
    free(loop->pfds);
    free(loop->ready);
#endif
    free(loop->heap);
    free(loop);
}

void *mcp_loop_context(mcp_loop *loop) { return loop->context; }
void mcp_loop_set_context(mcp_loop *loop, void *ctx) { loop->context = ctx; }

void mcp_loop_set_budget(mcp_loop *loop, uint64_t budget_us) { loop->budget_us = budget_us; }
uint64_t mcp_loop_deadline(mcp_loop *loop) { return loop->deadline_us; }

/* A round's wait is over: its callbacks have the budget from now on. */
static void start_round(mcp_loop *loop)
{
    loop->deadline_us = loop->budget_us != 0 ? mcp_now_us() + loop->budget_us : 0;
    loop->dispatching = 1;
}

void mcp_loop_end_round(mcp_loop *loop)
{
    loop->dispatching = 0;
    loop->nready = loop->cursor = 0;
    loop->deadline_us = 0;
}

int mcp_loop_fd(mcp_loop *loop)
{
#ifdef MCP_LOOP_EPOLL
    return loop->epfd;
#else
    (void)loop;
    return -1;
#endif
}

int mcp_loop_alive(mcp_loop *loop) { return loop->nactive > 0 || loop->nheap > loop->nweak; }

/* ---- fd watches ------------------------------------------------------------------------- */

void mcp_watch_init(mcp_watch *w, int fd, mcp_io_cb cb, void *data)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->cb = cb;
    w->data = data;
}

/* A watch stopped while its round is being dispatched must not see the rest of that round. */
static void forget_pending_events(mcp_loop *loop, mcp_watch *w)
{
    int i;
    if (!loop->dispatching)
        return;
    for (i = loop->cursor; i < loop->nready; i++) {
#ifdef MCP_LOOP_EPOLL
        if (loop->events[i].data.ptr == w)
            loop->events[i].data.ptr = NULL;
#else
        if (loop->ready[i] == w)
            loop->ready[i] = NULL;
#endif
    }
}

#ifdef MCP_LOOP_EPOLL
int mcp_watch_set(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    struct epoll_event ev;
    if (events == 0) {
        mcp_watch_stop(loop, w);
        return 0;
    }
    if (w->active && w->events == events)
        return 0;
    memset(&ev, 0, sizeof ev);
    ev.events = ((events & MCP_EV_READ) ? EPOLLIN : 0) | ((events & MCP_EV_WRITE) ? EPOLLOUT : 0);
    ev.data.ptr = w;
    if (epoll_ctl(loop->epfd, w->active ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fd, &ev) != 0)
        return -1;
    if (!w->active && !w->weak)
        loop->nactive++;
    w->active = 1;
    w->events = events;
    return 0;
}

void mcp_watch_stop(mcp_loop *loop, mcp_watch *w)
{
    if (!w->active)
        return;
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->active = 0;
    w->events = 0;
    if (!w->weak)
        loop->nactive--;
    forget_pending_events(loop, w);
}
#else
int mcp_watch_set(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    if (events == 0) {
        mcp_watch_stop(loop, w);
        return 0;
    }
    if (!w->active) {
        if (loop->nwatches == loop->capwatches) {
            size_t ncap = loop->capwatches ? loop->capwatches * 2 : 16;
            mcp_watch **nw = realloc(loop->watches, ncap * sizeof *nw);
            struct pollfd *np;
            mcp_watch **nr;
            if (nw == NULL)
                return -1;
            loop->watches = nw;
            np = realloc(loop->pfds, ncap * sizeof *np);
            if (np == NULL)
                return -1;
            loop->pfds = np;
            nr = realloc(loop->ready, ncap * sizeof *nr);
            if (nr == NULL)
                return -1;
            loop->ready = nr;
            loop->capwatches = ncap;
        }
        w->slot = loop->nwatches++;
        loop->watches[w->slot] = w;
        if (!w->weak)
            loop->nactive++;
        w->active = 1;
    }
    w->events = events;
    return 0;
}

void mcp_watch_stop(mcp_loop *loop, mcp_watch *w)
{
    size_t last;
    if (!w->active)
        return;
    last = --loop->nwatches;
    if (w->slot != last) {
        loop->watches[w->slot] = loop->watches[last];
        loop->watches[w->slot]->slot = w->slot;
    }
    w->active = 0;
    w->events = 0;
    if (!w->weak)
        loop->nactive--;
    forget_pending_events(loop, w);
}
#endif

void mcp_watch_weaken(mcp_loop *loop, mcp_watch *w, int weak)
{
    weak = weak != 0;
    if (w->weak == weak)
        return;
    if (w->active) {
        if (weak)
            loop->nactive--;
        else
            loop->nactive++;
    }
    w->weak = weak;
}

/* ---- timers: a binary min-heap on (deadline, seq) ----------------------------------------- */

static int timer_less(const mcp_timer *a, const mcp_timer *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_place(mcp_loop *loop, size_t i, mcp_timer *t)
{
    loop->heap[i] = t;
    t->heap_index = i;
}

static void heap_up(mcp_loop *loop, size_t i)
{
    mcp_timer *t = loop->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_less(t, loop->heap[parent]))
            break;
        heap_place(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_place(loop, i, t);
}

static void heap_down(mcp_loop *loop, size_t i)
{
    mcp_timer *t = loop->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        mcp_timer *best = t;
        if (l < loop->nheap && timer_less(loop->heap[l], best)) {
            m = l;
            best = loop->heap[l];
        }
        if (r < loop->nheap && timer_less(loop->heap[r], best))
            m = r;
        if (m == i)
            break;
        heap_place(loop, i, loop->heap[m]);
        i = m;
    }
    heap_place(loop, i, t);
}

void mcp_timer_init(mcp_timer *t, mcp_timer_cb cb, void *data)
{
    memset(t, 0, sizeof *t);
    t->cb = cb;
    t->data = data;
}

void mcp_timer_stop(mcp_loop *loop, mcp_timer *t)
{
    size_t i;
    mcp_timer *last;
    if (!t->active)
        return;
    t->active = 0;
    if (t->weak)
        loop->nweak--;
    i = t->heap_index;
    last = loop->heap[--loop->nheap];
    if (i == loop->nheap)
        return;
    heap_place(loop, i, last);
    if (i > 0 && timer_less(last, loop->heap[(i - 1) / 2]))
        heap_up(loop, i);
    else
        heap_down(loop, i);
}

int mcp_timer_start(mcp_loop *loop, mcp_timer *t, uint64_t ms)
{
    mcp_timer_stop(loop, t);
    if (loop->nheap == loop->capheap) {
        size_t ncap = loop->capheap ? loop->capheap * 2 : 64;
        mcp_timer **nh = realloc(loop->heap, ncap * sizeof *nh);
        if (nh == NULL)
            return -1;
        loop->heap = nh;
        loop->capheap = ncap;
    }
    t->deadline = mcp_now_ms() + ms;
    t->seq = loop->seq++;
    t->active = 1;
    if (t->weak)
        loop->nweak++;
    heap_place(loop, loop->nheap++, t);
    heap_up(loop, loop->nheap - 1);
    return 0;
}

void mcp_timer_weaken(mcp_loop *loop, mcp_timer *t, int weak)
{
    weak = weak != 0;
    if (t->weak == weak)
        return;
    if (t->active) {
        if (weak)
            loop->nweak++;
        else
            loop->nweak--;
    }
    t->weak = weak;
}

int64_t mcp_loop_next_timeout(mcp_loop *loop)
{
    uint64_t now;
    if (loop->nheap == 0)
        return -1;
    now = mcp_now_ms();
    return loop->heap[0]->deadline <= now ? 0 : (int64_t)(loop->heap[0]->deadline - now);
}

static int run_timers(mcp_loop *loop)
{
    int n = 0;
    uint64_t now = mcp_now_ms(), seq_end = loop->seq;
    /* Timers armed by these callbacks run next round: their deadline is later than now, or
     * their seq (FIFO among equal deadlines) puts them after every timer due now. */
    while (loop->nheap > 0 && loop->heap[0]->deadline <= now && loop->heap[0]->seq < seq_end) {
        mcp_timer *t = loop->heap[0];
        mcp_timer_stop(loop, t);
        t->cb(loop, t);
        n++;
    }
    return n;
}

/* ---- one round ------------------------------------------------------------------------- */

static int64_t clamp_timeout(mcp_loop *loop, int64_t timeout_ms)
{
    int64_t next = mcp_loop_next_timeout(loop);
    if (next >= 0 && (timeout_ms < 0 || next < timeout_ms))
        timeout_ms = next;
    if (timeout_ms > 0x7fffffff)
        timeout_ms = 0x7fffffff;
    return timeout_ms;
}

#ifdef MCP_LOOP_EPOLL
int mcp_loop_run_once(mcp_loop *loop, int64_t timeout_ms)
{
    int n, i, ran = 0;
    if (timeout_ms < 0 && !mcp_loop_alive(loop))
        return 0; /* nothing could ever wake us (weak watches and timers are not waited for) */
    timeout_ms = clamp_timeout(loop, timeout_ms);
    do
        n = epoll_wait(loop->epfd, loop->events, MCP_LOOP_BATCH, (int)timeout_ms);
    while (n < 0 && errno == EINTR && timeout_ms == 0);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    start_round(loop);
    loop->nready = n;
    for (i = 0; i < n; i++) {
        mcp_watch *w = loop->events[i].data.ptr;
        unsigned ev = 0, e = loop->events[i].events;
        loop->cursor = i + 1;
        if (w == NULL)
            continue;
        if (e & (EPOLLIN | EPOLLHUP | EPOLLERR))
            ev |= MCP_EV_READ;
        if (e & EPOLLOUT)
            ev |= MCP_EV_WRITE;
        if (e & (EPOLLHUP | EPOLLERR))
            ev |= MCP_EV_HUP;
        w->cb(loop, w, ev);
        ran++;
    }
    loop->dispatching = 0;
    loop->nready = loop->cursor = 0;
    ran += run_timers(loop);
    mcp_loop_end_round(loop); /* callbacks outside a round are not bounded */
    return ran;
}
#else
int mcp_loop_run_once(mcp_loop *loop, int64_t timeout_ms)
{
    size_t i, n = loop->nwatches;
    int rc, ran = 0;
    if (timeout_ms < 0 && !mcp_loop_alive(loop))
        return 0;
    timeout_ms = clamp_timeout(loop, timeout_ms);
    for (i = 0; i < n; i++) {
        mcp_watch *w = loop->watches[i];
        loop->pfds[i].fd = w->fd;
        loop->pfds[i].events = (short)(((w->events & MCP_EV_READ) ? POLLIN : 0) |
                                       ((w->events & MCP_EV_WRITE) ? POLLOUT : 0));
        loop->pfds[i].revents = 0;
        loop->ready[i] = w;
    }
    rc = poll(loop->pfds, (nfds_t)n, (int)timeout_ms);
    if (rc < 0)
        return errno == EINTR ? 0 : -1;
    start_round(loop);
    loop->nready = (int)n;
    for (i = 0; i < n; i++) {
        mcp_watch *w = loop->ready[i];
        short re = loop->pfds[i].revents;
        unsigned ev = 0;
        loop->cursor = (int)i + 1;
        if (w == NULL || re == 0)
            continue;
        if (re & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
            ev |= MCP_EV_READ;
        if (re & POLLOUT)
            ev |= MCP_EV_WRITE;
        if (re & (POLLHUP | POLLERR | POLLNVAL))
            ev |= MCP_EV_HUP;
        w->cb(loop, w, ev);
        ran++;
    }
    loop->dispatching = 0;
    loop->nready = loop->cursor = 0;
    ran += run_timers(loop);
    mcp_loop_end_round(loop); /* callbacks outside a round are not bounded */
    return ran;
}
#endif
