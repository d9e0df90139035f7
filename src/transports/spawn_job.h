/* A start on a helper thread (issue 28). mcp_spawn_start's clone(CLONE_VM | CLONE_VFORK) makes
 * the calling thread sleep until the child reaches execve, and the child first waits for a CPU:
 * 1-25 ms of wall on a quiet machine, 80 ms under load, for well under 1 ms of CPU. A start made
 * in a task runs on a thread of its own instead, so the host's frame goes on; the child's errno
 * and stack are that thread's while it waits. The loop learns of the end through a pipe. */
#ifndef MCP_SPAWN_JOB_H
#define MCP_SPAWN_JOB_H

#include <sys/types.h>

#include "spawn.h"

typedef struct mcp_spawn_job mcp_spawn_job;

/* Start p on a new thread. The job copies what p points at (file, argv, envp, cwd, nofile) and
 * takes p's descriptors (fd[0..2], sandbox_fd), closed by mcp_spawn_job_finish whatever the
 * outcome. NULL with errno when it cannot: then it took nothing. */
mcp_spawn_job *mcp_spawn_job_start(const mcp_spawn_plan *p);

/* Readable once the start is done. */
int mcp_spawn_job_fd(const mcp_spawn_job *j);

/* Wait for the thread (at most the rest of the start) and free the job: mcp_spawn_start's
 * result, 0 with *pid, or an errno with *step (then no child is left). */
int mcp_spawn_job_finish(mcp_spawn_job *j, pid_t *pid, int *step);

#endif
