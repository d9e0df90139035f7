--- `:checkhealth mcp`: whether lua-mcp can work in this Neovim. The core module is found and
--- loads into this Neovim's Lua (its ABI matches), the versions, libcurl and libcrypto load
--- through the module's own loaders (as the first HTTP transport and the first SHA-256 would),
--- and the commands the usual MCP servers are started with (node, npx, uvx, ...) are present.
--- Nothing is started and no connection is made.
local M = {}

-- vim.health (0.9+: start/ok/warn/error/info; 0.8: report_*) or the 0.7 `health` module.
local function reporter()
  local h = vim.health
  if h == nil or (h.start == nil and h.report_start == nil) then h = require("health") end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

local function where_core()
  local found = vim.api.nvim_get_runtime_file("lua/mcp/core.so", false)
  if #found > 0 then return found[1] end
  if package.searchpath then return package.searchpath("mcp.core", package.cpath) end
  return nil
end

--- Run the checks (called by :checkhealth mcp).
function M.check()
  local r = reporter()
  local nvim_mod = require("mcp.nvim")

  r.start("lua-mcp: the core module")
  local lua_version = rawget(_G, "jit") and jit.version or _VERSION
  r.info("Neovim's Lua: " .. tostring(lua_version) .. " (build ABI " .. tostring(nvim_mod.abi()) .. ")")
  local added = nvim_mod.find_core()
  local ok, core = pcall(require, "mcp.core")
  if not ok then
    r.error("mcp.core does not load: " .. tostring(core), {
      "Build it for this Neovim with `make nvim` in the lua-mcp checkout (it needs only a C compiler and "
        .. "writes lua/mcp/core.so for LuaJIT; `make nvim NVIM_ABI=5.1` for a Neovim built with PUC Lua 5.1)",
      "A module built for Lua 5.2 to 5.4 never loads into Neovim: its Lua is LuaJIT or 5.1",
    })
    return
  end
  r.ok("mcp.core loads: " .. tostring(where_core() or (added and (added .. "/mcp/core.so")) or "(preloaded)"))
  local mcp_ok, mcp = pcall(require, "mcp")
  if not mcp_ok then
    r.error("require('mcp') fails: " .. tostring(mcp))
    return
  end
  r.ok(("lua-mcp %s (protocol %s by default, up to %s)"):format(tostring(mcp.VERSION),
    tostring(mcp.PROTOCOL_VERSION), tostring(mcp.LATEST_PROTOCOL_VERSION)))
  if core.fd() ~= nil then
    r.ok("event loop: epoll (one fd watched by a vim.uv poll handle)")
  else
    r.info("event loop: poll(2), stepped on a timer (no pollable fd on this system)")
  end

  r.start("lua-mcp: libraries opened at run time")
  local cok, cerr = pcall(core.sha256, "")
  if cok then
    r.ok("libcrypto loads (SHA-256: tool fingerprints, PKCE, skills digests)")
  else
    r.warn("libcrypto does not load: " .. tostring(cerr), { "Install OpenSSL's libcrypto (Debian: libssl3)" })
  end
  local hok, t = pcall(mcp.http_transport, { url = "http://127.0.0.1:9/mcp" })
  if hok then
    pcall(function() t:close() end)
    r.ok("libcurl loads (streamable HTTP and SSE servers)")
  else
    r.warn("libcurl does not load: " .. tostring(t),
      { "Install libcurl (Debian: libcurl4); stdio servers work without it" })
  end

  r.start("lua-mcp: commands the usual servers are started with")
  for _, cmd in ipairs({ "node", "npx", "uvx", "uv", "python3", "docker" }) do
    if vim.fn.executable(cmd) == 1 then
      r.ok(cmd .. ": " .. vim.fn.exepath(cmd))
    else
      r.info(cmd .. ": not found (only servers started with " .. cmd .. " need it)")
    end
  end
end

return M
