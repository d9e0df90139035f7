/* The core's helper threads (helper_thread.h). */
#include "helper_thread.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#ifdef MCP_TEST_HOOKS
static int fail_next; /* starts left to fail (test builds only) */

void mcp_helper_thread_fail_next(int n) { fail_next = n > 0 ? n : 0; }
#endif

int mcp_helper_thread_start(pthread_t *t, size_t stack_size, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    sigset_t all, old;
    int e;
#ifdef MCP_TEST_HOOKS
    if (fail_next > 0) {
        fail_next--;
        return EAGAIN;
    }
#endif
    if ((e = pthread_attr_init(&attr)) != 0)
        return e;
    pthread_attr_setstacksize(&attr, stack_size);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(t, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return e;
}

void mcp_helper_thread_poke(int fd)
{
    ssize_t n;
    do
        n = write(fd, "", 1);
    while (n < 0 && errno == EINTR);
}
