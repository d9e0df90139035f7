/* `make check-abi` (scripts/check-abi.sh): the real headers of one library, then lua-mcp's own
 * declarations of it (src/abi/) with only their prototypes (MCP_ABI_PROTOTYPES_ONLY), so each of
 * our prototypes redeclares the real function with the real types: a prototype that differs is
 * a compile error ("conflicting types"). The script compiles this with -Wredundant-decls and
 * checks that every function we declare drew that warning, i.e. that the real header declares
 * it too. One library per build: CHECK_LUA, CHECK_CURL or CHECK_CRYPTO. */
#if defined(CHECK_LUA)
#include <lua.h>
#include <lauxlib.h>
#define MCP_ABI_PROTOTYPES_ONLY
#include "abi/lua51.h"
#elif defined(CHECK_CURL)
#define CURL_DISABLE_TYPECHECK /* curl_easy_setopt and friends as functions, not macros */
#include <curl/curl.h>
#define MCP_ABI_PROTOTYPES_ONLY
#include "abi/curl.h"
#elif defined(CHECK_CRYPTO)
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#define MCP_ABI_PROTOTYPES_ONLY
#include "abi/crypto.h"
#else
#error "define CHECK_LUA, CHECK_CURL or CHECK_CRYPTO"
#endif

int main(void) { return 0; }
