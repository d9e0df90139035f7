/* `make check-abi` (scripts/check-abi.sh): prints every constant that lua-mcp's own ABI
 * declarations (src/abi/) define, and the sizes and layouts of their types. It is compiled once
 * against a library's real headers and once against ours (MCP_ABI_OURS); the two outputs must be
 * identical. One library per build: CHECK_LUA, CHECK_CURL or CHECK_CRYPTO. The constant names
 * come from src/abi/ itself (MCP_ABI_NAMES, a file the script generates), so a constant added
 * there is checked without editing this file. C11 for _Generic. */
#include <stddef.h>
#include <stdio.h>

#if defined(CHECK_LUA)
#ifdef MCP_ABI_OURS
#include "abi/lua51.h"
#else
#include <lua.h>
#include <lauxlib.h>
#endif
#elif defined(CHECK_CURL)
#ifdef MCP_ABI_OURS
#include "abi/curl.h"
#else
#include <curl/curl.h>
#endif
#elif defined(CHECK_CRYPTO)
#ifdef MCP_ABI_OURS
#include "abi/crypto.h"
#else
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/rsa.h>
#endif
#else
#error "define CHECK_LUA, CHECK_CURL or CHECK_CRYPTO"
#endif

static void num(const char *name, long long v) { printf("%s = %lld\n", name, v); }
static void str(const char *name, const char *v) { printf("%s = \"%s\"\n", name, v); }

#define V(n) _Generic((n), char * : str, const char * : str, default : num)(#n, (n))
#define SIZE(t) printf("sizeof(%s) = %zu\n", #t, sizeof(t))
#define SIGNED(t) printf("%s is signed: %d\n", #t, (t)-1 < (t)0)
#define OFFSET(t, m) printf("offsetof(%s, %s) = %zu\n", #t, #m, offsetof(t, m))

int main(void)
{
#include MCP_ABI_NAMES

#if defined(CHECK_LUA)
    SIZE(lua_Number);
    printf("lua_Number is floating: %d\n", (lua_Number)0.5 > (lua_Number)0);
    SIZE(lua_Integer);
    SIGNED(lua_Integer);
    SIZE(lua_CFunction);
    SIZE(luaL_Reg);
    OFFSET(luaL_Reg, name);
    OFFSET(luaL_Reg, func);
#elif defined(CHECK_CURL)
    SIZE(curl_off_t);
    SIGNED(curl_off_t);
    SIZE(curl_socket_t);
    SIGNED(curl_socket_t);
    /* enums in the real header, ints in ours: the same size (their signedness follows the values
     * an enum holds, which the calls never depend on) */
    SIZE(CURLcode);
    SIZE(CURLMcode);
    SIZE(CURLUcode);
    SIZE(CURLoption);
    SIZE(CURLMoption);
    SIZE(CURLINFO);
    SIZE(CURLUPart);
    SIZE(CURLMSG);
    SIZE(curlsocktype);
    SIZE(struct curl_slist);
    OFFSET(struct curl_slist, data);
    OFFSET(struct curl_slist, next);
    SIZE(CURLMsg);
    OFFSET(CURLMsg, msg);
    OFFSET(CURLMsg, easy_handle);
    OFFSET(CURLMsg, data);
    OFFSET(CURLMsg, data.whatever);
    OFFSET(CURLMsg, data.result);
    SIZE(struct curl_sockaddr);
    OFFSET(struct curl_sockaddr, family);
    OFFSET(struct curl_sockaddr, socktype);
    OFFSET(struct curl_sockaddr, protocol);
    OFFSET(struct curl_sockaddr, addrlen);
    OFFSET(struct curl_sockaddr, addr);
#elif defined(CHECK_CRYPTO)
    SIZE(pem_password_cb *);
#endif
    return 0;
}
