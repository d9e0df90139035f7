/* A short program run on a helper thread (run_io.h there), so that a run from a task does not
 * hold the host's thread: the start (clone and the wait for exec), the pump of its pipes and the
 * wait for its exit (10-50 ms for secret-tool through D-Bus, seconds when the keyring prompts)
 * are the thread's. The job owns everything of the run: the copies of argv, the environment and
 * the input, the pipes, the child (the thread always reaps it, killing it on a timeout or a
 * cancel), the output. The loop learns of the end through a pipe (mcp_run_job_fd). Every
 * descriptor of the job (that pipe, the cancel pipe and the run's, mcp_run_open) is made before
 * the thread, on the caller's, where running out of them can be answered (fdlimit.h). */
#ifndef MCP_RUN_JOB_H
#define MCP_RUN_JOB_H

#include <stddef.h>
#include <sys/resource.h>

#include "run_io.h"

typedef struct mcp_run_job mcp_run_job;

/* Run argv (NULL-ended, argv[0] looked up in the PATH of the host's environment, copied now with
 * argv, input and nofile: the program's RLIMIT_NOFILE, NULL for the host's) at most timeout_ms on
 * a new thread. NULL with errno when it cannot (EMFILE: the caller may raise the limit and call
 * again; *no_thread is 1 when the thread itself could not be created, pthread_create's errno);
 * then nothing of it is left open and no program was started. */
mcp_run_job *mcp_run_job_start(char *const *argv, const char *input, size_t input_len,
                               int timeout_ms, const struct rlimit *nofile, int *no_thread);

/* Readable once the run is over (mcp_run_job_finish then returns at once). */
int mcp_run_job_fd(const mcp_run_job *j);

/* Ask the thread to end the run now: the program is killed and reaped (bounded: SIGKILL). */
void mcp_run_job_cancel(mcp_run_job *j);

/* Wait for the thread and free the job. 0 with *status (mcp_run_finish's: a wait status,
 * MCP_RUN_TIMED_OUT or MCP_RUN_CANCELLED) and the output in *out (the caller's: mcp_run_free), or
 * the start's errno with *step (then *out holds nothing). */
int mcp_run_job_finish(mcp_run_job *j, int *status, int *step, mcp_run_io *out);

#endif
