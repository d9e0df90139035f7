/* The process's limit on open files (RLIMIT_NOFILE), raised when the core needs more.
 *
 * Many stdio servers need many descriptors (each holds its stdin and stdout pipes, a pidfd and,
 * with a stderr handler, a stderr pipe), more than the usual soft limit of 1024 allows. The
 * raise is on demand (spawning a server, running a program: run_program.c, opening a libcurl
 * socket): a call that creates descriptors and fails with EMFILE asks mcp_fdlimit_retry, which
 * raises the soft limit toward the hard one (doubling it) and tells the caller to try again. At
 * the hard limit it cannot, and mcp_fdlimit_describe names both limits for the caller's error.
 * The loop remembers the soft limit from before its first raise: a server or program it spawns
 * gets that limit back before exec, so children see the limit the host had. */
#ifndef MCP_FDLIMIT_H
#define MCP_FDLIMIT_H

#include <stddef.h>
#include <sys/resource.h>

#include "loop.h"

/* err is the errno of a call that failed to create a descriptor. 1 when err is EMFILE and the
 * soft limit was raised (try again); 0 otherwise (not EMFILE, at the hard limit, or refused). */
int mcp_fdlimit_retry(mcp_loop *loop, int err);

/* A readable reason for err: for EMFILE "out of file descriptors (soft limit N, hard M)", for
 * ENFILE "the system's file table is full (ENFILE)", else strerror(err). */
void mcp_fdlimit_describe(int err, char *out, size_t outlen);

/* The limit a child should get back before exec: 1 and *rl filled when this loop raised the
 * soft limit (rl: the soft limit from before, the hard limit of now), 0 when nothing changed. */
int mcp_fdlimit_for_child(mcp_loop *loop, struct rlimit *rl);

#endif
