#include "curl_loop.h"

#include "fdlimit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct mcp_curl {
    int refs;
    mcp_loop *loop;
    CURLM *multi;
    mcp_timer timer;
    mcp_xfer *dirty;          /* transfers with data to flush */
    int acting;               /* inside curl_multi_socket_action */
    struct sock_watch *owned; /* the sockets open_socket made and close_socket has not closed */
};

/* A socket's watch. One that open_socket made (owned) lives as long as its socket: when libcurl
 * stops wanting it (a finished transfer leaves its connection idle in the cache) the watch is
 * parked, still registered but weak, so the next request on that kept-alive connection costs no
 * epoll_ctl DEL and ADD. A parked socket that wakes (the server closed it) is unregistered then;
 * close_socket unregisters and frees the watch before the socket is closed, so a descriptor
 * number libcurl reuses is never mistaken for a registered one. */
typedef struct sock_watch {
    mcp_watch w;
    mcp_curl *c;
    struct sock_watch *next; /* in c->owned */
    int owned;
    int parked;
} sock_watch;

static void drive(mcp_curl *c, curl_socket_t fd, int ev_bitmask);

static void on_socket_ready(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    sock_watch *sw = w->data;
    int mask = 0;
    if (sw->parked) { /* idle: libcurl checks the connection itself before it reuses it */
        mcp_watch_stop(loop, w);
        return;
    }
    if (events & MCP_EV_READ)
        mask |= CURL_CSELECT_IN;
    if (events & MCP_EV_WRITE)
        mask |= CURL_CSELECT_OUT;
    if (events & MCP_EV_HUP)
        mask |= CURL_CSELECT_ERR;
    drive(sw->c, w->fd, mask);
}

/* CURLMOPT_SOCKETFUNCTION: curl tells which events it wants on which socket. */
static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    mcp_curl *c = userp;
    sock_watch *sw = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (sw != NULL) {
            curl_multi_assign(c->multi, fd, NULL);
            if (sw->owned) {
                sw->parked = 1;
                mcp_watch_weaken(c->loop, &sw->w, 1);
                return 0;
            }
            mcp_watch_stop(c->loop, &sw->w);
            free(sw);
        }
        return 0;
    }
    if (sw == NULL) {
        for (sw = c->owned; sw != NULL && sw->w.fd != (int)fd; sw = sw->next)
            ;
        if (sw == NULL) { /* not a socket of open_socket's (libcurl's own, e.g. a resolver's) */
            sw = calloc(1, sizeof *sw);
            if (sw == NULL)
                return -1;
            sw->c = c;
            mcp_watch_init(&sw->w, (int)fd, on_socket_ready, sw);
        }
        sw->parked = 0;
        mcp_watch_weaken(c->loop, &sw->w, 0);
        curl_multi_assign(c->multi, fd, sw);
    }
    mcp_watch_set(c->loop, &sw->w,
                  (what == CURL_POLL_IN || what == CURL_POLL_INOUT ? MCP_EV_READ : 0) |
                      (what == CURL_POLL_OUT || what == CURL_POLL_INOUT ? MCP_EV_WRITE : 0));
    return 0;
}

static void on_timer(mcp_loop *loop, mcp_timer *t)
{
    (void)loop;
    drive(t->data, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_TIMERFUNCTION: one timer for the whole multi handle. */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    mcp_curl *c = userp;
    (void)multi;
    if (timeout_ms < 0)
        mcp_timer_stop(c->loop, &c->timer);
    else
        mcp_timer_start(c->loop, &c->timer, (uint64_t)timeout_ms);
    return 0;
}

/* After libcurl returned: dispatch buffered data, then completions. Callbacks may start, stop
 * or free transfers, so each is taken off its list before it runs. */
static void after_action(mcp_curl *c)
{
    CURLMsg *msg;
    int left;
    mcp_curl_ref(c);
    while (c->dirty != NULL) {
        mcp_xfer *x = c->dirty;
        c->dirty = x->next_dirty;
        x->next_dirty = NULL;
        x->dirty = 0;
        x->ops->flush(x);
    }
    while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
        mcp_xfer *x = NULL;
        CURLcode rc = msg->data.result;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (x == NULL)
            continue;
        curl_multi_remove_handle(c->multi, x->easy);
        x->attached = 0;
        if (x->dirty) { /* done() delivers what is left itself */
            mcp_xfer **pp;
            for (pp = &c->dirty; *pp != NULL; pp = &(*pp)->next_dirty)
                if (*pp == x) {
                    *pp = x->next_dirty;
                    break;
                }
            x->dirty = 0;
            x->next_dirty = NULL;
        }
        x->ops->done(x, rc);
    }
    mcp_curl_unref(c);
}

static void drive(mcp_curl *c, curl_socket_t fd, int ev_bitmask)
{
    int running;
    c->acting = 1;
    curl_multi_socket_action(c->multi, fd, ev_bitmask, &running);
    c->acting = 0;
    after_action(c);
}

mcp_curl *mcp_curl_new(mcp_loop *loop)
{
    mcp_curl *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->multi = curl_multi_init();
    if (c->multi == NULL) {
        free(c);
        return NULL;
    }
    c->refs = 1;
    c->loop = loop;
    mcp_loop_ref(loop);
    mcp_timer_init(&c->timer, on_timer, c);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    return c;
}

void mcp_curl_ref(mcp_curl *c) { c->refs++; }

