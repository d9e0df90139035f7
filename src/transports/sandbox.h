/* Confining a spawned stdio server with Linux Landlock: the paths it may read, the paths it may
 * write, and whether it may make TCP connections. The ruleset is built in the parent before fork
 * (it opens the paths); the child only enters it (no_new_privs + landlock_restrict_self), two
 * system calls that are async-signal-safe. What to do when the kernel cannot enforce a request
 * ("required" or "best_effort") is decided in Lua (lua/mcp/sandbox.lua) from mcp_sandbox_abi();
 * here every request is enforced or the spawn fails. */
#ifndef MCP_SANDBOX_H
#define MCP_SANDBOX_H

#include <stddef.h>

typedef struct mcp_sandbox {
    char **read;  /* NULL-terminated paths: read and execute beneath them */
    char **write; /* NULL-terminated paths: read, write, create and remove beneath them */
    int deny_net; /* deny TCP connect and bind (Landlock ABI 4 or newer) */
} mcp_sandbox;

/* The kernel's Landlock ABI version, 0 when it has none (or it is disabled). */
int mcp_sandbox_abi(void);
/* Before fork: the ruleset for sb, plus read/execute of the resolved command file. Returns a
 * close-on-exec fd, or -1 with a message in err. */
int mcp_sandbox_prepare(const mcp_sandbox *sb, const char *command_file, char *err, size_t errlen);
/* Between fork and exec: no_new_privs, then enter the ruleset. 0, or -1 with errno set. */
int mcp_sandbox_enter(int ruleset_fd);
void mcp_sandbox_free(mcp_sandbox *sb);

#endif
