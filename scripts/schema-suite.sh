#!/usr/bin/env bash
# make schema-suite: the official JSON Schema Test Suite's draft2020-12 cases against mcp.schema
# (scripts/schema_suite.lua), failures beyond scripts/schema-suite-expected.txt fail the run.
#
# The cases come from Debian's libtest-json-schema-acceptance-perl, which ships the suite (tests/
# and remotes/) as its share dir: used where it is installed, else its .deb is fetched with
# `apt-get download` into build/schema-suite and unpacked there (no root, its Perl dependencies not
# needed). Nothing of the suite is committed. LUA=lua5.4 LUA_BUILDDIR=build/5.4 by default.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PKG=libtest-json-schema-acceptance-perl
SHARE=usr/share/perl5/auto/share/dist/Test-JSON-Schema-Acceptance
WORK=build/schema-suite
LUA=${LUA:-lua5.4}
LUA_BUILDDIR=${LUA_BUILDDIR:-build/5.4}

if [[ -d /$SHARE/tests/draft2020-12 ]]; then
  suite=/$SHARE
  version=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || echo installed)
else
  suite=$WORK/root/$SHARE
  if [[ ! -d $suite/tests/draft2020-12 ]]; then
    mkdir -p "$WORK"
    rm -f "$WORK"/"$PKG"_*.deb
    (cd "$WORK" && apt-get download "$PKG") || {
      echo "schema-suite: cannot download $PKG (run 'apt-get update' first, or: apt-get install $PKG)" >&2
      exit 2
    }
    dpkg-deb -x "$WORK"/"$PKG"_*.deb "$WORK/root"
  fi
  version=$(dpkg-deb -f "$WORK"/"$PKG"_*.deb Version)
fi
echo "schema-suite: $PKG $version, $suite/tests/draft2020-12"

LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./$LUA_BUILDDIR/?.so;;" \
  "$LUA" scripts/schema_suite.lua "$suite/tests/draft2020-12" scripts/schema-suite-expected.txt "$suite/remotes"