void mcp_curl_unref(mcp_curl *c)
{
    if (--c->refs > 0)
        return;
    mcp_timer_stop(c->loop, &c->timer);
    /* Every transfer is gone (each holds a reference); closing the cached connections goes
     * through close_socket, which frees their watches. */
    curl_multi_cleanup(c->multi);
    while (c->owned != NULL) { /* a socket libcurl did not close through close_socket */
        sock_watch *sw = c->owned;
        c->owned = sw->next;
        mcp_watch_stop(c->loop, &sw->w);
        free(sw);
    }
    mcp_loop_unref(c->loop);
    free(c);
}

static int new_socket(const struct curl_sockaddr *a)
{
    int fd;
#ifdef SOCK_CLOEXEC
    fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd >= 0 || errno != EINVAL)
        return fd;
#endif
    fd = socket(a->family, a->socktype, a->protocol);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

/* CURLOPT_OPENSOCKETFUNCTION: libcurl's sockets are close-on-exec from birth, so a server the
 * host spawns later (or at the same time, from another thread) never inherits a connection of
 * this client; a child could otherwise write requests on a live keep-alive connection. Out of
 * descriptors, the soft limit is raised toward the hard one first (fdlimit.h). A guarded
 * transfer gets no socket for an address its guard refuses (libcurl then tries the name's next
 * address, or fails with CURLE_COULDNT_CONNECT). */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    mcp_xfer *x = clientp;
    int fd;
    (void)purpose;
    if (x->guard != MCP_GUARD_NONE &&
        mcp_addr_refused(x->guard, mcp_addr_classify(&a->addr, a->addrlen))) {
        if (x->refused[0] == '\0')
            mcp_addr_format(&a->addr, a->addrlen, x->refused, sizeof x->refused);
        return CURL_SOCKET_BAD;
    }
    while ((fd = new_socket(a)) < 0 && x->curl != NULL && mcp_fdlimit_retry(x->curl->loop, errno))
        ;
    if (fd < 0) {
        x->socket_errno = errno;
        return CURL_SOCKET_BAD;
    }
    if (x->curl != NULL) {
        sock_watch *sw = calloc(1, sizeof *sw);
        if (sw != NULL) { /* (without it the socket's watch is made and freed per transfer) */
            sw->c = x->curl;
            sw->owned = 1;
            mcp_watch_init(&sw->w, fd, on_socket_ready, sw);
            sw->next = x->curl->owned;
            x->curl->owned = sw;
        }
    }
    return fd;
}

/* CURLOPT_CLOSESOCKETFUNCTION (clientp: the mcp_curl, which outlives every connection of its
 * multi handle): the socket's watch goes before the socket does. libcurl has already called
 * socket_cb with CURL_POLL_REMOVE for a socket it was watching. */
static int close_socket(void *clientp, curl_socket_t fd)
{
    mcp_curl *c = clientp;
    sock_watch **pp;
    for (pp = &c->owned; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->w.fd == (int)fd) {
            sock_watch *sw = *pp;
            *pp = sw->next;
            if (!sw->parked) /* still assigned: never let libcurl hand this pointer back */
                curl_multi_assign(c->multi, fd, NULL);
            mcp_watch_stop(c->loop, &sw->w);
            free(sw);
            break;
        }
    return close((int)fd);
}

int mcp_xfer_init(mcp_xfer *x, mcp_curl *c, const mcp_xfer_ops *ops, void *owner)
{
    memset(x, 0, sizeof *x);
    x->easy = curl_easy_init();
    if (x->easy == NULL)
        return -1;
    x->ops = ops;
    x->owner = owner;
    x->curl = c;
    mcp_curl_ref(c);
    curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(x->easy, CURLOPT_OPENSOCKETDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    curl_easy_setopt(x->easy, CURLOPT_CLOSESOCKETDATA, c);
    return 0;
}

int mcp_xfer_start(mcp_xfer *x)
{
    if (curl_multi_add_handle(x->curl->multi, x->easy) != CURLM_OK)
        return -1;
    x->attached = 1;
    x->socket_errno = 0;
    return 0;
}

mcp_loop *mcp_curl_loop(mcp_curl *c) { return c->loop; }

static void unlink_dirty(mcp_curl *c, mcp_xfer *x)
{
    mcp_xfer **pp;
    if (!x->dirty)
        return;
    for (pp = &c->dirty; *pp != NULL; pp = &(*pp)->next_dirty)
        if (*pp == x) {
            *pp = x->next_dirty;
            break;
        }
    x->dirty = 0;
    x->next_dirty = NULL;
}

void mcp_xfer_abort(mcp_xfer *x, CURLcode rc)
{
    mcp_curl *c = x->curl;
    if (c == NULL || !x->attached)
        return;
    mcp_curl_ref(c);
    curl_multi_remove_handle(c->multi, x->easy);
    x->attached = 0;
    unlink_dirty(c, x); /* done() delivers what is left itself */
    x->ops->done(x, rc);
    mcp_curl_unref(c);
}

void mcp_xfer_mark_dirty(mcp_xfer *x)
{
    if (x->dirty)
        return;
    x->dirty = 1;
    x->next_dirty = x->curl->dirty;
    x->curl->dirty = x;
}

void mcp_xfer_cleanup(mcp_xfer *x)
{
    mcp_curl *c = x->curl;
    if (c == NULL)
        return;
    if (x->dirty) {
        mcp_xfer **pp;
        for (pp = &c->dirty; *pp != NULL; pp = &(*pp)->next_dirty)
            if (*pp == x) {
                *pp = x->next_dirty;
                break;
            }
        x->dirty = 0;
    }
    if (x->attached)
        curl_multi_remove_handle(c->multi, x->easy);
    x->attached = 0;
    curl_easy_cleanup(x->easy);
    x->easy = NULL;
    x->curl = NULL;
    mcp_curl_unref(c);
}
