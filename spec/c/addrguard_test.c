/* Unit test of the connect-time SSRF guard's address classes (src/transports/addrguard.c): no
 * Lua, no libcurl. Built and run by `make test-c` (part of `make test`). Every address here is
 * only classified, never connected to. Exits 0 when every check passes; prints each failure. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "transports/addrguard.h"

static int failures, checks;

static mcp_addr_class classify(const char *text)
{
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
    memset(&in, 0, sizeof in);
    memset(&in6, 0, sizeof in6);
    if (inet_pton(AF_INET, text, &in.sin_addr) == 1) {
        in.sin_family = AF_INET;
        return mcp_addr_classify((struct sockaddr *)&in, sizeof in);
    }
    if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1) {
        in6.sin6_family = AF_INET6;
        return mcp_addr_classify((struct sockaddr *)&in6, sizeof in6);
    }
    fprintf(stderr, "addrguard_test: not an address: %s\n", text);
    failures++;
    return MCP_ADDR_PUBLIC;
}

static void expect(const char *text, mcp_addr_class want)
{
    mcp_addr_class got = classify(text);
    checks++;
    if (got != want) {
        failures++;
        fprintf(stderr, "addrguard_test: %s: class %d, expected %d\n", text, (int)got, (int)want);
    }
}

static void expect_refused(mcp_addr_guard g, const char *text, int want)
{
    int got = mcp_addr_refused(g, classify(text));
    checks++;
    if (got != want) {
        failures++;
        fprintf(stderr, "addrguard_test: guard %d, %s: refused %d, expected %d\n", (int)g, text,
                got, want);
    }
}

int main(void)
{
    static const char *loopback[] = {
        "127.0.0.1", "127.255.255.254",  "0.0.0.0",        "0.1.2.3", "::1",
        "::",        "::ffff:127.0.0.1", "64:ff9b::7f00:1"};
    static const char *link[] = {"169.254.169.254", "169.254.0.1",     "224.0.0.1",
                                 "239.255.255.250", "255.255.255.255", "fe80::1",
                                 "febf::1",         "ff02::1",         "::ffff:169.254.169.254"};
    static const char *private_[] = {"10.0.0.1",    "172.16.0.1",   "172.31.255.255",
                                     "192.168.1.1", "100.64.0.1",   "100.127.255.255",
                                     "fc00::1",     "fd12:3456::1", "::ffff:10.1.2.3"};
    static const char *public_[] = {"8.8.8.8",         "172.15.255.255",  "172.32.0.1",
                                    "192.169.0.1",     "100.63.255.255",  "100.128.0.1",
                                    "169.253.1.1",     "223.255.255.255", "2001:db8::1",
                                    "2606:4700::1111", "fec0::1",         "::2"};
    char text[64];
    struct sockaddr_in6 in6;
    size_t i;
    for (i = 0; i < sizeof loopback / sizeof *loopback; i++)
        expect(loopback[i], MCP_ADDR_LOOPBACK);
    for (i = 0; i < sizeof link / sizeof *link; i++)
        expect(link[i], MCP_ADDR_LINK);
    for (i = 0; i < sizeof private_ / sizeof *private_; i++)
        expect(private_[i], MCP_ADDR_PRIVATE);
    for (i = 0; i < sizeof public_ / sizeof *public_; i++)
        expect(public_[i], MCP_ADDR_PUBLIC);

    expect_refused(MCP_GUARD_NONE, "127.0.0.1", 0);
    expect_refused(MCP_GUARD_LOOPBACK, "127.0.0.1", 1);
    expect_refused(MCP_GUARD_LOOPBACK, "::1", 1);
    expect_refused(MCP_GUARD_LOOPBACK, "169.254.169.254", 0);
    expect_refused(MCP_GUARD_LOOPBACK, "10.0.0.1", 0);
    expect_refused(MCP_GUARD_LOCAL, "0.0.0.0", 1);
    expect_refused(MCP_GUARD_LOCAL, "169.254.169.254", 1);
    expect_refused(MCP_GUARD_LOCAL, "fe80::1", 1);
    expect_refused(MCP_GUARD_LOCAL, "10.0.0.1", 0);
    expect_refused(MCP_GUARD_LOCAL, "8.8.8.8", 0);

    /* a length too short for its family is not read past: public */
    memset(&in6, 0, sizeof in6);
    in6.sin6_family = AF_INET6;
    in6.sin6_addr.s6_addr[15] = 1;
    checks++;
    if (mcp_addr_classify((struct sockaddr *)&in6, sizeof(struct sockaddr_in)) != MCP_ADDR_PUBLIC) {
        failures++;
        fprintf(stderr, "addrguard_test: a short IPv6 address was read\n");
    }
    mcp_addr_format((struct sockaddr *)&in6, sizeof in6, text, sizeof text);
    checks++;
    if (strcmp(text, "::1") != 0) {
        failures++;
        fprintf(stderr, "addrguard_test: formatted %s, expected ::1\n", text);
    }
    printf("addrguard_test: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
