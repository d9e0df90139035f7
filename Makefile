# lua-mcp build, test and CI entry points (GNU make).
#
#   make [build]            build build/$(ABI)/mcp/core.so for $(LUA) (no dependency set-up)
#   make test               deps + build + busted with the matching interpreter
#   make test LUA=luajit    same for LuaJIT (LUA = 5.4 5.3 5.2 5.1 luajit)
#   make help               every target and variable
#
# Each Lua ABI has its own build directory (build/5.4, build/luajit, ...), and the
# tests put only that directory on package.cpath, so a module built for one
# interpreter is never loaded by another.

LUA ?= 5.4

ifeq ($(LUA),5.4)
  LUAI := lua5.4
  LUA_PC := lua5.4
  LUA_INC_FALLBACK := /usr/include/lua5.4
  ABI := 5.4
else ifeq ($(LUA),5.3)
  LUAI := lua5.3
  LUA_PC := lua5.3
  LUA_INC_FALLBACK := /usr/include/lua5.3
  ABI := 5.3
else ifeq ($(LUA),5.2)
  LUAI := lua5.2
  LUA_PC := lua5.2
  LUA_INC_FALLBACK := /usr/include/lua5.2
  ABI := 5.2
else ifeq ($(LUA),5.1)
  LUAI := lua5.1
  LUA_PC := lua5.1
  LUA_INC_FALLBACK := /usr/include/lua5.1
  ABI := 5.1
else ifeq ($(LUA),luajit)
  LUAI := luajit
  LUA_PC := luajit
  LUA_INC_FALLBACK := /usr/include/luajit-2.1
  ABI := luajit
else
  $(error LUA=$(LUA) is not supported; use one of: 5.4 5.3 5.2 5.1 luajit)
endif

PKG_CONFIG ?= pkg-config

# Lua headers: pkg-config first, the Debian path as fallback. Override with LUA_INCDIR=...
LUA_INCDIR ?= $(or $(patsubst -I%,%,$(firstword $(filter -I%,$(shell $(PKG_CONFIG) --cflags-only-I $(LUA_PC) 2>/dev/null)))),$(LUA_INC_FALLBACK))

# libcurl and libcrypto: only their headers at build time. The module opens them on first use
# (src/lazylib.c), so a stdio-only host never maps them; it links only what dlopen and
# pthread_once need. Not liblua: the interpreter provides the Lua API symbols.
CURL_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
CRYPTO_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags libcrypto 2>/dev/null)
LAZY_LIBS ?= -ldl -pthread

# Own declarations instead of development headers (src/abi/, see its README): OWN_ABI lists the
# libraries built on lua-mcp's own declarations of their ABI (lua: the Lua 5.1 API, so only for
# LUA=luajit or 5.1; curl; crypto), with no pkg-config and no header of theirs read. STANDALONE=1
# means all three; STANDALONE=auto (what `make nvim` uses) each whose headers the compiler does
# not find; STANDALONE=0 or empty (the default) none. Such a build has its own build directory.
STANDALONE ?=
HASH := \#
# $(call have_headers,CFLAGS,HEADERS): non-empty when $(CC) finds every header.
have_headers = $(shell printf '$(foreach h,$(2),$(HASH)include <$(h)>\n)' | $(CC) $(1) -E -x c - -o /dev/null 2>/dev/null && echo yes)
ifeq ($(STANDALONE),1)
  OWN_ABI := lua curl crypto
else ifeq ($(STANDALONE),auto)
  OWN_ABI := $(if $(call have_headers,-I$(LUA_INCDIR),lua.h lauxlib.h lualib.h),,lua) \
             $(if $(call have_headers,$(CURL_CFLAGS),curl/curl.h),,curl) \
             $(if $(call have_headers,$(CRYPTO_CFLAGS),openssl/evp.h openssl/pem.h),,crypto)
else ifneq ($(filter-out 0,$(STANDALONE)),)
  $(error STANDALONE=$(STANDALONE): use 1 (own declarations for all), auto (for what has no headers) or 0)
endif
OWN_ABI := $(sort $(strip $(OWN_ABI)))
ifneq ($(filter-out lua curl crypto,$(OWN_ABI)),)
  $(error OWN_ABI=$(OWN_ABI): only lua, curl and crypto have own declarations)
endif
# Checked when something is built (a `make nvim STANDALONE=1` is parsed with the default LUA first).
OWN_ABI_ERROR := $(if $(filter lua,$(OWN_ABI)),$(if $(filter 5.1 luajit,$(ABI)),,the own Lua \
  declarations (src/abi/lua51.h) are the Lua 5.1 ABI: build with LUA=luajit or LUA=5.1, not LUA=$(LUA)))
OWN_SUFFIX := $(if $(OWN_ABI),-own-$(subst $(eval) ,-,$(OWN_ABI)))
# Header flags: the library's own (pkg-config, LUA_INCDIR) or the switch to src/abi/.
LIB_CFLAGS = $(if $(filter lua,$(OWN_ABI)),-DMCP_OWN_LUA_ABI,-I$(LUA_INCDIR)) \
             $(if $(filter curl,$(OWN_ABI)),-DMCP_OWN_CURL_ABI,$(CURL_CFLAGS)) \
             $(if $(filter crypto,$(OWN_ABI)),-DMCP_OWN_CRYPTO_ABI,$(CRYPTO_CFLAGS))

# LOOP=poll builds the poll(2) backend (-DMCP_LOOP_POLL, the non-Linux path) in its own
# directory; the specs learn it from MCP_TEST_LOOP_BACKEND.
LOOP ?= epoll
ifeq ($(LOOP),poll)
  LOOP_CFLAGS := -DMCP_LOOP_POLL
  BUILDDIR ?= build/$(ABI)$(OWN_SUFFIX)-poll
else ifeq ($(LOOP),epoll)
  LOOP_CFLAGS :=
  BUILDDIR ?= build/$(ABI)$(OWN_SUFFIX)
else
  $(error LOOP=$(LOOP) is not supported; use epoll (the default) or poll)
endif
export MCP_TEST_LOOP_BACKEND := $(LOOP)
OBJDIR := $(BUILDDIR)/obj
MODULE := $(BUILDDIR)/mcp/core.so

