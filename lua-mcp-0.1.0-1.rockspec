-- lua-mcp: Model Context Protocol client for Lua (C core + Lua layer).
--
-- Install from a checkout, for the Lua you will run it with (Debian's luarocks builds for 5.1
-- unless told; LuaJIT and Neovim use 5.1):
--   luarocks --lua-version 5.4 make lua-mcp-0.1.0-1.rockspec
--   make rock                  (finds libcurl with pkg-config; installs into build/rocks,
--                               or pass ROCK_FLAGS=--local / ROCK_FLAGS= for another tree)
-- CURL_INCDIR=$(pkg-config --variable=includedir libcurl) and CURL_LIBDIR=... may be given as
-- arguments when luarocks does not find libcurl (see external_dependencies below).
rockspec_format = "3.0"
package = "lua-mcp"
version = "0.1.0-1"

source = {
   url = "git+https://example.invalid/lua-mcp.git",
   tag = "v0.1.0",
}

description = {
   summary = "Model Context Protocol (MCP) client for Lua",
   detailed = [[
A Model Context Protocol client: stdio (and later HTTP) transports, JSON-RPC,
tools, resources, prompts, sampling and elicitation. A small C core (event loop,
child processes, JSON codec) under a pure-Lua API. Lua 5.1 to 5.4 and LuaJIT.
]],
   license = "MIT",
   labels = { "mcp", "json-rpc", "ai" },
}

dependencies = {
   "lua >= 5.1",
}

-- The module is not linked against libcurl and libcrypto: it opens them on first use (an HTTP
-- transport, a SHA-256 fingerprint), so stdio-only hosts never map them. They must be installed,
-- with their headers for the build (libcurl4-openssl-dev libssl-dev on Debian). Only the
-- libraries are looked up here: luarocks searches multiarch library directories but not
-- /usr/include/<triplet>, where Debian keeps curl/curl.h (the compiler finds it there itself).
-- When libcurl is missing, luarocks names CURL and asks for CURL_DIR / CURL_LIBDIR.
external_dependencies = {
   CURL = {
      library = "curl",
   },
   OPENSSL = {
      library = "crypto",
   },
}

-- build.type "make": luarocks runs `make rock-build` and `make rock-install` with its variables
-- (the Makefile builds the C files in parallel, writes the ABI tag mcp/core.abi beside core.so and
-- installs lua/mcp/**/*.lua), so no file list lives here.
build = {
   type = "make",
   build_target = "rock-build",
   install_target = "rock-install",
   build_variables = {
      CFLAGS = "$(CFLAGS)",
      ROCK_LUA = "$(LUA)",
      LUA_INCDIR = "$(LUA_INCDIR)",
      CURL_INCDIR = "$(CURL_INCDIR)",
   },
   install_variables = {
      ROCK_LUA = "$(LUA)",
      INST_LIBDIR = "$(LIBDIR)",
      INST_LUADIR = "$(LUADIR)",
   },
   -- installed with the rock (luarocks doc lua-mcp): the help file, the Markdown docs (the
   -- LuaCATS declarations are the module mcp.types, lua/mcp/types.lua) and the Neovim plugin's
   -- plugin/mcp.lua (rocks.nvim and lazy.nvim put the rock's tree on the runtimepath)
   copy_directories = { "doc", "docs", "plugin" },
   install = {
      -- the command-line client (`mcp-lua --help`); luarocks wraps it for the right interpreter
      bin = { ["mcp-lua"] = "bin/mcp-lua" },
   },
}

-- the specs also start Lua test servers that need lua-cjson (spec/fixtures/*.lua)
test_dependencies = {
   "busted",
   "lua-cjson",
}

test = {
   type = "busted",
}
