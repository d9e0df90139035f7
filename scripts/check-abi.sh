#!/usr/bin/env bash
# shellcheck disable=SC2086,SC1003 # CSTD and *_CFLAGS are lists of flags, split on purpose
# make check-abi: lua-mcp's own declarations of the Lua 5.1, libcurl and libcrypto ABIs
# (src/abi/, used by `make nvim` where those development headers are missing) against the real
# headers installed here. For each library:
#   1. spec/c/abi_values.c, built against the real headers and against ours, prints every
#      constant src/abi/ defines and the sizes and layouts of its types: the outputs must match;
#   2. spec/c/abi_protos.c redeclares each of our prototypes after the real ones: a differing
#      prototype does not compile, and each must redeclare a function the real header declares;
# then 3. a STANDALONE build reads no header of those libraries (the compiler's -M list of every
# source), and 4. where a mount namespace is allowed (unshare -rm), `make` with STANDALONE=auto
# builds with those header directories hidden and pkg-config unusable, choosing ours for all three.
# Environment (from the Makefile): CC CSTD LUA_ABI_INCDIRS CURL_CFLAGS CRYPTO_CFLAGS SRCS MAKE.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CC=${CC:-cc}
CSTD=${CSTD:--std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE}
OUT=build/abi-check
rm -rf "$OUT" && mkdir -p "$OUT"
fail=0
bad() { echo "check-abi: FAIL: $*" >&2; fail=1; }
# A library whose headers are missing is skipped, except under CI (make deps installs them all).
missing() {
  if [ -n "${CI:-}" ]; then bad "$1: no development headers to check against"; else echo "check-abi: $1: no development headers here, skipped"; fi
}

# check_lib NAME OURS_HEADER CHECK_MACRO "REAL_CFLAGS" PROBE_HEADERS...
check_lib() {
  local name=$1 ours=$2 macro=$3 real_cflags=$4 tag
  shift 4
  tag=$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '_')
  local probe
  probe=$(for h in "$@"; do printf '#include <%s>\n' "$h"; done)
  if ! printf '%s\n' "$probe" | $CC $CSTD $real_cflags -E -x c - -o /dev/null 2>/dev/null; then
    missing "$name"
    return 0
  fi
  # 1. values and layouts
  local names=$OUT/$tag.names.h
  sed -n 's/^#define \([A-Z][A-Za-z0-9_]*\) .*/    V(\1);/p' "src/abi/$ours" >"$names"
  local n
  n=$(wc -l <"$names")
  $CC -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Isrc $real_cflags \
    -D"$macro" -DMCP_ABI_NAMES="\"$PWD/$names\"" -o "$OUT/$tag.real" spec/c/abi_values.c
  $CC -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Isrc \
    -D"$macro" -DMCP_ABI_OURS -DMCP_ABI_NAMES="\"$PWD/$names\"" -o "$OUT/$tag.ours" spec/c/abi_values.c
  "$OUT/$tag.real" >"$OUT/$tag.real.txt"
  "$OUT/$tag.ours" >"$OUT/$tag.ours.txt"
  if diff -u --label "real headers ($name)" --label "src/abi/$ours" "$OUT/$tag.real.txt" "$OUT/$tag.ours.txt"; then
    echo "check-abi: $name: $n constants and $(($(wc -l <"$OUT/$tag.real.txt") - n)) sizes/offsets agree with src/abi/$ours"
  else
    bad "$name: src/abi/$ours differs from the real headers (diff above)"
  fi
  # 2. prototypes: each of ours redeclares a real one, with the same type
  if ! $CC $CSTD -Wall -Wextra -Werror -Wno-error=redundant-decls -Wredundant-decls -fsyntax-only -Isrc \
    $real_cflags -D"$macro" spec/c/abi_protos.c 2>"$OUT/$tag.protos.log"; then
    grep -A4 'error:' "$OUT/$tag.protos.log" >&2 || cat "$OUT/$tag.protos.log" >&2
    bad "$name: a prototype in src/abi/$ours does not match the real one"
    return 0
  fi
  sed -n "s/.*redundant redeclaration of .\([A-Za-z0-9_]*\).*/\1/p" "$OUT/$tag.protos.log" | sort -u >"$OUT/$tag.redeclared"
  $CC $CSTD -fsyntax-only -Isrc -aux-info "$OUT/$tag.aux" "src/abi/$ours"
  grep "src/abi/$ours:" "$OUT/$tag.aux" | sed 's/ *(.*//; s/.*[ *]//' | sort -u >"$OUT/$tag.declared"
  local extra
  extra=$(comm -23 "$OUT/$tag.declared" "$OUT/$tag.redeclared" | tr '\n' ' ')
  if [ -n "$extra" ]; then
    bad "$name: declared in src/abi/$ours but not by the real headers: $extra"
  else
    echo "check-abi: $name: $(wc -l <"$OUT/$tag.declared") prototypes agree with the real ones"
  fi
}

