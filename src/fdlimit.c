/* RLIMIT_NOFILE raised on demand (fdlimit.h). */
#include "fdlimit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The least the soft limit grows by in one raise. */
#define MCP_FDLIMIT_MIN_STEP 64

/* Per loop: the soft limit before this loop's first raise. */
typedef struct fdlimit_state {
    rlim_t original_soft;
} fdlimit_state;

static const char fdlimit_key = 0; /* its address is the hook's key */

static void fdlimit_release(mcp_loop *loop, void *data)
{
    (void)loop;
    free(data);
}

/* The highest soft limit setrlimit can take under hard. */
static rlim_t ceiling(rlim_t hard)
{
    rlim_t cap = hard;
#ifdef OPEN_MAX
    /* macOS: a soft limit above OPEN_MAX is refused, whatever the hard limit says. */
    if (cap == RLIM_INFINITY || cap > (rlim_t)OPEN_MAX)
        cap = (rlim_t)OPEN_MAX;
#endif
    /* Linux never has an infinite hard limit here (it stops at fs.nr_open); be safe anyway. */
    if (cap == RLIM_INFINITY)
        cap = (rlim_t)1 << 20;
    return cap;
}

int mcp_fdlimit_retry(mcp_loop *loop, int err)
{
    struct rlimit rl;
    rlim_t cap, want;
    fdlimit_state *st;
    if (err != EMFILE || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    cap = ceiling(rl.rlim_max);
    if (rl.rlim_cur >= cap)
        return 0;
    want =
        rl.rlim_cur < MCP_FDLIMIT_MIN_STEP ? rl.rlim_cur + MCP_FDLIMIT_MIN_STEP : rl.rlim_cur * 2;
    if (want > cap || want < rl.rlim_cur)
        want = cap;
    st = mcp_loop_hook_data(loop, &fdlimit_key);
    if (st == NULL) {
        /* Remember the limit children get back; without that memory, do not raise. */
        st = malloc(sizeof *st);
        if (st == NULL)
            return 0;
        st->original_soft = rl.rlim_cur;
        if (mcp_loop_add_hook(loop, &fdlimit_key, st, NULL, fdlimit_release) != 0) {
            free(st);
            return 0;
        }
    }
    rl.rlim_cur = want;
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

void mcp_fdlimit_describe(int err, char *out, size_t outlen)
{
    struct rlimit rl;
    if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        char soft[32], hard[32];
        if (rl.rlim_cur == RLIM_INFINITY)
            snprintf(soft, sizeof soft, "unlimited");
        else
            snprintf(soft, sizeof soft, "%llu", (unsigned long long)rl.rlim_cur);
        if (rl.rlim_max == RLIM_INFINITY)
            snprintf(hard, sizeof hard, "unlimited");
        else
            snprintf(hard, sizeof hard, "%llu", (unsigned long long)rl.rlim_max);
        snprintf(out, outlen, "out of file descriptors (soft limit %s, hard %s)", soft, hard);
    } else if (err == ENFILE) {
        snprintf(out, outlen, "the system's file table is full (ENFILE)");
    } else {
        snprintf(out, outlen, "%s", strerror(err));
    }
}

int mcp_fdlimit_for_child(mcp_loop *loop, struct rlimit *rl)
{
    fdlimit_state *st = mcp_loop_hook_data(loop, &fdlimit_key);
    if (st == NULL || getrlimit(RLIMIT_NOFILE, rl) != 0)
        return 0;
    if (st->original_soft < rl->rlim_cur)
        rl->rlim_cur = st->original_soft;
    return 1;
}
