/* stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout. */
#ifndef MCP_STDIO_TRANSPORT_H
#define MCP_STDIO_TRANSPORT_H

#include <sys/types.h>

#include "transport.h"

typedef void (*mcp_stderr_cb)(void *ctx, const char *line, size_t len);

typedef struct mcp_stdio_config {
    char *command;   /* owned (malloc) */
    char **argv;     /* NULL-terminated, owned */
    char **envp;     /* NULL-terminated, owned: the complete environment */
    char *cwd;       /* owned, may be NULL */
    int stderr_mode; /* MCP_STDERR_* */
    size_t max_message;
    size_t max_write_queue;      /* bytes waiting for the server to read its stdin; 0: default */
    struct mcp_sandbox *sandbox; /* owned, may be NULL: confine the server (sandbox.h) */
} mcp_stdio_config;

#define MCP_STDIO_DEFAULT_MAX_MESSAGE ((size_t)64 * 1024 * 1024)
#define MCP_STDIO_DEFAULT_MAX_WRITE_QUEUE ((size_t)16 * 1024 * 1024)

/* Takes ownership of cfg's strings (also on failure). NULL when out of memory. */
mcp_transport *mcp_stdio_new(mcp_loop *loop, mcp_stdio_config *cfg);
void mcp_stdio_config_free(mcp_stdio_config *cfg);
void mcp_stdio_on_stderr(mcp_transport *t, mcp_stderr_cb cb, void *ctx);
/* The start's end, when it runs on a helper thread: why is NULL once the server runs, else why it
 * did not (also when the transport was closed meanwhile). Called at most once per start. */
typedef void (*mcp_stdio_started_cb)(void *ctx, const char *why);
void mcp_stdio_on_started(mcp_transport *t, mcp_stdio_started_cb cb, void *ctx);
/* Start the server on a helper thread (spawn_job.h): 0 at once, the end told to on_started; the
 * host's thread does not wait for the child's exec. -1 with err when it cannot begin. */
int mcp_stdio_start_background(mcp_transport *t, char *err, size_t errlen);
/* The server's pid (0: none); a start in flight is waited for first. */
pid_t mcp_stdio_pid(mcp_transport *t);
/* 1 once the child has been reaped. */
int mcp_stdio_reaped(mcp_transport *t);
/* "exited with status 3", "is still running", ... */
void mcp_stdio_describe_exit(mcp_transport *t, char *out, size_t outlen);

#endif
