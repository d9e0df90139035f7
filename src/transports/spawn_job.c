/* A start on a helper thread (spawn_job.h): the plan's copy, the thread, the pipe it wakes the
 * loop through, and the start's report pipe, made here with the wake pipe so that running out of
 * descriptors is the caller's to answer (it raises the limit: fdlimit.h), not the thread's.
 * Every field is the job's; the thread writes only pid, step, err and report (closed by the
 * start), read after the join. */
#include "spawn_job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper_thread.h"
#include "strvec.h"

/* The thread's stack: mcp_spawn_start's few frames (the child runs on a stack it maps), and a
 * sanitizer's interceptors under a checked build. */
#define MCP_SPAWN_JOB_STACK (256 * 1024)

struct mcp_spawn_job {
    mcp_spawn_plan plan;
    struct rlimit nofile;
    char *strings; /* one block: argv's and envp's pointers, then every string */
    int wake[2];
    int report[2]; /* mcp_spawn_start_with's; -1 once it took them */
    pthread_t thread;
    pid_t pid;
    int step, err;
};

static char *copy_str(const char *s, char **at)
{
    char *out = *at;
    size_t n = strlen(s) + 1;
    memcpy(out, s, n);
    *at += n;
    return out;
}

/* The plan's strings in one block owned by the job. 0, or -1 (out of memory). */
static int copy_plan(mcp_spawn_job *j, const mcp_spawn_plan *p)
{
    size_t na, ne, bytes = mcp_strvec_size(p->argv, &na) + mcp_strvec_size(p->envp, &ne);
    size_t slots = (na + 1 + ne + 1) * sizeof(char *);
    char **vec, *at;
    bytes += strlen(p->file) + 1 + (p->cwd != NULL ? strlen(p->cwd) + 1 : 0);
    j->strings = malloc(slots + bytes);
    if (j->strings == NULL)
        return -1;
    vec = (char **)(void *)j->strings;
    at = j->strings + slots;
    j->plan = *p;
    j->plan.argv = mcp_strvec_copy(p->argv, vec, &at);
    j->plan.envp = mcp_strvec_copy(p->envp, vec + na + 1, &at);
    j->plan.file = copy_str(p->file, &at);
    j->plan.cwd = p->cwd != NULL ? copy_str(p->cwd, &at) : NULL;
    if (p->nofile != NULL) {
        j->nofile = *p->nofile;
        j->plan.nofile = &j->nofile;
    }
    return 0;
}

static void *job_main(void *arg)
{
    mcp_spawn_job *j = arg;
    j->err = mcp_spawn_start_with(&j->plan, j->report, &j->pid, &j->step);
    j->report[0] = j->report[1] = -1;
    mcp_helper_thread_poke(j->wake[1]);
    return NULL;
}

static void free_job(mcp_spawn_job *j)
{
    int i;
    for (i = 0; i < 2; i++) {
        if (j->wake[i] >= 0)
            close(j->wake[i]);
        if (j->report[i] >= 0)
            close(j->report[i]);
    }
    free(j->strings);
    free(j);
}

mcp_spawn_job *mcp_spawn_job_start(const mcp_spawn_plan *p)
{
    mcp_spawn_job *j = calloc(1, sizeof *j);
    int e;
    if (j == NULL)
        return NULL;
    j->wake[0] = j->wake[1] = j->report[0] = j->report[1] = -1;
    if (mcp_pipe_cloexec(j->wake) != 0 || mcp_pipe_cloexec(j->report) != 0) {
        e = errno; /* EMFILE: the caller may raise the limit and try again */
        free_job(j);
        errno = e;
        return NULL;
    }
    if (copy_plan(j, p) != 0) {
        free_job(j);
        errno = ENOMEM;
        return NULL;
    }
    if ((e = mcp_helper_thread_start(&j->thread, MCP_SPAWN_JOB_STACK, job_main, j)) != 0) {
        free_job(j);
        errno = e;
        return NULL;
    }
    return j;
}

int mcp_spawn_job_fd(const mcp_spawn_job *j) { return j->wake[0]; }

int mcp_spawn_job_finish(mcp_spawn_job *j, pid_t *pid, int *step)
{
    int i, e;
    pthread_join(j->thread, NULL);
    for (i = 0; i < 3; i++)
        if (j->plan.fd[i] >= 0)
            close(j->plan.fd[i]);
    if (j->plan.sandbox_fd >= 0)
        close(j->plan.sandbox_fd);
    *pid = j->pid;
    *step = j->step;
    e = j->err;
    free_job(j);
    return e;
}