# Test hooks (src/testing/*.c built with -DMCP_TEST_HOOKS: core._sse_parse) are in every build
# made here, since the specs use them; `make nvim` (TEST_HOOKS=0) and the rock leave them out.
TEST_HOOKS ?= 1
SRCS := $(sort $(wildcard src/*.c src/transports/*.c) $(if $(filter 1,$(TEST_HOOKS)),$(wildcard src/testing/*.c)))
OBJS := $(SRCS:%.c=$(OBJDIR)/%.o)
DEPS := $(OBJS:.o=.d)

CSTD := -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARNFLAGS ?= -Wall -Wextra -Werror
OPTFLAGS ?= -O2 -g
# Extra flags for sanitizer builds (set by `make asan`); CFLAGS/LDFLAGS are for the user.
SANFLAGS ?=
CFLAGS ?=
LDFLAGS ?=

ALL_CFLAGS = $(CSTD) $(WARNFLAGS) $(OPTFLAGS) $(SANFLAGS) $(LOOP_CFLAGS) $(if $(filter 1,$(TEST_HOOKS)),-DMCP_TEST_HOOKS) -fPIC -fvisibility=hidden \
             -Isrc $(LIB_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SHARED_LDFLAGS) $(SANFLAGS) $(LDFLAGS)
# macOS (read, never built in CI: Debian has no toolchain targeting it): a Lua module there is a
# bundle whose Lua API symbols stay undefined until the interpreter loads it.
UNAME_S := $(shell uname -s 2>/dev/null)
SHARED_LDFLAGS := $(if $(filter Darwin,$(UNAME_S)),-bundle -undefined dynamic_lookup,-shared)

# Test runner. Test servers started by the specs use $(MCP_TEST_LUA).
BUSTED ?= /usr/bin/busted
BUSTED_LPATH := ./lua/?.lua;./lua/?/init.lua;./spec/?.lua
BUSTED_FLAGS ?=
SPEC ?= spec
MCP_TEST_LUA ?= $(LUAI)

# The official reference server, installed by `make deps` (scripts/deps.sh).
EVERYTHING_VERSION ?= 2026.8.31
NPM_PREFIX := .deps/npm
EVERYTHING_BIN := $(CURDIR)/$(NPM_PREFIX)/node_modules/.bin/mcp-server-everything

export MCP_TEST_LUA
export MCP_EVERYTHING_VERSION := $(EVERYTHING_VERSION)
export MCP_EVERYTHING_SERVER := $(EVERYTHING_BIN)
# The official filesystem server (spec/sandbox_spec.lua), installed next to it.
MCP_FILESYSTEM_SERVER ?= $(CURDIR)/$(NPM_PREFIX)/node_modules/.bin/mcp-server-filesystem
export MCP_FILESYSTEM_SERVER

# Sanitizers (gcc's runtimes, preloaded into the unsanitized interpreter).
ASAN_BUILDDIR := build/asan-$(ABI)$(OWN_SUFFIX)
MEMCHECK_BUILDDIR := build/memcheck-5.4
# valgrind's busted processes at once (scripts/shards.sh splits the spec files; CI runs 2)
MEMCHECK_SHARDS ?= 1
# Each spec file's time under valgrind, as the last memcheck measured it (spec/guard.lua writes
# it), and the times shards.sh deals the files by (make memcheck-weights copies the first to the
# second, committed: measured on one machine, they still say which files cost most).
MEMCHECK_TIMES := $(MEMCHECK_BUILDDIR)/spec_times.txt
MEMCHECK_WEIGHTS ?= scripts/memcheck_weights.txt
ASAN_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_LIBS = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)
# These variables reach every child the specs start (node, lua5.4 test servers, sh)
# unless the spawner cleans the environment; they are harmless there, but avoid
# fast_unwind_on_malloc=0 in ASAN_OPTS: it makes an inheriting node ~5x slower.
# quarantine_size_mb=16 (ASan's default is 256): freed memory is held back that long, so the
# hostile matrix's RSS bounds measured a spec's own frees (a spec run alone grew 200 MiB).
ASAN_OPTS ?= detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:quarantine_size_mb=16
ASAN_ENV = LD_PRELOAD="$(ASAN_LIBS)" \
           ASAN_OPTIONS=$(ASAN_OPTS) \
           LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
           MCP_TEST_SANITIZER=asan

VALGRIND ?= valgrind
VALGRIND_FLAGS ?= --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
                  --child-silent-after-fork=yes --trace-children=no --suppressions=.ci/valgrind.supp \
                  --num-callers=30

ROCKSPEC := lua-mcp-0.1.0-1.rockspec
ROCKS_TREE ?= build/rocks
ROCK_FLAGS ?= --tree=$(ROCKS_TREE)

LUA_FILES = $(shell find lua plugin spec examples bench interop oidc -name '*.lua' 2>/dev/null | sort) $(ROCKSPEC) bin/mcp-lua
C_FORMAT_FILES = $(sort $(wildcard src/*.c src/*.h src/abi/*.h src/transports/*.c src/transports/*.h src/testing/*.c spec/c/*.c fuzz/*.c fuzz/*.h))

.PHONY: all build deps doc check-doc docs check-docs run dist dist-check test check soak test-c test-all lint-luacheck hostile demo asan asan-build memcheck memcheck-weights fuzz fuzz-build fuzz-smoke nvim nvim-install own-abi-ok check-abi test-nvim \
        conformance schema-suite interop oidc clean distclean lint \
        format-check check-rockspec rock rock-build rock-install clean-rock-artifacts help lint-lua lint-c lint-abi lint-structure

all: build

# The ABI tag beside core.so (mcp/core.abi), read by lua/mcp/util/abi.lua before it loads the
# module, so a module built for another Lua is refused by name instead of by the linker. A build
# on lua-mcp's own Lua declarations (src/abi/lua51.h) uses only the 5.1 API: tagged 5.1.
ABI_TAG := $(BUILDDIR)/mcp/core.abi
ABI_TAG_VALUE := $(if $(filter lua,$(OWN_ABI)),5.1,$(ABI))
build: $(MODULE) $(ABI_TAG)

$(ABI_TAG): Makefile
	@mkdir -p $(@D)
	@echo $(ABI_TAG_VALUE) > $@

$(MODULE): $(OBJS)
	@if [ -z "$(OBJS)" ]; then echo "error: no C sources under src/ (src/*.c, src/transports/*.c)" >&2; exit 1; fi
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $(OBJS) $(LAZY_LIBS)

$(OBJDIR)/%.o: %.c | own-abi-ok
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

own-abi-ok:
	@$(if $(OWN_ABI_ERROR),echo "error: $(OWN_ABI_ERROR)" >&2; exit 1,:)

# Flag changes in this file rebuild everything (cheap: the core is small).
$(OBJS): Makefile

-include $(DEPS)

deps:
	@bash scripts/deps.sh

test: deps
	@$(MAKE) --no-print-directory check

# The same without `deps`: nothing is installed, so it runs as any user once the build tools,
# Lua headers, libcurl headers and busted are there (the specs that need node or the npm peer
# skip or fail with a message naming what is missing).
check: build test-c
	$(LUAI) $(BUSTED) --lpath='$(BUSTED_LPATH)' --cpath='./$(BUILDDIR)/?.so' $(BUSTED_FLAGS) $(SPEC)

# C unit tests of parts that stand alone (spec/c/*_test.c): the event loop, compiled without Lua
# or any transport, once per backend (epoll and poll(2)); the SSRF guard's address classes; the
# guard pages of the stacks a start's children run on.
CTEST_DIR := $(BUILDDIR)/ctest
CTESTS := $(CTEST_DIR)/loop_test $(CTEST_DIR)/loop_test_poll $(CTEST_DIR)/addrguard_test $(CTEST_DIR)/spawn_stack_test

test-c: $(CTESTS)
	@set -e; for t in $(CTESTS); do $$t; done

$(CTEST_DIR)/addrguard_test: spec/c/addrguard_test.c src/transports/addrguard.c src/transports/addrguard.h Makefile
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARNFLAGS) $(OPTFLAGS) $(SANFLAGS) -Isrc $(CFLAGS) -o $@ spec/c/addrguard_test.c src/transports/addrguard.c $(LDFLAGS)

$(CTEST_DIR)/spawn_stack_test: spec/c/spawn_stack_test.c src/transports/spawn_stack.c src/transports/spawn_stack.h Makefile
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARNFLAGS) $(OPTFLAGS) $(SANFLAGS) -Isrc $(CFLAGS) -o $@ spec/c/spawn_stack_test.c src/transports/spawn_stack.c $(LDFLAGS)

$(CTEST_DIR)/loop_test: spec/c/loop_test.c src/loop.c src/loop.h Makefile
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARNFLAGS) $(OPTFLAGS) $(SANFLAGS) -Isrc $(CFLAGS) -o $@ spec/c/loop_test.c src/loop.c $(LDFLAGS)

$(CTEST_DIR)/loop_test_poll: spec/c/loop_test.c src/loop.c src/loop.h Makefile
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARNFLAGS) $(OPTFLAGS) $(SANFLAGS) -DMCP_LOOP_POLL -Isrc $(CFLAGS) -o $@ spec/c/loop_test.c src/loop.c $(LDFLAGS)

test-all: deps
	@$(MAKE) --no-print-directory test LUA=5.4
	@$(MAKE) --no-print-directory test LUA=luajit
	@for v in 5.1 5.3 5.2; do \
	  if command -v lua$$v >/dev/null 2>&1 && [ -f /usr/include/lua$$v/lua.h ]; then \
	    $(MAKE) --no-print-directory test LUA=$$v || exit 1; \
	  else echo "test-all: lua$$v or its headers missing, skipping LUA=$$v"; fi; \
	done

demo: deps
	@$(MAKE) --no-print-directory build
	env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4 \
	  LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./$(BUILDDIR)/?.so;;' \
	  $(LUAI) examples/quickstart.lua

# make run FILE=script.lua [ARGS='...']: build, then run a script with this checkout's Lua layer
# and C module on the paths (the README's snippets run this way as pasted).
run:
	@test -n "$(FILE)" || { echo "usage: make run FILE=script.lua [ARGS='...'] [LUA=5.4]" >&2; exit 2; }
	@$(MAKE) --no-print-directory build
	@env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4 \
	  LUA_PATH='$(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;;' LUA_CPATH='$(CURDIR)/$(BUILDDIR)/?.so;;' \
	  $(LUAI) $(FILE) $(ARGS)

# Neovim loads C modules through its own Lua: LuaJIT 2.1 (Debian, most builds) or PUC Lua 5.1
# on a few distributions. `make nvim` builds that ABI (never 5.2+; LUA= given to make is ignored
# here) and installs it as lua/mcp/core.so, where Neovim's runtimepath loader finds it beside the
# Lua files: add this checkout to 'runtimepath' (or let a plugin manager do it, build = "make nvim").
NVIM ?= nvim
NVIM_ABI ?= luajit
NVIM_SPECS ?= spec/nvim/adapter.lua spec/nvim/keyring.lua spec/nvim/plugin.lua spec/nvim/oauth.lua spec/nvim/background.lua spec/nvim/health.lua
NVIM_TIMEOUT ?= 300

# `make nvim` needs only a C compiler, make and libc's headers: the Lua, libcurl and OpenSSL
# headers are used when the compiler finds them, lua-mcp's own declarations of those ABIs
# (src/abi/) otherwise (STANDALONE=auto; STANDALONE=1 always uses ours, STANDALONE=0 never).
# libcurl and libcrypto are opened at run time either way; a module built on our Lua
# declarations uses only the Lua 5.1 API, so it loads into LuaJIT and PUC 5.1 alike.
nvim:
	@case "$(NVIM_ABI)" in luajit|5.1) ;; *) echo "nvim: NVIM_ABI must be luajit or 5.1 (Neovim's Lua ABIs), not '$(NVIM_ABI)'" >&2; exit 1;; esac
	@$(MAKE) --no-print-directory nvim-install LUA=$(NVIM_ABI) STANDALONE=$(or $(STANDALONE),auto) \
	  BUILDDIR='build/nvim-$$(ABI)$$(OWN_SUFFIX)' TEST_HOOKS=0

nvim-install: build
	@echo "nvim: $(MODULE): $(if $(OWN_ABI),lua-mcp's own declarations (src/abi/) for: $(OWN_ABI),the installed headers only)"
	@# a new file renamed over the old one: a running Neovim keeps its mapping of the old module
	install -m 755 $(MODULE) lua/mcp/core.so.new && mv -f lua/mcp/core.so.new lua/mcp/core.so

# lua-mcp's own ABI declarations (src/abi/) against the installed Lua 5.1/LuaJIT, libcurl and
# OpenSSL headers, and a STANDALONE build reading none of those (scripts/check-abi.sh; CI).
LUA_ABI_INCDIRS ?= $(sort $(foreach p,luajit lua5.1,$(patsubst -I%,%,$(filter -I%,$(shell \
  $(PKG_CONFIG) --cflags-only-I $(p) 2>/dev/null)))) /usr/include/luajit-2.1 /usr/include/lua5.1)
check-abi:
	@CC='$(CC)' CSTD='$(CSTD)' LUA_ABI_INCDIRS='$(LUA_ABI_INCDIRS)' CURL_CFLAGS='$(CURL_CFLAGS)' \
	  CRYPTO_CFLAGS='$(CRYPTO_CFLAGS)' MAKE='$(MAKE)' \
	  SRCS='$(sort $(wildcard src/*.c src/transports/*.c src/testing/*.c))' bash scripts/check-abi.sh

# Headless Neovim specs (spec/nvim/*.lua, their own small harness; busted does not run in Neovim).
# The example servers they start run under $(MCP_TEST_LUA).
test-nvim: deps
	@$(MAKE) --no-print-directory nvim
	@command -v $(NVIM) >/dev/null 2>&1 || { echo "test-nvim: $(NVIM) not found (apt-get install neovim, or make deps)" >&2; exit 1; }
	@$(NVIM) --version | head -n 3
	@rc=0; for f in $(NVIM_SPECS); do \
	  echo "== $(NVIM) --headless: $$f"; \
	  env -u LUA_PATH -u LUA_CPATH -u LUA_INIT timeout $(NVIM_TIMEOUT) \
	    $(NVIM) --headless -u NONE -i NONE -n --cmd 'set rtp^=$(CURDIR)' -c "luafile $$f" -c 'cquit 2' </dev/null \
	    || { echo "test-nvim: $$f failed (exit $$?)"; rc=1; }; \
	done; exit $$rc

# The hostile-server matrix (spec/hostile/): also part of `make test`; here on $(LUA), then under
# ASan+UBSan. Each case asserts its bound (memory, time, fds) and an unharmed second client.
HOSTILE_SPEC ?= spec/hostile
hostile: deps
	@$(MAKE) --no-print-directory test SPEC=$(HOSTILE_SPEC)
	@$(MAKE) --no-print-directory asan SPEC=$(HOSTILE_SPEC)

asan-build:
	@$(MAKE) --no-print-directory build BUILDDIR=$(ASAN_BUILDDIR) OPTFLAGS='-O1 -g' SANFLAGS='$(ASAN_SANFLAGS)'

# Children started by the specs inherit LD_PRELOAD unless the spawner cleans the
# environment (the C core does); specs that use io.popen/os.execute can check
# MCP_TEST_SANITIZER and prefix `env -u LD_PRELOAD`.
asan: deps
	@$(MAKE) --no-print-directory asan-build
	@$(MAKE) --no-print-directory test-c BUILDDIR=$(ASAN_BUILDDIR) OPTFLAGS='-O1 -g' SANFLAGS='$(ASAN_SANFLAGS)'
	@for f in $(ASAN_LIBS); do [ -f "$$f" ] || { echo "asan: $$f not found ($(CC) -print-file-name)" >&2; exit 1; }; done
	$(ASAN_ENV) $(LUAI) $(BUSTED) --lpath='$(BUSTED_LPATH)' --cpath='./$(ASAN_BUILDDIR)/?.so' $(BUSTED_FLAGS) $(SPEC)

# PUC Lua 5.4 only (LuaJIT is not valgrind-clean), built in a directory of its own so that it can
# run beside `make test LUA=5.4` (CI starts it first). The hostile matrix (hostile_*_spec.lua) is left
# out: its memory bounds mean nothing under valgrind and its floods would take minutes; `make
# hostile` runs it under ASan.
memcheck: deps
	@$(MAKE) --no-print-directory build LUA=5.4 BUILDDIR=$(MEMCHECK_BUILDDIR)
	@rm -f $(MEMCHECK_TIMES)
	MCP_TEST_SANITIZER=valgrind MCP_SPEC_TIMES=$(CURDIR)/$(MEMCHECK_TIMES) SHARD_WEIGHTS=$(MEMCHECK_WEIGHTS) \
	  bash scripts/shards.sh $(MEMCHECK_SHARDS) '$(SPEC)' -- $(VALGRIND) $(VALGRIND_FLAGS) \
	  lua5.4 $(BUSTED) --lpath='$(BUSTED_LPATH)' --cpath='./$(MEMCHECK_BUILDDIR)/?.so' --exclude-pattern='^hostile_' $(BUSTED_FLAGS)

# The times the last `make memcheck` measured become the shards' weights; a file it did not run
# (a memcheck of some SPEC only) keeps its weight.
memcheck-weights:
	@test -s $(MEMCHECK_TIMES) || { echo "memcheck-weights: no $(MEMCHECK_TIMES): run make memcheck first" >&2; exit 1; }
	@{ echo "# ms path: each spec file's time under valgrind (make memcheck, then make memcheck-weights)"; \
	  awk '/^[0-9]+ / { w[$$2] = $$1 } END { for (f in w) print w[f], f }' $$(test -r $(MEMCHECK_WEIGHTS) && echo $(MEMCHECK_WEIGHTS)) $(MEMCHECK_TIMES) /dev/null \
	    | sort -k1,1nr -k2; } > $(MEMCHECK_WEIGHTS).new
	@mv $(MEMCHECK_WEIGHTS).new $(MEMCHECK_WEIGHTS)
	@echo "memcheck-weights: $$(grep -vc '^#' $(MEMCHECK_WEIGHTS)) files in $(MEMCHECK_WEIGHTS)"

# libFuzzer targets (fuzz/<name>_fuzz.c), built with clang and its libFuzzer runtime (Debian 12:
# clang-14 and libclang-rt-14-dev, which clang-14 only recommends; scripts/deps.sh installs both,
# since CI runs the smoke): sse (the SSE parser), stdio (the stdio framing and the id scan
# of dropped messages), origin (the redirect policy's origin check, against libcurl's URL
# parser), json (the decoder against the encoder's round trip; links liblua5.4), header (the
# x-mcp-header value encoding of lua/mcp/tools/headers.lua in an embedded Lua 5.4, set up by
# fuzz/lua_embed.c), wwwauth (the
# WWW-Authenticate parsing of lua/mcp/auth/discovery.lua, the same way), term (src/term_escape.c
# against lua/mcp/util/term.lua's escape, the same way). `make fuzz FUZZ_TARGET=stdio` runs one for FUZZ_SECONDS; `make fuzz-smoke` runs each
# for FUZZ_SMOKE_SECONDS (CI). New inputs are kept in build/fuzz/corpus/<name>; the committed
# seeds in fuzz/corpus/<name> are only read; crashes are written to build/fuzz/crash-*. Extra
# libFuzzer flags: FUZZ_FLAGS=-jobs=4 ...
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_FLAGS ?=
FUZZ_TARGET ?= sse
FUZZ_TARGETS := sse stdio origin json header wwwauth term
FUZZ_DIR := build/fuzz
FUZZ_CFLAGS := $(CSTD) $(WARNFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=all -Isrc
FUZZ_SRCS_sse := fuzz/sse_fuzz.c src/transports/sse_parser.c src/buf.c
FUZZ_SRCS_stdio := fuzz/stdio_fuzz.c src/transports/framing.c src/transports/idscan.c src/buf.c
FUZZ_SRCS_origin := fuzz/origin_fuzz.c src/transports/origin.c
FUZZ_LIBS_origin = $(CURL_CFLAGS) $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null || echo -lcurl)
FUZZ_SRCS_json := fuzz/json_fuzz.c src/json_decode.c src/json_encode.c src/json_resume.c src/bigstr.c src/gc_hold.c \
  src/loop.c src/buf.c
# In-place decoding logs only strings of 4 KiB and more for its undo; the fuzzer's inputs are
# shorter, so its build logs from 16 bytes.
FUZZ_DEFS_json := -DMCP_JSON_UNDO_LOG_MIN=16
FUZZ_LIBS_json = -I$(LUA_INCDIR) $(shell $(PKG_CONFIG) --libs lua5.4 2>/dev/null || echo -llua5.4) -lm
FUZZ_SRCS_header := fuzz/header_fuzz.c fuzz/lua_embed.c src/digest.c src/crypto_api.c src/lazylib.c
FUZZ_LIBS_header = $(FUZZ_LIBS_json) $(CRYPTO_CFLAGS) -ldl -pthread
FUZZ_SRCS_wwwauth := fuzz/wwwauth_fuzz.c fuzz/lua_embed.c
FUZZ_LIBS_wwwauth = $(FUZZ_LIBS_json)
FUZZ_SRCS_term := fuzz/term_fuzz.c fuzz/lua_embed.c src/term_escape.c
FUZZ_LIBS_term = $(FUZZ_LIBS_json)

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%_fuzz)

.SECONDEXPANSION:
$(FUZZ_DIR)/%_fuzz: $$(FUZZ_SRCS_$$*) $(wildcard src/*.h src/transports/*.h fuzz/*.h) Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_DEFS_$*) -o $@ $(FUZZ_SRCS_$*) $(FUZZ_LIBS_$*) || { echo "fuzz: '$(FUZZ_CC) -fsanitize=fuzzer' failed;" \
	  "on Debian: apt-get install clang libclang-rt-14-dev" >&2; exit 1; }

fuzz: $(FUZZ_DIR)/$(FUZZ_TARGET)_fuzz
	@mkdir -p $(FUZZ_DIR)/corpus/$(FUZZ_TARGET)
	$(FUZZ_DIR)/$(FUZZ_TARGET)_fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(if $(wildcard fuzz/$(FUZZ_TARGET).dict),-dict=fuzz/$(FUZZ_TARGET).dict) \
	  $(FUZZ_FLAGS) $(FUZZ_DIR)/corpus/$(FUZZ_TARGET) fuzz/corpus/$(FUZZ_TARGET)

fuzz-smoke: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  $(MAKE) --no-print-directory fuzz FUZZ_TARGET=$$t FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) || exit 1; done

# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned; installed into
# .deps/conformance-<version>) against examples/conformance/client.lua: legs 2025-11-25,
# 2026-07-28, all (alpha) and 0.1.16 (released), one table, and a failure on any regression
# against conformance/expected-failures*.yml. Needs node and npm. See conformance/run.sh.
CONFORMANCE_VERSION ?= 0.2.0-alpha.12
CONFORMANCE_STABLE_VERSION ?= 0.1.16
CONFORMANCE_TIMEOUT ?= 60000

conformance: deps
	@$(MAKE) --no-print-directory build
	CONFORMANCE_VERSION=$(CONFORMANCE_VERSION) CONFORMANCE_STABLE_VERSION=$(CONFORMANCE_STABLE_VERSION) \
	  CONFORMANCE_TIMEOUT=$(CONFORMANCE_TIMEOUT) LUA=$(LUAI) LUA_BUILDDIR=$(BUILDDIR) \
	  bash conformance/run.sh

# The official JSON Schema Test Suite's draft2020-12 cases against mcp.schema (scripts/schema-suite.sh:
# the suite from Debian's libtest-json-schema-acceptance-perl, never committed; docs/AGENTS.md).
schema-suite:
	@$(MAKE) --no-print-directory build
	LUA=$(LUAI) LUA_BUILDDIR=$(BUILDDIR) bash scripts/schema-suite.sh

# The differential interop suite (interop/, docs/INTEROP.md): real servers from the npm registry,
# pinned, installed by interop/install.sh into INTEROP_PREFIX (idempotent), each seen by lua-mcp and
# by the official TypeScript SDK client and compared as canonical JSON. INTEROP_ARGS: --only=id,id
# --show=id --keep (interop/run.lua).
INTEROP_PREFIX ?= .deps/interop
INTEROP_ARGS ?=

interop: deps
	@$(MAKE) --no-print-directory build
	INTEROP_PREFIX='$(INTEROP_PREFIX)' LUA=$(LUAI) bash interop/install.sh
	env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4 \
	  LUA_PATH='./lua/?.lua;./lua/?/init.lua;./interop/?.lua;;' LUA_CPATH='./$(BUILDDIR)/?.so;;' \
	  $(LUAI) interop/run.lua --prefix='$(abspath $(INTEROP_PREFIX))' $(INTEROP_ARGS)

# The oidc leg (oidc/, docs/OAUTH.md "A real authorization server"): the interactive provider against
# oidc-provider (npm, OpenID-certified) in front of an MCP server made with the official TS SDK that
# verifies its JWT access tokens. oidc/install.sh installs the pinned packages into OIDC_PREFIX
# (idempotent); oidc/oidc_spec.lua is not part of `make test` (it needs them).
OIDC_PREFIX ?= .deps/oidc

oidc: deps
	@$(MAKE) --no-print-directory build
	OIDC_PREFIX='$(OIDC_PREFIX)' bash oidc/install.sh
	OIDC_PREFIX='$(abspath $(OIDC_PREFIX))' MCP_TEST_LUA=$(LUAI) \
	  $(LUAI) $(BUSTED) --lpath='$(BUSTED_LPATH)' --cpath='./$(BUILDDIR)/?.so' $(BUSTED_FLAGS) oidc/oidc_spec.lua

# Benchmarks against the TypeScript SDK client: make bench [QUICK=1], make bench-profile
# (bench/bench.mk, bench/README.md).
include bench/bench.mk

clean: clean-rock-artifacts
	rm -rf build lua/mcp/core.so

distclean: clean
	rm -rf .deps

lint: lint-lua lint-luacheck lint-c lint-abi lint-structure check-rockspec check-doc check-docs

# luacheck (Debian lua-check) with .luacheckrc: zero warnings. Under CI a missing tool fails.
LUACHECK ?= luacheck
LUACHECK_DIRS := lua plugin spec soak examples bench conformance interop oidc scripts bin/mcp-lua
lint-luacheck:
	@if command -v $(LUACHECK) >/dev/null 2>&1; then \
	  $(LUACHECK) --quiet --no-color --codes $(LUACHECK_DIRS) && echo "lint: luacheck ok (zero warnings)"; \
	elif [ -n "$$CI" ]; then echo "lint: $(LUACHECK) not installed (make deps installs lua-check)" >&2; exit 1; \
	else echo "lint: $(LUACHECK) not installed, skipped (apt-get install lua-check)"; fi

lint-lua:
	@set -e; for f in $(LUA_FILES); do luac5.4 -p "$$f" || exit 1; done; \
	  echo "lint: luac5.4 -p ok ($(words $(LUA_FILES)) files)"
	@if command -v luajit >/dev/null 2>&1; then \
	  set -e; for f in $(LUA_FILES); do luajit -b "$$f" /dev/null || exit 1; done; \
	  echo "lint: luajit parse ok"; fi

# cppcheck sees no system headers: luaconf.h needs LLONG_MAX to pick 64-bit integers.
lint-c:
	@if command -v cppcheck >/dev/null 2>&1; then \
	  cppcheck --quiet --error-exitcode=1 --std=c99 --enable=warning,portability,performance \
	    --inline-suppr -Isrc -I$(LUA_INCDIR) -DLLONG_MAX=9223372036854775807LL \
	    --suppress=missingIncludeSystem $(SRCS) && echo "lint: cppcheck ok"; \
	else echo "lint: cppcheck not installed, skipped"; fi

# Every source also compiles on src/abi/ alone, as `make nvim` does without the Lua, libcurl and
# OpenSSL headers: a new option, call or constant needs its declaration there (src/abi/README.md;
# `make check-abi` then proves its value against the real headers).
ABI_OWN_FLAGS := -DMCP_OWN_LUA_ABI -DMCP_OWN_CURL_ABI -DMCP_OWN_CRYPTO_ABI
lint-abi:
	@for f in $(sort $(wildcard src/*.c src/transports/*.c src/testing/*.c)); do \
	  $(CC) $(CSTD) $(WARNFLAGS) -DMCP_TEST_HOOKS $(ABI_OWN_FLAGS) -Isrc -fsyntax-only $$f || { \
	    echo "lint: $$f does not compile on src/abi/ alone: declare what it uses there (src/abi/README.md)" >&2; exit 1; }; \
	done; echo "lint: every source compiles on src/abi/ alone (make nvim without library headers)"

# The C structure rules (scripts/check-structure.lua): no function over 80 lines, no link cycle
# between C files (from the object files' symbols, so it builds first); what still waits on other
# work is listed in scripts/structure-exceptions.txt.
lint-structure: build
	@lua5.4 scripts/check-structure.lua scripts/structure-exceptions.txt $(OBJDIR) \
	  $(SRCS) $(sort $(wildcard src/*.h src/transports/*.h))

format-check:
	@if [ ! -f .clang-format ]; then echo "format-check: no .clang-format, skipped"; \
	elif ! command -v clang-format >/dev/null 2>&1 && [ -n "$$CI" ]; then echo "format-check: clang-format not installed (make deps installs it)" >&2; exit 1; \
	elif ! command -v clang-format >/dev/null 2>&1; then echo "format-check: clang-format not installed, skipped"; \
	else clang-format --dry-run -Werror $(C_FORMAT_FILES) && echo "format-check: ok"; fi

# The rockspec builds with build.type = "make": luarocks runs `make rock-build` and `make
# rock-install` with its variables (ROCK_LUA: the interpreter it builds for; LUA_INCDIR, CFLAGS,
# INST_LIBDIR, INST_LUADIR), so the C files compile in parallel (ROCK_JOBS, default: the number of
# CPUs) and nothing is listed in the rockspec. `make check-rockspec` checks that wiring.
ROCK_LUA ?=
ROCK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ROCK_ABI = $(shell $(ROCK_LUA) -e 'io.write(rawget(_G, "jit") and "luajit" or _VERSION:match("%d+%.%d+"))' 2>/dev/null)
ROCK_BUILDDIR = build/rock-$(ROCK_ABI)
ROCK_USAGE := is run by luarocks (build.type = "make" in $(ROCKSPEC)); use `make rock` or `luarocks make`
rock-build:
	@test -n "$(ROCK_LUA)" -a -n "$(ROCK_ABI)" || { echo "rock-build $(ROCK_USAGE) (ROCK_LUA=$(ROCK_LUA))" >&2; exit 2; }
	@$(MAKE) --no-print-directory -j$(ROCK_JOBS) build LUA=$(ROCK_ABI) BUILDDIR=$(ROCK_BUILDDIR) TEST_HOOKS=0 \
	  WARNFLAGS='-Wall -Wextra' OPTFLAGS=-O2 LUA_INCDIR='$(LUA_INCDIR)' \
	  CURL_CFLAGS='$(CURL_CFLAGS)$(if $(CURL_INCDIR), -I$(CURL_INCDIR))'
rock-install:
	@test -n "$(INST_LIBDIR)" -a -n "$(INST_LUADIR)" -a -n "$(ROCK_ABI)" || { echo "rock-install $(ROCK_USAGE)" >&2; exit 2; }
	install -d '$(INST_LIBDIR)/mcp'
	install -m 755 $(ROCK_BUILDDIR)/mcp/core.so '$(INST_LIBDIR)/mcp/core.so'
	install -m 644 $(ROCK_BUILDDIR)/mcp/core.abi '$(INST_LIBDIR)/mcp/core.abi'
	@cd lua && find mcp -name '*.lua' | sort | while read -r f; do \
	  install -d "$(INST_LUADIR)/$$(dirname "$$f")" && install -m 644 "$$f" "$(INST_LUADIR)/$$f" || exit 1; done
	@echo "rock-install: mcp.core ($(ROCK_ABI)) and $$(cd lua && find mcp -name '*.lua' | wc -l) Lua modules into $(INST_LUADIR)"

define CHECK_ROCKSPEC_LUA
local e = {}
assert(loadfile(arg[1], "t", e))()
local b = e.build
assert(b.type == "make" and b.build_target == "rock-build" and b.install_target == "rock-install",
  arg[1] .. ": build must be type make with targets rock-build and rock-install")
assert(b.build_variables.ROCK_LUA and b.install_variables.ROCK_LUA and b.install_variables.INST_LIBDIR
  and b.install_variables.INST_LUADIR, arg[1] .. ": ROCK_LUA, INST_LIBDIR, INST_LUADIR must be passed")
print("check-rockspec: ok (build.type make: the Makefile builds mcp.core and installs lua/mcp)")
endef
check-rockspec: export CHECK_ROCKSPEC_SCRIPT = $(CHECK_ROCKSPEC_LUA)
check-rockspec:
	@lua5.4 -e "$$CHECK_ROCKSPEC_SCRIPT" - $(ROCKSPEC) </dev/null

# doc/lua-mcp.txt (`:help lua-mcp`) is generated from docs/API.md; `make check-doc` (part of
# `make lint`) fails when it is stale.
doc:
	@lua5.4 scripts/vimdoc.lua docs/API.md doc/lua-mcp.txt
check-doc:
	@lua5.4 scripts/vimdoc.lua docs/API.md doc/lua-mcp.txt --check

# The reference blocks of docs/API.md (`<!-- api: GROUP -->` ... `<!-- end api -->`) are generated
# from the LuaCATS annotations by scripts/apidoc.lua, which walks require("mcp") as
# spec/api_doc_spec.lua does (so it needs the Lua 5.4 build). `make docs` rewrites them and then
# doc/lua-mcp.txt; `make check-docs` (part of `make lint`) fails when they are stale, when a public
# function lacks its annotation, or when a group of public functions has no block.
APIDOC = env -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 LUA_PATH='./lua/?.lua;./lua/?/init.lua' \
  LUA_CPATH='./build/5.4/?.so' lua5.4 scripts/apidoc.lua docs/API.md
docs:
	@$(MAKE) --no-print-directory build LUA=5.4 BUILDDIR=build/5.4 >/dev/null
	@$(APIDOC)
	@lua5.4 scripts/vimdoc.lua docs/API.md doc/lua-mcp.txt
check-docs:
	@$(MAKE) --no-print-directory build LUA=5.4 BUILDDIR=build/5.4 >/dev/null
	@$(APIDOC) --check

# luarocks searches include/ only, but Debian keeps curl/curl.h under the
# multiarch include dir: pass libcurl's dirs from pkg-config.
rock:
	@if ! $(PKG_CONFIG) --exists libcurl; then \
	  echo "rock: libcurl development files not found; install them: apt-get install libcurl4-openssl-dev (or run 'make deps')" >&2; exit 1; fi
	luarocks --lua-version=$(if $(filter luajit,$(LUA)),5.1,$(LUA)) make $(ROCK_FLAGS) $(ROCKSPEC) \
	  CURL_INCDIR=$$($(PKG_CONFIG) --variable=includedir libcurl) \
	  CURL_LIBDIR=$$($(PKG_CONFIG) --variable=libdir libcurl); \
	  rc=$$?; $(MAKE) --no-print-directory clean-rock-artifacts; exit $$rc

# make dist: a source tarball of HEAD (git archive: committed files only) and a rockspec whose
# source.url names it, packed into a .src.rock, all in build/dist/. make dist-check installs that
# rock into fresh trees for 5.4 and LuaJIT (luarocks --lua-version 5.1), offline, and runs
# examples/quickstart.lua with only the installed tree on the paths.
DIST_VERSION := $(shell sed -n 's/^version = "\(.*\)-[0-9]*"/\1/p' $(ROCKSPEC))
DIST_NAME := lua-mcp-$(DIST_VERSION)
DIST_DIR := build/dist
DIST_LUAS ?= 5.4 luajit
dist:
	@command -v git >/dev/null && command -v luarocks >/dev/null || { echo "dist: needs git and luarocks" >&2; exit 1; }
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_DIR)/$(DIST_NAME).tar.gz HEAD
	sed -e '/^source = {/,/^}/c\source = {\n   url = "file://$(CURDIR)/$(DIST_DIR)/$(DIST_NAME).tar.gz",\n   dir = "$(DIST_NAME)",\n}' \
	  $(ROCKSPEC) > $(DIST_DIR)/$(ROCKSPEC)
	cd $(DIST_DIR) && luarocks pack $(ROCKSPEC)
	@ls -l $(DIST_DIR)

dist-check: dist
	@set -e; for l in $(DIST_LUAS); do \
	  case $$l in luajit) lv=5.1; interp=luajit;; *) lv=$$l; interp=lua$$l;; esac; \
	  tree=$(CURDIR)/$(DIST_DIR)/tree-$$l; rm -rf $$tree; \
	  echo "== dist-check: $$interp, luarocks --lua-version $$lv install into $$tree"; \
	  luarocks --lua-version $$lv --tree $$tree install --deps-mode=none $(DIST_DIR)/lua-mcp-$(DIST_VERSION)-1.src.rock \
	    CURL_INCDIR=$$($(PKG_CONFIG) --variable=includedir libcurl) CURL_LIBDIR=$$($(PKG_CONFIG) --variable=libdir libcurl); \
	  test -f $$tree/lib/luarocks/rocks-$$lv/lua-mcp/$(DIST_VERSION)-1/doc/lua-mcp.txt; \
	  env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4 \
	    LUA_PATH="$$tree/share/lua/$$lv/?.lua;$$tree/share/lua/$$lv/?/init.lua" LUA_CPATH="$$tree/lib/lua/$$lv/?.so" \
	    MCP_DEMO_LUA=lua5.4 $$interp examples/quickstart.lua > $(DIST_DIR)/quickstart-$$l.log; \
	  grep -q "connected to" $(DIST_DIR)/quickstart-$$l.log; \
	  echo "== dist-check: $$interp: quickstart ran from the installed rock"; \
	done

# What a luarocks builtin build (this rockspec's before build.type make) left in the checkout.
clean-rock-artifacts:
	rm -f src/*.o src/transports/*.o mcp/core.so
	@if [ -d mcp ]; then rmdir mcp 2>/dev/null || true; fi

help:
	@echo "lua-mcp make targets (LUA=$(LUA): interpreter $(LUAI), headers $(LUA_INCDIR), ABI $(ABI))"
	@echo "  build (default)  build $(MODULE)"
	@echo "  deps             install missing Debian packages and the npm test peer (scripts/deps.sh)"
	@echo "  test             deps, build, run busted ($(SPEC)) under $(LUAI)"
	@echo "  check            build, C unit tests and busted without installing anything (for non-root contributors)"
	@echo "  test-c           C unit tests without Lua (spec/c/: the event loop, epoll and poll backends; addrguard; spawn_stack); part of test"
	@echo "  test-all         test for LUA=5.4, luajit, 5.1, 5.3 and 5.2 (each present)"
	@echo "  demo             deps, build, run examples/quickstart.lua"
	@echo "  run FILE=x.lua   build, run a script with this checkout on LUA_PATH/LUA_CPATH (ARGS='...')"
	@echo "  dist             build/dist: source tarball of HEAD, rockspec naming it, .src.rock (luarocks pack)"
	@echo "  dist-check       dist, then install the rock offline into fresh 5.4 and LuaJIT trees and run the quickstart"
	@echo "  doc              regenerate doc/lua-mcp.txt (:help lua-mcp) from docs/API.md; check-doc: is it current"
	@echo "  docs             regenerate the reference blocks of docs/API.md from the annotations (scripts/apidoc.lua), then doc/lua-mcp.txt; check-docs: are they current (part of lint)"
	@echo "  nvim             build the LuaJIT module (NVIM_ABI=5.1 for a PUC-5.1 Neovim) as lua/mcp/core.so for Neovim;"
	@echo "                   only a C compiler needed: src/abi/ stands in for missing headers (STANDALONE=1: always)"
	@echo "  check-abi        src/abi/ (own Lua 5.1, libcurl, libcrypto declarations) against the installed headers"
	@echo "  test-nvim        deps, nvim, headless Neovim specs ($(NVIM_SPECS))"
	@echo "  hostile          the hostile-server matrix (spec/hostile/) on $(LUAI), then under ASan+UBSan"
	@echo "  soak             the soak and fault suite (soak/README.md): plateaus of memory and fds, churn, crash storms, floods; SOAK_SCALE=1 (CI) .. 10"
	@echo "  asan             ASan+UBSan build in $(ASAN_BUILDDIR), busted with gcc's runtimes preloaded"
	@echo "  memcheck         busted under valgrind (lua5.4)"
	@echo "  memcheck-weights the last memcheck's spec times as the shards' weights (scripts/memcheck_weights.txt)"
	@echo "  fuzz             build and run one fuzzer (FUZZ_TARGET=$(FUZZ_TARGET) of $(FUZZ_TARGETS); clang libFuzzer) for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "  fuzz-smoke       every fuzzer for FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) each (CI)"
	@echo "  conformance      the official MCP conformance suite ($(CONFORMANCE_VERSION), $(CONFORMANCE_STABLE_VERSION)) vs conformance/expected-failures*.yml"
	@echo "  schema-suite     the official JSON Schema Test Suite's draft2020-12 cases (Debian's libtest-json-schema-acceptance-perl) vs scripts/schema-suite-expected.txt"
	@echo "  interop          real npm servers (interop/servers.lua) seen by lua-mcp and by the TS SDK client, compared (docs/INTEROP.md)"
	@echo "  oidc             the interactive provider against oidc-provider (npm) and a TS SDK resource server verifying its JWTs (docs/OAUTH.md)"
	@echo "  bench            lua-mcp vs the TypeScript SDK client, stdio and HTTP (QUICK=1: short run); writes bench/results.md"
	@echo "  bench-profile    callgrind/perf/Lua VM profile of the stdio hot path into build/bench/profile/"
	@echo "  lint             luac5.4 -p / luajit parse of Lua files, luacheck (zero warnings), cppcheck, lint-abi, lint-structure (C functions <= 80 lines, no link cycle), check-rockspec"
	@echo "  format-check     clang-format --dry-run -Werror over the C sources (.clang-format)"
	@echo "  check-rockspec   $(ROCKSPEC) builds through this Makefile (build.type make: rock-build, rock-install)"
	@echo "  rock             luarocks make $(ROCKSPEC) $(ROCK_FLAGS) with libcurl dirs from pkg-config (C files in parallel)"
	@echo "  clean            remove build/;  distclean: also .deps/"
	@echo "variables: LUA=5.4|5.3|5.2|5.1|luajit  LOOP=epoll|poll  SPEC=spec  BUSTED_FLAGS=  CC=  CFLAGS=  LDFLAGS="
	@echo "           STANDALONE=0|auto|1 (src/abi/ instead of the Lua 5.1, libcurl, OpenSSL headers; Lua part: luajit/5.1 only)"
	@echo "           LUA_INCDIR=  ROCK_FLAGS=--tree=build/rocks (or --local)  MCP_TEST_LUA=$(MCP_TEST_LUA)"
	@echo "exported to specs: MCP_TEST_LUA (interpreter for Lua test servers), MCP_EVERYTHING_SERVER"
	@echo "  (executable; run it with the argument 'stdio'), MCP_EVERYTHING_VERSION, MCP_TEST_SANITIZER=asan|valgrind"

# The soak and fault suite (soak/, soak/README.md): long runs judged by memory and descriptor
# plateaus, churn, crash storms, limits, floods. Not part of `make test`; counts scale with
# SOAK_SCALE (default 1, a few minutes; 10 is the fault run of issue 26).
SOAK_SCALE ?= 1
soak: build
	SOAK_SCALE=$(SOAK_SCALE) $(LUAI) $(BUSTED) --lpath='$(BUSTED_LPATH);./soak/?.lua' --cpath='./$(BUILDDIR)/?.so' $(BUSTED_FLAGS) soak
