--- Trust for server configuration files (mcp.config.load, mcp.hub, mcp-lua --config).
---
--- A file in the user's own configuration (their XDG config dirs, the hosts' user-level files)
--- is trusted: its servers start, `${env:...}` expands any variable, `autoApprove` counts. Any
--- other file (a workspace's `.vscode/mcp.json`, a cloned repository's `.mcp.json`) is not: each
--- of its servers starts only after the host's `trust(entry, source)` hook said yes (remembered
--- per file and server by a SHA-256 of the file's content, next to the OAuth token store, 0600),
--- `${env:...}` expands only the stdio environment allowlist, and `autoApprove` is ignored unless
--- the host passes `honor_auto_approve = true`.
local core = require("mcp.core")
local json = require("mcp.json")
local store = require("mcp.auth.store")
local term = require("mcp.util.term")

local M = {}

-- The variables an untrusted file may expand: the ones a stdio server inherits anyway.
M.ENV_ALLOWLIST = { "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER" }

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- The process's working directory as the kernel has it ($PWD goes stale when a host such as
-- Neovim changes directory), from pwd -P run without a shell.
local function cwd()
  local r = core.run_program({ "pwd", "-P" }, nil, 5000)
  local dir = r and r.status == 0 and r.stdout:match("^(/[^\n]*)\n?$")
  return dir or nil
end

--- An absolute path with "." and ".." components and repeated slashes resolved lexically;
--- a relative path is taken from the working directory. nil when it cannot be made absolute.
---@param path string
---@return string|nil
function M.absolute(path)
  if path:sub(1, 1) ~= "/" then
    local dir = cwd()
    if dir == nil then return nil end
    path = dir .. "/" .. path
  end
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return "/" .. table.concat(parts, "/")
end

