--- mcp.config.write: save a server's enabled/disabled state back into the config file it came
--- from, as a host's "enable"/"disable" does (the Neovim plugin's :Mcp window, :McpEnable,
--- :McpDisable). The file is edited as text at that one entry: comments, trailing commas, key
--- order and indentation stay as they were. The key written is the one the file's format uses:
--- `"enabled"` in Zed's `context_servers` and wherever the entry already has it, else
--- `"disabled"` (mcphub.nvim's servers.json, Cline; lua-mcp reads it in every format).
---
---   local ok, err = require("mcp.config.write").set_enabled("servers.json", "github", false)
---
--- The new text goes to a temporary file in the same directory, keeps the old file's mode and is
--- renamed over it (a symbolic link is followed: its target is rewritten). A file outside the
--- user's own configuration (mcp.config.trust) is written only when opts.trusted says so or when
--- the server was trusted for the file as it is now (the trust prompt's remembered yes); the
--- remembered answers then follow the file to its new content.
local config = require("mcp.config")
local core = require("mcp.core")
local errors = require("mcp.errors")
local files = require("mcp.util.file")
local json = require("mcp.json")
local trust = require("mcp.config.trust")

local M = {}

local function werr(path, msg)
  local e = errors.new(nil, tostring(path) .. ": " .. msg, nil, { kind = "config" })
  e.file = path
  return e
end

-- ---- a position-keeping scan of the comment-free text ------------------------------------------

local function skip_ws(s, i)
  return s:find("[^ \t\r\n]", i) or (#s + 1)
end

-- The index of the closing quote of the string that opens at i.
local function string_end(s, i)
  local j = i + 1
  while j <= #s do
    local c = s:sub(j, j)
    if c == "\\" then
      j = j + 2
    elseif c == '"' then
      return j
    else
      j = j + 1
    end
  end
  return nil
end

-- The index of the last character of the value that starts at i.
local function value_end(s, i)
  local c = s:sub(i, i)
  if c == '"' then return string_end(s, i) end
  if c == "{" or c == "[" then
    local depth, j = 0, i
    while j <= #s do
      local d = s:sub(j, j)
      if d == '"' then
        j = string_end(s, j)
        if not j then return nil end
      elseif d == "{" or d == "[" then
        depth = depth + 1
      elseif d == "}" or d == "]" then
        depth = depth - 1
        if depth == 0 then return j end
      end
      j = j + 1
    end
    return nil
  end
  local j = s:find("[,}%] \t\r\n]", i)
  return j and (j - 1) or #s
end

-- The members of the object that opens at i: {key, key_at, at (value start), stop (value end)}.
local function members(s, i)
  local out = {}
  local j = skip_ws(s, i + 1)
  while j <= #s and s:sub(j, j) ~= "}" do
    if s:sub(j, j) ~= '"' then return nil end
    local ke = string_end(s, j)
    if not ke then return nil end
    local key = json.decode(s:sub(j, ke))
    local colon = skip_ws(s, ke + 1)
    if s:sub(colon, colon) ~= ":" then return nil end
    local at = skip_ws(s, colon + 1)
    local stop = value_end(s, at)
    if not stop then return nil end
    out[#out + 1] = { key = key, key_at = j, at = at, stop = stop }
    j = skip_ws(s, stop + 1)
    if s:sub(j, j) == "," then j = skip_ws(s, j + 1) end
  end
  return out
end

local function member(list, key)
  for _, m in ipairs(list or {}) do
    if m.key == key then return m end
  end
end

local function object_at(s, m)
  if m == nil or s:sub(m.at, m.at) ~= "{" then return nil end
  return members(s, m.at)
end

-- The servers object of a document as mcp.config reads it, and its format.
local function servers_of(s, top)
  local m = member(top, "mcpServers")
  if m then return object_at(s, m), "mcpServers" end
  m = member(top, "servers")
  if m then return object_at(s, m), "servers" end
  m = member(top, "context_servers")
  if m then return object_at(s, m), "zed" end
  local vs = object_at(s, member(top, "mcp"))
  m = member(vs, "servers")
  if m then return object_at(s, m), "servers" end
  return nil
end

-- ---- the edit ----------------------------------------------------------------------------------

local function literal(s, m)
  return m and s:sub(m.at, m.stop) or nil
end

-- The new text with the entry of server enabled or disabled; false when it already is.
local function edit(text, server, enabled)
  local plain, serr = config.strip_jsonc(text)
  if not plain then return nil, serr end
  if plain:sub(1, 3) == "\239\187\191" then plain = "   " .. plain:sub(4) end
  local start = skip_ws(plain, 1)
  if plain:sub(start, start) ~= "{" then return nil, "the top level is not a JSON object" end
  local top = members(plain, start)
  if not top then return nil, "cannot read the file's structure" end
  local servers, format = servers_of(plain, top)
  if not servers then return nil, "no servers object" end
  local entry_m = member(servers, server)
  local entry = object_at(plain, entry_m)
  if not entry then return nil, "no server named '" .. server .. "' in the file" end
  local d, e = member(entry, "disabled"), member(entry, "enabled")
  local is_off = literal(plain, d) == "true" or literal(plain, e) == "false"
  if is_off == not enabled then return false end
  local edits = {} -- {at, stop, text}: replace text[at..stop]
  if enabled then
    if literal(plain, d) == "true" then edits[#edits + 1] = { d.at, d.stop, "false" } end
    if literal(plain, e) == "false" then edits[#edits + 1] = { e.at, e.stop, "true" } end
  elseif d then
    edits[1] = { d.at, d.stop, "true" }
  elseif e then
    edits[1] = { e.at, e.stop, "false" }
  else
    local pair = format == "zed" and '"enabled": false,' or '"disabled": true,'
    local brace, first = entry_m.at, entry[1]
    local line_start = plain:sub(1, first.key_at - 1):match(".*()\n")
    if line_start and line_start > brace then
      -- on its own line, indented as the first member is
      pair = "\n" .. text:sub(line_start + 1, first.key_at - 1):gsub("[^ \t]", " ") .. pair
    else
      pair = " " .. pair
    end
    edits[1] = { brace + 1, brace, pair }
  end
  table.sort(edits, function(a, b) return a[1] > b[1] end)
  for _, ed in ipairs(edits) do text = text:sub(1, ed[1] - 1) .. ed[3] .. text:sub(ed[2] + 1) end
  return text
end

-- The file a path names, symbolic links followed (realpath(1)); the path itself without it.
local function real_path(path)
  local r = core.run_program({ "realpath", "--", path }, nil, 5000)
  local p = r and r.status == 0 and r.stdout:match("^(/[^\n]*)\n?$")
  return p or path
end

-- The servers of the file the trust prompt said a remembered yes to (for its current content).
local function remembered(dir, path, hash, doc)
  local out = {}
  local servers = type(doc) == "table" and (doc.mcpServers or doc.servers or doc.context_servers
    or (type(doc.mcp) == "table" and doc.mcp.servers)) or {}
  for name in pairs(type(servers) == "table" and servers or {}) do
    if type(name) == "string" and trust.remembered(dir, path, hash, name) then out[#out + 1] = name end
  end
  return out
end

--- Enable or disable a server in its config file (see the module's comment). Returns true when
--- the file was written, false when the entry already had that state, or nil and an mcp.Error
--- (kind "config"; "untrusted" for a file that may not be written). opts: trusted (the host
--- trusts the file: mcp.config.load's `trusted`; default: the user's own files only), trust_dir
--- (where the trust prompt's answers are, as mcp.config.load).
---@param path string the config file
---@param server string the server's name in the file
---@param enabled boolean
---@param opts table|nil
---@return boolean|nil written, mcp.Error|nil err
function M.set_enabled(path, server, enabled, opts)
  if type(path) ~= "string" or type(server) ~= "string" then
    error("mcp.config.write.set_enabled: path and server must be strings", 2)
  end
  if type(enabled) ~= "boolean" then error("mcp.config.write.set_enabled: enabled must be a boolean", 2) end
  opts = opts or {}
  local text, rerr = files.read(path)
  if not text then return nil, werr(path, "cannot read the file: " .. tostring(rerr)) end
  local trusted = opts.trusted
  if trusted == nil then trusted = trust.user_file(path) end
  local dir, hash, carried = trust.dir(opts.trust_dir), trust.hash(text), nil
  if not trusted then
    if not trust.remembered(dir, path, hash, server) then
      local e = werr(path, "not written: the file is not in your own configuration and server '" .. server
        .. "' was not trusted for it (its state is changed for this session only)")
      e.kind = "untrusted"
      return nil, e
    end
    carried = remembered(dir, path, hash, config.decode_jsonc(text))
  end
  local new, eerr = edit(text, server, enabled)
  if new == nil then return nil, werr(path, eerr) end
  if new == false then return false end
  local check = config.decode_jsonc(new)
  if type(check) ~= "table" then return nil, werr(path, "the edit would not leave valid JSON; not written") end
  local real = real_path(path)
  local mode = core.file_mode(real)
  local ok, err = core.write_private_file(real, new, mode or 384) -- 384 = 0600
  if not ok then return nil, werr(path, tostring(err)) end
  local new_hash = trust.hash(new)
  for _, name in ipairs(carried or {}) do trust.remember(dir, path, new_hash, name) end
  return true
end

--- The text of a config file with a server enabled or disabled (what set_enabled writes), false
--- when the entry already has that state, or nil and a message.
---@param text string
---@param server string
---@param enabled boolean
---@return string|false|nil text, string|nil err
function M.edit(text, server, enabled)
  if type(text) ~= "string" or type(server) ~= "string" or type(enabled) ~= "boolean" then
    error("mcp.config.write.edit: text, server (strings) and enabled (boolean) expected", 2)
  end
  return edit(text, server, enabled)
end

return M
