#include "addrguard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static mcp_addr_class classify_v4(const unsigned char a[4])
{
    if (a[0] == 127 || a[0] == 0)
        return MCP_ADDR_LOOPBACK;
    if ((a[0] == 169 && a[1] == 254) || a[0] >= 224)
        return MCP_ADDR_LINK;
    if (a[0] == 10 || (a[0] == 172 && a[1] >= 16 && a[1] <= 31) || (a[0] == 192 && a[1] == 168) ||
        (a[0] == 100 && a[1] >= 64 && a[1] <= 127))
        return MCP_ADDR_PRIVATE;
    return MCP_ADDR_PUBLIC;
}

static mcp_addr_class classify_v6(const unsigned char a[16])
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    static const unsigned char zero[15] = {0};
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
        return classify_v4(a + 12);
    if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
        return MCP_ADDR_LOOPBACK; /* ::1, and :: */
    if ((a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || a[0] == 0xff)
        return MCP_ADDR_LINK; /* fe80::/10, ff00::/8 */
    if ((a[0] & 0xfe) == 0xfc)
        return MCP_ADDR_PRIVATE; /* fc00::/7 */
    return MCP_ADDR_PUBLIC;
}

mcp_addr_class mcp_addr_classify(const struct sockaddr *sa, size_t len)
{
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return classify_v4((const unsigned char *)&in->sin_addr);
    }
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        return classify_v6(in6->sin6_addr.s6_addr);
    }
    return MCP_ADDR_PUBLIC;
}

int mcp_addr_refused(mcp_addr_guard guard, mcp_addr_class cls)
{
    if (guard == MCP_GUARD_LOCAL)
        return cls == MCP_ADDR_LOOPBACK || cls == MCP_ADDR_LINK;
    if (guard == MCP_GUARD_LOOPBACK)
        return cls == MCP_ADDR_LOOPBACK;
    return 0;
}

void mcp_addr_format(const struct sockaddr *sa, size_t len, char *out, size_t outlen)
{
    const void *addr = NULL;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
        addr = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
    else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
        addr = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    if (addr == NULL || inet_ntop(sa->sa_family, addr, out, (socklen_t)outlen) == NULL)
        snprintf(out, outlen, "an address of family %d", (int)sa->sa_family);
}