local function under(path, dir)
  if dir == nil or dir == "" or dir:sub(1, 1) ~= "/" then return false end
  dir = dir:gsub("/+$", "")
  return path:sub(1, #dir + 1) == dir .. "/"
end

--- The directories and files that make up the user's own configuration.
---@return string[] dirs, string[] files
function M.user_locations()
  local home = os.getenv("HOME")
  if home == "" or (home and home:sub(1, 1) ~= "/") then home = nil end
  local dirs, files = {}, {}
  local xdg = os.getenv("XDG_CONFIG_HOME")
  if xdg ~= nil and xdg:sub(1, 1) == "/" then
    dirs[#dirs + 1] = xdg
  elseif home then
    dirs[#dirs + 1] = home .. "/.config"
  end
  for d in (os.getenv("XDG_CONFIG_DIRS") or "/etc/xdg"):gmatch("[^:]+") do dirs[#dirs + 1] = d end
  if home then
    -- Claude Code, Cursor, Windsurf, Gemini CLI and the macOS application support folder.
    for _, d in ipairs({ ".claude", ".cursor", ".codeium", ".gemini", "Library/Application Support" }) do
      dirs[#dirs + 1] = home .. "/" .. d
    end
    files[#files + 1] = home .. "/.claude.json"
  end
  return dirs, files
end

-- Where a project keeps its own MCP config: a file beneath such a directory, or with such a
-- name, is a workspace's even inside the user's config dirs (a repository cloned under
-- ~/.config, a Neovim package in ~/.config/nvim/pack/*/start/).
local WORKSPACE_DIRS = {
  [".vscode"] = true, [".cursor"] = true, [".zed"] = true, [".gemini"] = true, [".claude"] = true,
  [".roo"] = true, [".windsurf"] = true, [".git"] = true,
}
local WORKSPACE_NAMES = { [".mcp.json"] = true }

-- Whether the part of abs below dir names a workspace's directory or file.
local function workspace_below(abs, dir)
  local rest = abs:sub(#dir + 2)
  local last
  for part in rest:gmatch("[^/]+") do
    if last and WORKSPACE_DIRS[last] then return true end
    last = part
  end
  return last ~= nil and WORKSPACE_NAMES[last] == true
end

--- Whether a config file is part of the user's own configuration: one of the hosts' user-level
--- files, or a file beneath the user's config dirs that is not a workspace's (see
--- WORKSPACE_DIRS). A path with a ".." component is not (through a symbolic link the kernel's
--- ".." goes elsewhere than the lexical one).
---@param path string
---@return boolean
function M.user_file(path)
  if ("/" .. path .. "/"):find("/../", 1, true) then return false end
  local abs = M.absolute(path)
  if abs == nil then return false end
  local dirs, files = M.user_locations()
  for _, f in ipairs(files) do
    if abs == M.absolute(f) then return true end
  end
  for _, d in ipairs(dirs) do
    local ad = M.absolute(d)
    if ad and under(abs, ad) and not workspace_below(abs, (ad:gsub("/+$", ""))) then return true end
  end
  return false
end

--- The real path of a file (symbolic links resolved) when it lies beneath the real directory
--- dir, else nil, message: where a file that is not trusted names a file of its own (envFile),
--- a symbolic link in a cloned repository must not lead out of it (~/.aws/credentials).
---@param path string
---@param dir string
---@return string|nil real, string|nil err
function M.inside(path, dir)
  local real, err = core.realpath(path)
  if real == nil then return nil, err end
  local base, berr = core.realpath(dir)
  if base == nil then return nil, berr end
  if base ~= "/" and real:sub(1, #base + 1) ~= base .. "/" then
    return nil, path .. " leads out of " .. dir .. " (to " .. real .. ")"
  end
  return real
end

-- ---- remembered answers --------------------------------------------------------------------------

local function record_path(dir, abs)
  return dir .. "/trust-" .. hex(core.sha256(abs)):sub(1, 32) .. ".json"
end

-- A record another user owns or could have written (group/other access, a symbolic link) is no
-- answer of this user's: read as the token store reads its records.
local function read_record(dir, abs)
  local text = core.read_private_file(record_path(dir, abs))
  if type(text) ~= "string" then return nil end
  local doc = json.decode(text)
  if type(doc) ~= "table" or doc.file ~= abs or type(doc.servers) ~= "table" then return nil end
  return doc
end

--- Where the answers are kept: opts.trust_dir, else the token store's directory.
---@param dir string|nil
---@return string|nil
function M.dir(dir)
  return dir or store.default_dir()
end

--- Whether the hook already said yes to this server of this file, as it is now (its hash).
---@param dir string|nil
---@param file string
---@param hash string hex SHA-256 of the file's content
---@param server string
---@return boolean
function M.remembered(dir, file, hash, server)
  local abs = M.absolute(file)
  if dir == nil or abs == nil then return false end
  local doc = read_record(dir, abs)
  return doc ~= nil and doc.sha256 == hash and doc.servers[server] == true
end

--- Remember the hook's yes for a server of a file with this content. true, or nil, message.
---@param dir string|nil
---@param file string
---@param hash string
---@param server string
---@return boolean|nil ok, string|nil err
function M.remember(dir, file, hash, server)
  local abs = M.absolute(file)
  if dir == nil or abs == nil then return nil, "no directory to remember the answer in" end
  local doc = read_record(dir, abs)
  if doc == nil or doc.sha256 ~= hash then doc = { file = abs, sha256 = hash, servers = {} } end
  doc.servers[server] = true
  local ok, err = core.mkdir_private(dir)
  if ok then ok, err = core.write_private_file(record_path(dir, abs), json.encode(doc)) end
  return ok, err
end

--- Hex SHA-256 of a file's content.
---@param text string
---@return string
function M.hash(text)
  return hex(core.sha256(text))
end

-- ---- a hook on the terminal ----------------------------------------------------------------------

--- What a trust prompt shows of a server (entry as given to the hook): one line per item, the
--- first "run: COMMAND ARGS..." or "connect to: URL", then the working directory, each env
--- variable, the envFile, each header; every item escaped (mcp.util.term), so neither a
--- newline nor a terminal control in the file can hide or fake a line.
---@param entry table
---@return string[]
function M.describe(entry)
  local lines = {}
  if entry.type == "stdio" then
    local words = { term.escape(entry.command) }
    for _, a in ipairs(entry.args or {}) do words[#words + 1] = term.escape(a) end
    lines[1] = "run: " .. table.concat(words, " ")
    if entry.cwd then lines[#lines + 1] = "in: " .. term.escape(entry.cwd) end
    for _, e in ipairs(entry.env or {}) do lines[#lines + 1] = "env: " .. term.escape(e) end
    if entry.env_file then lines[#lines + 1] = "envFile: " .. term.escape(entry.env_file) end
  else
    lines[1] = "connect to: " .. term.escape(entry.url)
    for _, h in ipairs(entry.headers or {}) do lines[#lines + 1] = "header: " .. term.escape(h) end
  end
  return lines
end

--- A `trust` hook that shows the server (escaped) and asks on the terminal (/dev/tty, else
--- stdin/stderr): "y" (yes, remembered), "o" (once), anything else no.
--- opts: input (file or function returning a line), output (file).
---@param opts table|nil
---@return fun(entry: table, source: string|nil): boolean|string
function M.tty_hook(opts)
  opts = opts or {}
  return function(entry, source)
    local tty_in = opts.input or io.open("/dev/tty", "r") or io.stdin
    local out = opts.output or io.open("/dev/tty", "w") or io.stderr
    local lines = M.describe(entry)
    out:write(("%s is not in your own configuration.\nServer '%s' wants to %s\n"):format(
      term.escape(source or "this configuration"), term.escape(entry.name), lines[1]))
    for i = 2, #lines do out:write("  ", lines[i], "\n") end
    out:write("Start it? [y]es (remember for this file) / [o]nce / [N]o: ")
    out:flush()
    local line
    if type(tty_in) == "function" then line = tty_in() else line = tty_in:read("*l") end
    line = (line or ""):lower()
    if line == "y" or line == "yes" then return true end
    if line == "o" or line == "once" then return "once" end
    return false
  end
end

return M
