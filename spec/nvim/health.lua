-- Headless Neovim spec of `:checkhealth mcp` (lua/mcp/health.lua), run by `make test-nvim`: the
-- real command's report, then the checks with vim.health replaced by a recorder, once with the
-- core module loading and once with it failing to load.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")

T.test(":checkhealth mcp reports the module, the libraries and the commands", function()
  vim.cmd("checkhealth mcp")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  T.truthy(text:find("lua-mcp: the core module", 1, true), text)
  T.truthy(text:find("OK:? mcp.core loads: [^\n]*core%.so"), text)
  T.truthy(text:find("libcrypto loads", 1, true), text)
  T.truthy(text:find("libcurl loads", 1, true), text)
  T.truthy(text:find("node: ", 1, true), text)
  T.truthy(not text:find("ERROR", 1, true), text)
  vim.cmd("bwipeout!")
end)

-- vim.health stand-in recording "<level>: <message>"
local function recorded(fn)
  local log = {}
  local saved = vim.health
  local function rec(level) return function(msg) log[#log + 1] = level .. ": " .. msg end end
  vim.health = { start = rec("start"), ok = rec("ok"), warn = rec("warn"), error = rec("error"), info = rec("info") }
  local ok, err = pcall(fn)
  vim.health = saved
  assert(ok, err)
  return table.concat(log, "\n")
end

T.test("the checks pass where lua-mcp works", function()
  package.loaded["mcp.health"] = nil
  local text = recorded(function() require("mcp.health").check() end)
  T.truthy(text:find("ok: mcp.core loads", 1, true), text)
  T.truthy(text:find("ok: lua-mcp 0", 1, true), text)
  T.truthy(not text:find("error:", 1, true), text)
end)

T.test("a core module that does not load is an error with the fix", function()
  local saved_core, saved_mcp = package.loaded["mcp.core"], package.loaded["mcp"]
  package.loaded["mcp.core"], package.loaded["mcp"] = nil, nil
  package.preload["mcp.core"] = function() error("mcp.core was built for Lua 5.4 but loaded into another Lua version") end
  local text = recorded(function() require("mcp.health").check() end)
  package.preload["mcp.core"] = nil
  package.loaded["mcp.core"], package.loaded["mcp"] = saved_core, saved_mcp
  T.truthy(text:find("error: mcp.core does not load: [^\n]*built for Lua 5.4"), text)
  T.truthy(not text:find("libcurl", 1, true), text)
end)

T.test(":help lua-mcp opens the generated reference", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/doc", "p")
  local src = assert(io.open(root .. "/doc/lua-mcp.txt", "rb"))
  local dst = assert(io.open(dir .. "/doc/lua-mcp.txt", "wb"))
  dst:write(src:read("*a"))
  src:close()
  dst:close()
  vim.opt.runtimepath:prepend(dir)
  vim.cmd("helptags " .. dir .. "/doc")
  vim.cmd("help lua-mcp")
  T.eq("lua-mcp.txt", vim.fn.expand("%:t"))
  vim.cmd("help lua-mcp-skills-sep-2640")
  T.truthy(vim.api.nvim_get_current_line():find("SKILLS (SEP-2640)", 1, true), vim.api.nvim_get_current_line())
  vim.cmd("helpclose")
  vim.fn.delete(dir, "rf")
end)

T.finish()
