/* A short program run on a helper thread (run_job.h). The thread uses only the job's own copies
 * and descriptors, made before it starts, and writes only io, status, err and step, which the
 * owner reads after the join. */
#include "run_job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper_thread.h"
#include "strvec.h"
#include "transports/spawn.h"

extern char **environ;

/* The thread's stack: the pump's and the start's few frames, and a sanitizer's interceptors. */
#define RUN_JOB_STACK (256 * 1024)

struct mcp_run_job {
    mcp_run_io io;
    char **argv, **envp; /* each one block: the pointers, then the strings */
    char *input;
    struct rlimit nofile;
    int has_nofile; /* 0: the program keeps the host's limit */
    int timeout_ms;
    int wake[2], cancel[2];
    pthread_t thread;
    int status, err, step;
};

static void *job_main(void *arg)
{
    mcp_run_job *j = arg;
    j->err = mcp_run_start(&j->io, j->argv, j->envp, j->has_nofile ? &j->nofile : NULL, &j->step);
    if (j->err == 0)
        j->status = mcp_run_finish(&j->io, j->timeout_ms, j->cancel[0]);
    mcp_helper_thread_poke(j->wake[1]);
    return NULL;
}

static void free_job(mcp_run_job *j)
{
    int i;
    for (i = 0; i < 2; i++) {
        if (j->wake[i] >= 0)
            close(j->wake[i]);
        if (j->cancel[i] >= 0)
            close(j->cancel[i]);
    }
    mcp_run_free(&j->io); /* (the run's pipes when the thread never started) */
    free(j->argv);
    free(j->envp);
    free(j->input);
    free(j);
}

/* The job's copies and every descriptor of it: 0, or an errno (what is made, free_job frees). */
static int prepare(mcp_run_job *j, char *const *argv, const char *input, size_t input_len)
{
    j->argv = mcp_strvec_dup(argv);
    j->envp = mcp_strvec_dup(environ);
    j->input = malloc(input_len + 1);
    if (j->argv == NULL || j->envp == NULL || j->input == NULL)
        return ENOMEM;
    memcpy(j->input, input, input_len);
    mcp_run_init(&j->io, j->input, input_len);
    if (mcp_pipe_cloexec(j->wake) != 0) {
        j->wake[0] = j->wake[1] = -1;
        return errno;
    }
    if (mcp_pipe_cloexec(j->cancel) != 0) {
        j->cancel[0] = j->cancel[1] = -1;
        return errno;
    }
    return mcp_run_open(&j->io);
}

mcp_run_job *mcp_run_job_start(char *const *argv, const char *input, size_t input_len,
                               int timeout_ms, const struct rlimit *nofile, int *no_thread)
{
    mcp_run_job *j = calloc(1, sizeof *j);
    int e;
    *no_thread = 0;
    if (j == NULL)
        return NULL;
    j->wake[0] = j->wake[1] = j->cancel[0] = j->cancel[1] = -1;
    mcp_run_init(&j->io, NULL, 0);
    j->timeout_ms = timeout_ms;
    if (nofile != NULL) {
        j->nofile = *nofile;
        j->has_nofile = 1;
    }
    e = prepare(j, argv, input, input_len);
    if (e == 0 && (e = mcp_helper_thread_start(&j->thread, RUN_JOB_STACK, job_main, j)) != 0)
        *no_thread = 1;
    if (e != 0) {
        free_job(j);
        errno = e;
        return NULL;
    }
    return j;
}

int mcp_run_job_fd(const mcp_run_job *j) { return j->wake[0]; }

void mcp_run_job_cancel(mcp_run_job *j) { mcp_helper_thread_poke(j->cancel[1]); }

int mcp_run_job_finish(mcp_run_job *j, int *status, int *step, mcp_run_io *out)
{
    int e;
    pthread_join(j->thread, NULL);
    *status = j->status;
    *step = j->step;
    e = j->err;
    *out = j->io; /* the output is the caller's now; the pipes are closed (mcp_run_finish) */
    out->input = NULL;
    out->input_len = 0;
    mcp_run_init(&j->io, NULL, 0);
    free_job(j);
    return e;
}
