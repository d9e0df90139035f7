/* A short program run on three pipes (no Lua, no loop): started without a shell, fed its stdin,
 * its stdout and stderr captured (1 MiB each at most), waited for at most a timeout and then
 * killed, always reaped. The blocking core.run_program runs it on the host's thread, a run from a
 * task on a helper thread (run_job.h). Every descriptor of a run is made first, by mcp_run_open,
 * where running out of them can be answered (the loop's thread raises the fd limit: fdlimit.h);
 * the start and the pump make none. Every field is the run's own; one thread uses it at a time. */
#ifndef MCP_RUN_IO_H
#define MCP_RUN_IO_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* mcp_run_finish's results that are not a wait status (a wait status is >= 0). */
#define MCP_RUN_TIMED_OUT (-1) /* killed after the timeout */
#define MCP_RUN_CANCELLED (-2) /* killed because cancel_fd became readable */

typedef struct mcp_run_io {
    int fd[3];     /* parent ends: stdin (write), stdout, stderr (read); -1 once closed */
    int child[3];  /* the program's ends of the same pipes, until the start; -1 once closed */
    int report[2]; /* the start's report pipe (spawn.h), until the start; -1 once closed */
    const char *input;
    size_t input_len, written;
    char *buf[3]; /* what was read from stdout ([1]) and stderr ([2]) */
    size_t len[3];
    pid_t pid;
} mcp_run_io;

/* io cleared, input (kept by the caller until the run is finished) on the program's stdin. */
void mcp_run_init(mcp_run_io *io, const char *input, size_t input_len);

/* The run's descriptors, all close-on-exec: its three pipes and its start's report pipe. 0, or
 * an errno (EMFILE: the caller may raise the limit, fdlimit.h, and call again); then none is open. */
int mcp_run_open(mcp_run_io *io);

/* Start argv (argv[0] looked up in the PATH of envp) in the host's process group, with envp, on
 * the pipes mcp_run_open made (the program's ends and the report pipe are closed whatever the
 * outcome), with nofile as its RLIMIT_NOFILE (NULL: the host's; fdlimit.h). 0, or an errno with
 * *step (MCP_SPAWN_STEP_EXEC: it could not be executed); then nothing is open or left running. */
int mcp_run_start(mcp_run_io *io, char *const *argv, char *const *envp, const struct rlimit *nofile,
                  int *step);

/* Feed stdin and read the output until the program closed both and exited, at most timeout_ms, or
 * until cancel_fd (-1: none) is readable: its wait status, MCP_RUN_TIMED_OUT or MCP_RUN_CANCELLED
 * (then it was killed). The program is reaped and the pipes closed whatever the result. */
int mcp_run_finish(mcp_run_io *io, int timeout_ms, int cancel_fd);

/* Free what was read and close what is open, the pipes of a run never started included (the
 * buffers are NULL after). */
void mcp_run_free(mcp_run_io *io);

#endif
