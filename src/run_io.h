/* A short program run on three pipes (no Lua, no loop): started without a shell, fed its stdin,
 * its stdout and stderr captured (1 MiB each at most), waited for at most a timeout and then
 * killed, always reaped. The blocking core.run_program runs it on the host's thread, a run from a
 * task on a helper thread (run_job.h). Every field is the run's own; one thread uses it at a time. */
#ifndef MCP_RUN_IO_H
#define MCP_RUN_IO_H

#include <stddef.h>
#include <sys/types.h>

/* mcp_run_finish's results that are not a wait status (a wait status is >= 0). */
#define MCP_RUN_TIMED_OUT (-1) /* killed after the timeout */
#define MCP_RUN_CANCELLED (-2) /* killed because cancel_fd became readable */

typedef struct mcp_run_io {
    int fd[3]; /* parent ends: stdin (write), stdout, stderr (read); -1 once closed */
    const char *input;
    size_t input_len, written;
    char *buf[3]; /* what was read from stdout ([1]) and stderr ([2]) */
    size_t len[3];
    pid_t pid;
} mcp_run_io;

/* io cleared, input (kept by the caller until the run is finished) on the program's stdin. */
void mcp_run_init(mcp_run_io *io, const char *input, size_t input_len);

/* Start argv (argv[0] looked up in the PATH of envp) in the host's process group, with envp, on
 * three pipes. 0, or an errno with *step (MCP_SPAWN_STEP_EXEC: it could not be executed); then
 * nothing is left running. */
int mcp_run_start(mcp_run_io *io, char *const *argv, char *const *envp, int *step);

/* Feed stdin and read the output until the program closed both and exited, at most timeout_ms, or
 * until cancel_fd (-1: none) is readable: its wait status, MCP_RUN_TIMED_OUT or MCP_RUN_CANCELLED
 * (then it was killed). The program is reaped and the pipes closed whatever the result. */
int mcp_run_finish(mcp_run_io *io, int timeout_ms, int cancel_fd);

/* Free what was read and close what is open (the buffers are NULL after). */
void mcp_run_free(mcp_run_io *io);

#endif
