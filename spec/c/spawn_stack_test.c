/* Unit test of the children's stacks (src/transports/spawn_stack.c): each stack is readable and
 * writable over its whole size, and the page past the end it grows toward is not mapped for
 * access, so an overflow faults instead of writing into the memory beside it (the host's, or
 * the other stack). Built and run by `make test-c` (part of `make test`). Access is probed with
 * write(2) from the address into a pipe, which fails with EFAULT where the memory cannot be
 * read: no signal is raised. Exits 0 when every check passes; prints each failure. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "transports/spawn_stack.h"

static int failures, checks, probe[2];

static void check(int ok, const char *what, int i)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "spawn_stack_test: stack %d: %s\n", i, what);
    }
}

/* 1 when the byte at p can be read, 0 when reading it faults (EFAULT). */
static int readable(const char *p)
{
    char c;
    if (write(probe[1], p, 1) == 1)
        return read(probe[0], &c, 1) == 1;
    return errno == EFAULT ? 0 : -1;
}

static void expect_stacks(int n, size_t size)
{
    mcp_spawn_stacks s;
    int i;
    if (mcp_spawn_stacks_map(&s, n, size) != 0) {
        check(0, "mapped", n);
        return;
    }
    check(s.size >= size && s.map_size == (size_t)n * (s.size + s.guard), "sizes", n);
    for (i = 0; i < n; i++) {
        char *lo = s.stack[i], *hi = s.stack[i] + s.size - 1;
        char *past = MCP_STACK_GROWS_UP ? hi + 1 : lo - 1; /* where an overflow goes */
        check(lo >= s.map && hi < s.map + s.map_size, "inside the mapping", i);
        memset(lo, 0xa5, s.size); /* faults (the test dies) if any of it is not writable */
        check(readable(lo) == 1 && readable(hi) == 1, "its ends can be read", i);
        check(readable(past) == 0, "the byte past the end it grows toward faults", i);
        check(readable(MCP_STACK_GROWS_UP ? past + s.guard - 1 : past - s.guard + 1) == 0,
              "the guard is a whole page", i);
    }
    mcp_spawn_stacks_unmap(&s);
    check(s.map == NULL, "unmapped", n);
}

int main(void)
{
    mcp_spawn_stacks s;
    if (pipe(probe) != 0) {
        perror("spawn_stack_test: pipe");
        return 1;
    }
    expect_stacks(1, 64 * 1024);
    expect_stacks(2, 64 * 1024);
    expect_stacks(1, 1000); /* rounded up to a page */
    check(mcp_spawn_stacks_map(&s, 3, 4096) != 0 && errno == EINVAL, "3 refused", 3);
    mcp_spawn_stacks_unmap(&s); /* holds none: nothing to do */
    printf("spawn_stack_test: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
