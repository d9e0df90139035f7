/* The core's helper threads (a stdio server's start from a task, spawn_job.c; a program run from
 * a task, run_job.c): each is created with every signal blocked, so that no handler of the host
 * runs on it, and tells the loop it is done with a byte on a pipe. */
#ifndef MCP_HELPER_THREAD_H
#define MCP_HELPER_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* fn(arg) on a new thread with a stack of stack_size bytes, every signal blocked on it (the
 * caller's mask is kept). 0, or pthread_create's error. */
int mcp_helper_thread_start(pthread_t *t, size_t stack_size, void *(*fn)(void *), void *arg);

#ifdef MCP_TEST_HOOKS
/* Test builds only: the next n starts fail with EAGAIN (as pthread_create at a thread limit) and
 * start no thread; core._fail_thread_starts (src/testing/thread_lua.c). Used on the loop's thread. */
void mcp_helper_thread_fail_next(int n);
#endif

/* One byte on fd (a pipe's write end: the loop's wake, a cancel), retried when interrupted. */
void mcp_helper_thread_poke(int fd);

#endif