n_lua=0
for d in ${LUA_ABI_INCDIRS:-}; do
  [ -f "$d/lua.h" ] || continue
  n_lua=$((n_lua + 1))
  check_lib "Lua 5.1 API ($d)" lua51.h CHECK_LUA "-I$d" lua.h lauxlib.h
done
[ "$n_lua" -gt 0 ] || missing "Lua 5.1 API (LuaJIT or PUC 5.1 lua.h)"
check_lib "libcurl" curl.h CHECK_CURL "${CURL_CFLAGS:-}" curl/curl.h
check_lib "libcrypto" crypto.h CHECK_CRYPTO "${CRYPTO_CFLAGS:-}" openssl/evp.h openssl/pem.h

# 3. a STANDALONE build reads none of their headers (every header each source reads, from -M)
leaks=$(for f in ${SRCS:?}; do
  $CC $CSTD -DMCP_TEST_HOOKS -DMCP_OWN_LUA_ABI -DMCP_OWN_CURL_ABI -DMCP_OWN_CRYPTO_ABI -Isrc -M "$f"
done | tr -d '\\' | tr ' ' '\n' | grep -E '(^|/)(curl|openssl|luajit[^/]*|lua5\.[0-9])/|(^|/)(lua|lauxlib|lualib|luaconf|luajit)\.h$' | sort -u || true)
if [ -n "$leaks" ]; then
  bad "a STANDALONE build reads these library headers: $leaks"
else
  echo "check-abi: a STANDALONE build of $(wc -w <<<"$SRCS") sources reads no Lua, libcurl or OpenSSL header"
fi

# 4. STANDALONE=auto with the headers hidden (a private mount namespace, where allowed)
hide=""
for d in /usr/include/lua5.1 /usr/include/luajit-2.1 /usr/include/luajit-2.0 /usr/include/openssl \
  /usr/include/curl /usr/include/*-linux-gnu/curl /usr/include/*-linux-gnu/openssl; do
  [ -d "$d" ] && hide="$hide $d"
done
pc=$(command -v pkg-config || true)
if unshare -rm true 2>/dev/null; then
  if unshare -rm sh -c "for d in $hide; do mount -t tmpfs none \$d || exit 1; done
      ${pc:+mount --bind /dev/null $pc || exit 1}
      exec ${MAKE:-make} --no-print-directory build LUA=luajit STANDALONE=auto TEST_HOOKS=0 \
        BUILDDIR=$OUT/hidden-headers" >"$OUT/hidden-headers.log" 2>&1 &&
    grep -q -- '-DMCP_OWN_LUA_ABI -DMCP_OWN_CURL_ABI -DMCP_OWN_CRYPTO_ABI' "$OUT/hidden-headers.log" &&
    [ -f "$OUT/hidden-headers/mcp/core.so" ]; then
    echo "check-abi: with$hide hidden and no pkg-config, STANDALONE=auto chose our declarations for all three and built"
  else
    cat "$OUT/hidden-headers.log" >&2
    bad "STANDALONE=auto with the headers hidden did not build on our declarations"
  fi
else
  echo "check-abi: unshare -rm not permitted here, the hidden-headers build is skipped"
fi

[ "$fail" = 0 ] && echo "check-abi: ok"
exit "$fail"
