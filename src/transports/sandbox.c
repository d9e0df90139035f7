#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* O_PATH */
#endif
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Our own declarations of the Landlock UAPI (linux/landlock.h), so older headers build too. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_V1 ((1ULL << 13) - 1)        /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)           /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)        /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)       /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)        /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)     /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */

#define LL_READ (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_FILE_ONLY                                                                               \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int mcp_sandbox_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
#ifdef MCP_TEST_HOOKS
    /* Specs play an older kernel: the ABI is capped at this number. */
    const char *cap = getenv("MCP_TEST_LANDLOCK_ABI");
    if (cap != NULL && *cap != '\0' && atol(cap) < v)
        v = atol(cap);
#endif
    return v > 0 ? (int)v : 0;
}

/* Every filesystem right the kernel's ABI knows: all of them are handled (denied unless a rule
 * grants them). */
static uint64_t fs_rights(int abi)
{
    uint64_t r = LL_FS_V1;
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

/* The part of the attribute struct this kernel knows and this sandbox uses. */
static size_t ruleset_attr_size(int abi, int deny_net)
{
    if (abi >= 6)
        return sizeof(struct ll_ruleset_attr);
    if (deny_net)
        return 2 * sizeof(uint64_t);
    return sizeof(uint64_t);
}

/* One path_beneath rule; a path that does not exist is no rule (nothing to reach there). */
static int add_path(int rs, const char *path, uint64_t want, uint64_t handled, char *err,
                    size_t errlen)
{
    struct ll_path_beneath_attr pb;
    struct stat st;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        snprintf(err, errlen, "sandbox: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    pb.allowed_access = want & handled;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        pb.allowed_access &= LL_FILE_ONLY; /* the kernel refuses directory rights on a file */
    pb.parent_fd = fd;
    if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) != 0) {
        snprintf(err, errlen, "sandbox: cannot add a rule for '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static int add_paths(int rs, char **paths, uint64_t want, uint64_t handled, char *err,
                     size_t errlen)
{
    for (; paths != NULL && *paths != NULL; paths++)
        if (add_path(rs, *paths, want, handled, err, errlen) != 0)
            return -1;
    return 0;
}

int mcp_sandbox_prepare(const mcp_sandbox *sb, const char *command_file, char *err, size_t errlen)
{
    struct ll_ruleset_attr attr;
    int abi = mcp_sandbox_abi(), rs;
    if (abi < 1) {
        snprintf(err, errlen, "sandbox: this kernel cannot enforce it (Landlock is not available)");
        return -1;
    }
    if (sb->deny_net && abi < 4) {
        snprintf(err, errlen, "sandbox: net = false needs Landlock ABI 4 (this kernel has %d)",
                 abi);
        return -1;
    }
    memset(&attr, 0, sizeof attr);
    attr.handled_access_fs = fs_rights(abi);
    if (sb->deny_net)
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP; /* no rule: none allowed */
    /* Where the kernel scopes (ABI 6): no signal to a process outside the sandbox (the host, the
     * user's other programs) and no abstract UNIX socket made outside it (X11, some D-Bus). */
    if (abi >= 6)
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
    rs = (int)syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(abi, sb->deny_net), 0);
    if (rs < 0) {
        snprintf(err, errlen, "sandbox: landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    fcntl(rs, F_SETFD, FD_CLOEXEC);
    if (add_paths(rs, sb->read, LL_READ, attr.handled_access_fs, err, errlen) != 0 ||
        add_paths(rs, sb->write, attr.handled_access_fs, attr.handled_access_fs, err, errlen) !=
            0 ||
        add_path(rs, command_file, LL_READ, attr.handled_access_fs, err, errlen) != 0) {
        close(rs);
        return -1;
    }
    return rs;
}

int mcp_sandbox_enter(int ruleset_fd)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0 ? 0 : -1;
}

#else /* not Linux */

int mcp_sandbox_abi(void) { return 0; }

int mcp_sandbox_prepare(const mcp_sandbox *sb, const char *command_file, char *err, size_t errlen)
{
    (void)sb;
    (void)command_file;
    snprintf(err, errlen, "sandbox: not supported on this system (Linux Landlock only)");
    return -1;
}

int mcp_sandbox_enter(int ruleset_fd)
{
    (void)ruleset_fd;
    errno = ENOSYS;
    return -1;
}

#endif

static void free_list(char **l)
{
    char **p;
    for (p = l; p != NULL && *p != NULL; p++)
        free(*p);
    free(l);
}

void mcp_sandbox_free(mcp_sandbox *sb)
{
    if (sb == NULL)
        return;
    free_list(sb->read);
    free_list(sb->write);
    free(sb);
}
