# Benchmarks against the TypeScript SDK client (bench/README.md); included by the Makefile.
#
#   make bench            full run (median of 3), prints the table, writes bench/results.md
#   make bench QUICK=1    short run (CI: checks that the benchmark still runs; never timed pass/fail),
#                         writes build/bench/results.md
#   make bench-floor-ratio  lua-mcp's sequential stdio calls vs bench/floor.c's, in one process, pinned
#   make bench-profile    callgrind / perf / Lua VM profile of sequential stdio calls and of the
#                         10 MiB result (Lua 5.4), into build/bench/profile/
#
# Builds the module for Lua 5.4 and LuaJIT (build/5.4, build/luajit) and the tiny C server
# (build/bench/tiny_server) and the floors (build/bench/floor, floor_http); installs the pinned
# @modelcontextprotocol/sdk into .deps/bench-npm.

BENCH_BUILDDIR := build/bench
BENCH_CFLAGS ?= -std=c99 -Wall -Wextra -Werror -O2 -g
QUICK ?=
BENCH_SDK_VERSION ?= 1.32.2
LUA54_STATIC ?= $(shell $(CC) -print-file-name=liblua5.4.a)
LUAJIT_INCDIR ?= $(or $(patsubst -I%,%,$(firstword $(filter -I%,$(shell $(PKG_CONFIG) --cflags-only-I luajit 2>/dev/null)))),/usr/include/luajit-2.1)
LUA54_INCDIR ?= $(or $(patsubst -I%,%,$(firstword $(filter -I%,$(shell $(PKG_CONFIG) --cflags-only-I lua5.4 2>/dev/null)))),/usr/include/lua5.4)

.PHONY: bench bench-build bench-profile bench-floor-ratio bench-hostloop bench-spawncost bench-startwall

$(BENCH_BUILDDIR)/tiny_server: bench/tiny_server.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The floor: the cheapest possible stdio client (bench/floor.c).
$(BENCH_BUILDDIR)/floor: bench/floor.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The floor over HTTP: the cheapest possible libcurl client (bench/floor_http.c).
$(BENCH_BUILDDIR)/floor_http: bench/floor_http.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(CURL_CFLAGS) -o $@ $< $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null || echo -lcurl)

# A lua5.4 with symbols (Debian's is stripped) for callgrind and perf: liblua5.4.a keeps them.
$(BENCH_BUILDDIR)/lua_prof_host: bench/lua_prof_host.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -I$(LUA54_INCDIR) -o $@ $< -Wl,-E $(LUA54_STATIC) -lm -ldl

# Wall and CPU clocks for the Lua driver (bench/benchclock.c), one per Lua ABI.
$(BENCH_BUILDDIR)/5.4/benchclock.so: bench/benchclock.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -I$(LUA54_INCDIR) -o $@ $<

$(BENCH_BUILDDIR)/luajit/benchclock.so: bench/benchclock.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -I$(LUAJIT_INCDIR) -o $@ $<

# bench/floor.c's call as a Lua module, for the driver's `pair` row (bench/benchfloor.c).
$(BENCH_BUILDDIR)/5.4/benchfloor.so: bench/benchfloor.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -I$(LUA54_INCDIR) -o $@ $<

$(BENCH_BUILDDIR)/luajit/benchfloor.so: bench/benchfloor.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -I$(LUAJIT_INCDIR) -o $@ $<

# bench/floor_http.c's call as a Lua module, for the `pair` row over HTTP (bench/benchfloor_http.c).
BENCH_CURL_LIBS = $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null || echo -lcurl)
$(BENCH_BUILDDIR)/5.4/benchfloor_http.so: bench/benchfloor_http.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(CURL_CFLAGS) -fPIC -shared -I$(LUA54_INCDIR) -o $@ $< $(BENCH_CURL_LIBS)

$(BENCH_BUILDDIR)/luajit/benchfloor_http.so: bench/benchfloor_http.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(CURL_CFLAGS) -fPIC -shared -I$(LUAJIT_INCDIR) -o $@ $< $(BENCH_CURL_LIBS)

bench-build: $(BENCH_BUILDDIR)/5.4/benchfloor_http.so $(BENCH_BUILDDIR)/luajit/benchfloor_http.so $(BENCH_BUILDDIR)/tiny_server $(BENCH_BUILDDIR)/floor $(BENCH_BUILDDIR)/floor_http $(BENCH_BUILDDIR)/5.4/benchclock.so $(BENCH_BUILDDIR)/luajit/benchclock.so $(BENCH_BUILDDIR)/5.4/benchfloor.so $(BENCH_BUILDDIR)/luajit/benchfloor.so
	@$(MAKE) --no-print-directory build LUA=5.4
	@$(MAKE) --no-print-directory build LUA=luajit

bench: deps bench-build
	QUICK=$(QUICK) SDK_VERSION=$(BENCH_SDK_VERSION) bash bench/run.sh

bench-profile: deps bench-build $(BENCH_BUILDDIR)/lua_prof_host
	bash bench/profile.sh

# Sequential stdio calls against the floor, side by side in one process (bench/floor_ratio.sh).
bench-floor-ratio: bench-build
	bash bench/floor_ratio.sh

# Step times of a host frame loop (issue 28): servers starting with a large heap (HEAPS, MB), a
# 4 MB result of 40,000 objects, 8 clients closing; spawn cost against the heap (bench/hostloop.lua).
HEAPS ?= 0,512,1024
bench-hostloop: build $(BENCH_BUILDDIR)/5.4/benchclock.so
	LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./$(BUILDDIR)/?.so;./$(BENCH_BUILDDIR)/5.4/?.so;;' \
	  lua5.4 bench/hostloop.lua $(HEAPS)

# Spawn cost against the host's heap (SPAWN_HEAPS, MB): plain, sandboxed, run_program (issue 28,
# bench/spawncost.lua).
SPAWN_HEAPS ?= 100,1024,2048
bench-spawncost: build $(BENCH_BUILDDIR)/5.4/benchclock.so
	LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./$(BUILDDIR)/?.so;./$(BENCH_BUILDDIR)/5.4/?.so;;' \
	  lua5.4 bench/spawncost.lua $(SPAWN_HEAPS)

# Servers starting, wall time (issue 28, Stop 26): the step that begins a start from a task, a
# blocking start, 4 clients connecting while the host steps (bench/startwall.lua).
HEAP ?= 2048
ROUNDS ?= 8
bench-startwall: build $(BENCH_BUILDDIR)/5.4/benchclock.so
	LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='./$(BUILDDIR)/?.so;./$(BENCH_BUILDDIR)/5.4/?.so;;' \
	  lua5.4 bench/startwall.lua $(HEAP) $(ROUNDS)
