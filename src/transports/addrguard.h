/* The SSRF guard at connect time. lua/mcp/auth/url.lua refuses URLs whose host is written as a
 * loopback or internal address; a host *name* can still resolve to one (or change its answer
 * between two lookups: DNS rebinding). A guarded transfer checks the address libcurl is about to
 * connect to. Private ranges are not refused here: an intranet's authorization server resolves to
 * one as a matter of course; loopback and link-local addresses (the host's own services, a cloud
 * metadata endpoint) never belong to a remote server. */
#ifndef MCP_ADDRGUARD_H
#define MCP_ADDRGUARD_H

#include <stddef.h>
#include <sys/socket.h>

typedef enum {
    MCP_ADDR_PUBLIC = 0,
    MCP_ADDR_PRIVATE = 1,  /* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7 */
    MCP_ADDR_LINK = 2,     /* link-local 169.254/16 and fe80::/10, multicast, broadcast */
    MCP_ADDR_LOOPBACK = 3, /* 127/8, ::1, and the unspecified 0/8 and :: (they reach this host) */
} mcp_addr_class;

/* What a guarded connection refuses. */
typedef enum {
    MCP_GUARD_NONE = 0,
    MCP_GUARD_LOOPBACK = 1, /* loopback addresses */
    MCP_GUARD_LOCAL = 2,    /* loopback and link-local ones */
} mcp_addr_guard;

/* The class of an IPv4 or IPv6 socket address (an IPv4-mapped or NAT64 IPv6 address is classed
 * by its IPv4 part); other families are public. */
mcp_addr_class mcp_addr_classify(const struct sockaddr *sa, size_t len);
/* Whether guard refuses an address of class cls. */
int mcp_addr_refused(mcp_addr_guard guard, mcp_addr_class cls);
/* The address as text ("169.254.169.254", "fe80::1"), for an error message. */
void mcp_addr_format(const struct sockaddr *sa, size_t len, char *out, size_t outlen);

#endif
