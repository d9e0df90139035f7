--- Server configuration files: the `mcpServers` format (Claude Desktop, Cursor, Claude Code,
--- mcphub.nvim's servers.json), VS Code's `servers` format (with `type` and `inputs`) and Zed's
--- `context_servers`, read as
--- JSON with comments and trailing commas, with `${env:NAME}`, `${NAME}`, `${NAME:-default}` and
--- `${input:id}` filled in. The result is one normalised table that mcp.hub (and anyone else)
--- can start servers from:
---
---   local cfg = assert(mcp.config.load("mcp.json", { on_input = mcp.config.tty_input() }))
---   for _, name in ipairs(cfg.order) do print(name, cfg.servers[name].type) end
local errors = require("mcp.errors")
local files = require("mcp.util.file")
local json = require("mcp.json")
local trust = require("mcp.config.trust")
local term = require("mcp.util.term")

local M = {}

-- ---- errors ------------------------------------------------------------------------------------

-- A config error: kind "config", and the file, server and field it is about, both in the message
-- and as fields (err.file, err.server, err.field).
local function config_error(ctx, server, field, msg, kind)
  local where = {}
  if ctx.file then where[#where + 1] = ctx.file end
  if server then where[#where + 1] = "server '" .. server .. "'" end
  if field then where[#where + 1] = "field '" .. field .. "'" end
  local text = (#where > 0 and (table.concat(where, ": ") .. ": ") or "") .. msg
  local e = errors.new(nil, text, nil, { kind = kind or "config" })
  e.file, e.server, e.field = ctx.file, server, field
  return e
end

-- Raised inside the loader, caught by load(): a config problem found deep in a value.
local Fail = {}
local function fail(ctx, server, field, msg, kind)
  error(setmetatable({ err = config_error(ctx, server, field, msg, kind) }, Fail), 0)
end

-- ---- JSON with comments ------------------------------------------------------------------------

--- Blank out `//` and `/* */` comments and trailing commas (outside strings) so that plain JSON
--- remains; every other byte, newlines included, keeps its offset, so parse errors still point
--- at the right line.
---@param text string
---@return string|nil plain, string|nil err
function M.strip_jsonc(text)
  local out, i, n = {}, 1, #text
  local last_sig = nil -- index in out of the last significant character (not space/comment)
  while i <= n do
    local c = text:sub(i, i)
    if c == '"' then
      local j = i + 1
      while j <= n do
        local d = text:sub(j, j)
        if d == "\\" then
          j = j + 2
        elseif d == '"' then
          break
        else
          j = j + 1
        end
      end
      out[#out + 1] = text:sub(i, j)
      last_sig = #out
      i = j + 1
    elseif c == "/" and text:sub(i + 1, i + 1) == "/" then
      local j = text:find("\n", i, true) or (n + 1)
      out[#out + 1] = string.rep(" ", j - i)
      i = j
    elseif c == "/" and text:sub(i + 1, i + 1) == "*" then
      local j = text:find("*/", i + 2, true)
      if not j then return nil, "unterminated /* comment" end
      out[#out + 1] = (text:sub(i, j + 1):gsub("[^\n]", " "))
      i = j + 2
    elseif c == "}" or c == "]" then
      if last_sig and out[last_sig] == "," then out[last_sig] = " " end
      out[#out + 1] = c
      last_sig = #out
      i = i + 1
    elseif c:match("%s") then
      out[#out + 1] = c
      i = i + 1
    else
      out[#out + 1] = c
      last_sig = #out
      i = i + 1
    end
  end
  return table.concat(out)
end

local function line_col(text, pos)
  local line, col = 1, pos
  for nl in text:sub(1, pos - 1):gmatch("()\n") do
    line = line + 1
    col = pos - nl
  end
  return line, col
end

--- Decode JSON with comments and trailing commas. Returns the value or nil, message (with the
--- line and column of a syntax error).
---@param text string
---@return any value, string|nil err
function M.decode_jsonc(text)
  if type(text) ~= "string" then error("mcp.config.decode_jsonc: text must be a string", 2) end
  if text:sub(1, 3) == "\239\187\191" then text = "   " .. text:sub(4) end -- UTF-8 BOM
  local plain, serr = M.strip_jsonc(text)
  if not plain then return nil, serr end
  if not plain:find("%S") then return nil, "the file is empty" end
  local v, err = json.decode(plain)
  if v == nil and err then
    local byte = tonumber(err:match("at byte (%d+)")) -- 0-based
    if byte then
      local l, c = line_col(text, byte + 1)
      err = err:gsub("at byte %d+", ("at line %d, column %d"):format(l, c))
    end
    return nil, err
  end
  return v
end

-- ---- interpolation -----------------------------------------------------------------------------

local ALLOWED_ENV = {}
for _, n in ipairs(trust.ENV_ALLOWLIST) do ALLOWED_ENV[n] = true end

local function getenv(ctx, name)
  -- A file outside the user's own configuration gets only what a stdio server inherits anyway.
  if not ctx.trusted and not ALLOWED_ENV[name] then return nil, true end
  local env = ctx.opts.env
  if type(env) == "table" then return env[name] end
  if type(env) == "function" then return env(name) end
  return os.getenv(name)
end

local function ask_input(ctx, server, field, id)
  local cache = ctx.input_values
  if cache[id] ~= nil then return cache[id] end
  local preset = ctx.opts.inputs
  if type(preset) == "table" and preset[id] ~= nil then
    cache[id] = tostring(preset[id])
    return cache[id]
  end
  local handler = ctx.opts.on_input
  local decl = ctx.inputs[id]
  if handler == nil then
    fail(ctx, server, field, "${input:" .. id .. "} needs a value: pass opts.inputs or an opts.on_input handler "
      .. "(mcp.config.tty_input() or mcp.config.nvim_input())")
  end
  if ctx.opts.ask == false then
    fail(ctx, server, field, "${input:" .. id .. "} was not asked (a load that asks nothing)", "unasked")
  end
  local request = { id = id }
  if decl then
    for k, v in pairs(decl) do request[k] = v end
  end
  request.id = id
  request.server = server
  local value, herr = handler(request)
  if value == nil then
    fail(ctx, server, field, "input '" .. id .. "' was not given" .. (herr and (": " .. tostring(herr)) or ""))
  end
  if type(value) ~= "string" and type(value) ~= "number" and type(value) ~= "boolean" then
    fail(ctx, server, field, "the input handler returned a " .. type(value) .. " for '" .. id .. "'")
  end
  cache[id] = tostring(value)
  return cache[id]
end

local function basename(p)
  return (p:gsub("/+$", ""):match("([^/]*)$"))
end

-- The workspace of a file in a `.vscode/` or `.cursor/` directory is the directory above it;
-- any other file's (and a table's) is the current directory.
local function workspace_folder(ctx)
  local dir = ctx.file and ctx.file:match("^(.*)/%.vscode/[^/]*$") or ctx.file and ctx.file:match("^(.*)/%.cursor/[^/]*$")
  if dir == "" then dir = "/" end
  if dir and dir:sub(1, 1) ~= "/" then
    local pwd = os.getenv("PWD")
    if pwd then dir = pwd .. "/" .. dir end
  end
  return dir or os.getenv("PWD") or "."
end

-- VS Code's and Cursor's built-in variables (opts.variables wins over them).
local BUILTIN = {
  workspaceFolder = workspace_folder,
  workspaceFolderBasename = function(ctx) return basename(workspace_folder(ctx)) end,
  userHome = function() return os.getenv("HOME") end,
  pathSeparator = function() return "/" end,
  ["/"] = function() return "/" end,
}

-- mcphub's ${cmd: ...}: runs a shell command, so only when the host opts in (allow_cmd) and
-- never for a file outside the user's own configuration.
local function run_cmd(ctx, server, field, cmd)
  if not ctx.trusted then
    fail(ctx, server, field, "${cmd:...} is not run: the file is not in your own configuration", "untrusted")
  end
  if not ctx.opts.allow_cmd then
    fail(ctx, server, field, "${cmd:...} runs a command: the host must pass allow_cmd = true to allow it")
  end
  local fh = io.popen(cmd, "r")
  local out = fh and fh:read("*a")
  local ok = fh and fh:close()
  if not out or not ok then fail(ctx, server, field, "the command of ${cmd:" .. cmd .. "} failed") end
  return (out:gsub("[\r\n]+$", ""))
end

-- Fill in ${...} in one string. `field` names it in errors.
local function interpolate(ctx, server, field, s)
  return (s:gsub("%${([^}]*)}", function(expr)
    local id = expr:match("^input:(.+)$")
    if id then return ask_input(ctx, server, field, id) end
    local var = ctx.opts.variables and ctx.opts.variables[expr]
    if var ~= nil then return tostring(var) end
    local cmd = expr:match("^cmd:%s*(.-)%s*$")
    if cmd then return run_cmd(ctx, server, field, cmd) end
    local builtin = BUILTIN[expr] and BUILTIN[expr](ctx)
    if builtin then return builtin end
    local bare = expr:match("^env:(.*)$") or expr
    local name, default = bare:match("^([%a_][%w_]*):%-(.*)$")
    if not name then name = bare:match("^([%a_][%w_]*)$") end
    if name then
      local v, withheld = getenv(ctx, name)
      if v == nil or (v == "" and default ~= nil) then
        if default ~= nil then return default end
        if withheld then
          fail(ctx, server, field, "${env:" .. name .. "} is not expanded: the file is not in your own configuration "
            .. "(only " .. table.concat(trust.ENV_ALLOWLIST, ", ") .. " are)", "untrusted")
        end
        if ctx.opts.missing_env == "empty" then return "" end
        fail(ctx, server, field, "environment variable " .. name .. " is not set (use ${" .. name
          .. ":-default} for a default)")
      end
      return v
    end
    fail(ctx, server, field, "unknown variable ${" .. expr .. "} (known: ${env:NAME}, ${NAME}, ${NAME:-default}, "
      .. "${input:id}, ${workspaceFolder}, ${userHome}, ..., and opts.variables)")
  end))
end

-- ---- values ------------------------------------------------------------------------------------

local function is_array(t)
  if type(t) ~= "table" then return false end
  if json.is_array(t) then return true end
  if next(t) == nil then return true end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function is_object(t)
  return type(t) == "table" and not json.is_array(t) and (next(t) == nil or #t == 0)
end

local function get(entry, ...)
  for i = 1, select("#", ...) do
    local k = select(i, ...)
    if entry[k] ~= nil and entry[k] ~= json.null then return entry[k], k end
  end
  return nil, (...)
end

local function jtype(v)
  if v == json.null then return "null" end
  if type(v) == "table" then return (json.is_array(v) or #v > 0) and "an array" or "an object" end
  if type(v) == "string" then return "a string" end
  if type(v) == "number" then return "a number" end
  if type(v) == "boolean" then return "a boolean" end
  return type(v)
end

local function str(ctx, server, field, v)
  if type(v) == "number" then v = tostring(v) end
  if type(v) ~= "string" then fail(ctx, server, field, "must be a string, got " .. jtype(v)) end
  return interpolate(ctx, server, field, v)
end

local function string_array(ctx, server, field, v)
  if not is_array(v) then fail(ctx, server, field, "must be an array of strings, got " .. jtype(v)) end
  local out = {}
  for i, item in ipairs(v) do
    if type(item) ~= "string" and type(item) ~= "number" then
      fail(ctx, server, field .. "[" .. i .. "]", "must be a string, got " .. jtype(item))
    end
    out[i] = interpolate(ctx, server, field .. "[" .. i .. "]", tostring(item))
  end
  return out
end

-- mcphub's `"KEY": null` / `"KEY": ""` in env: the value of the user's own environment (left out
-- when it is unset there; an untrusted file gets only the allowlist).
local function from_environment(ctx, server, f, k, out)
  local v, withheld = getenv(ctx, k)
  if withheld then
    fail(ctx, server, f, "is not taken from your environment: the file is not in your own configuration", "untrusted")
  end
  out[k] = v
end

-- {NAME = value}: strings, numbers and booleans become strings; null leaves the name out (in
-- env, null and "" take the value from the environment).
local function string_map(ctx, server, field, v, check_name, inherit)
  if not is_object(v) then fail(ctx, server, field, "must be an object {NAME: value}, got " .. jtype(v)) end
  local out = {}
  for k, item in pairs(v) do
    local f = field .. "." .. tostring(k)
    if type(k) ~= "string" then fail(ctx, server, field, "keys must be strings") end
    if check_name and not check_name(k) then fail(ctx, server, f, "is not a valid name") end
    local t = type(item)
    if inherit and (item == json.null or item == "") then
      from_environment(ctx, server, f, k, out)
    elseif item == json.null then
      -- left out
    elseif t == "string" then
      out[k] = interpolate(ctx, server, f, item)
    elseif t == "number" or t == "boolean" then
      out[k] = tostring(item)
    else
      fail(ctx, server, f, "must be a string, number or boolean, got " .. jtype(item))
    end
  end
  return out
end

local function boolean(ctx, server, field, v)
  if type(v) ~= "boolean" then fail(ctx, server, field, "must be true or false, got " .. jtype(v)) end
  return v
end

local function dirname(p)
  return p:match("^(.*)/[^/]*$") or "."
end

-- A dotenv file (VS Code's envFile): NAME=value lines, # comments, optional quotes, `export `.
local function read_env_file(ctx, server, path)
  -- A file that is not trusted reads only dotenv files beside it (not ~/.aws/..., not /etc/...).
  if not ctx.trusted and (path:sub(1, 1) == "/" or ("/" .. path .. "/"):find("/../", 1, true)) then
    fail(ctx, server, "envFile", "must be a path inside the file's own directory in a file that is not in your own "
      .. "configuration, got " .. path, "untrusted")
  end
  if ctx.file and path:sub(1, 1) ~= "/" then path = dirname(ctx.file) .. "/" .. path end
  if not ctx.trusted then
    -- ...and not through a symbolic link that leads out of that directory
    local real, rerr = trust.inside(path, ctx.file and dirname(ctx.file) or ".")
    if real == nil then fail(ctx, server, "envFile", "is not read: " .. tostring(rerr), "untrusted") end
    path = real
  end
  local text, err = files.read(path)
  if not text then fail(ctx, server, "envFile", "cannot read " .. path .. ": " .. tostring(err)) end
  local out, ln = {}, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    ln = ln + 1
    line = line:gsub("\r$", "")
    if line:find("%S") and not line:match("^%s*#") then
      local k, v = line:match("^%s*export%s+([%a_][%w_]*)%s*=%s*(.-)%s*$")
      if not k then k, v = line:match("^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$") end
      if not k then fail(ctx, server, "envFile", path .. ":" .. ln .. ": expected NAME=value") end
      local q = v:sub(1, 1)
      if (q == '"' or q == "'") and v:sub(-1) == q and #v >= 2 then v = v:sub(2, -2) end
      out[k] = v
    end
  end
  return out
end

-- ---- one server ----------------------------------------------------------------------------------

local TYPES = {
  stdio = "stdio", ["local"] = "stdio",
  http = "http", ["streamable-http"] = "http", streamableHttp = "http", streamable_http = "http",
  sse = "sse",
}

local function env_name(k) return k:match("^[^=%z]+$") ~= nil end
local function header_name(k) return k:match("^[!#$%%&'*+%-.^_`|~%w]+$") ~= nil end

local function tool_list_or_bool(ctx, name, field, v)
  if type(v) == "boolean" then return v end
  return string_array(ctx, name, field, v)
end

-- A server's flags, checked even for disabled servers (nothing in them is interpolated).
local function parse_flags(ctx, name, entry, s)
  local disabled, dkey = get(entry, "disabled")
  if disabled ~= nil then s.disabled = boolean(ctx, name, dkey, disabled) end
  local enabled, ekey = get(entry, "enabled")
  if enabled ~= nil and not boolean(ctx, name, ekey, enabled) then s.disabled = true end
  s.disabled = s.disabled or false
  local dt, dtk = get(entry, "disabled_tools", "disabledTools")
  s.disabled_tools = dt ~= nil and string_array(ctx, name, dtk, dt) or {}
  local aa, aak = get(entry, "auto_approve", "autoApprove", "alwaysAllow")
  s.auto_approve = {}
  if aa ~= nil then
    local v = tool_list_or_bool(ctx, name, aak, aa)
    -- A file outside the user's own configuration does not approve tools for them.
    if ctx.trusted or ctx.opts.honor_auto_approve then s.auto_approve = v else s.auto_approve_ignored = true end
  end
end

-- The transport type (given or inferred); returns the raw command and url.
local function parse_type(ctx, name, entry, s)
  local command, url = get(entry, "command"), get(entry, "url", "serverUrl")
  local t, tkey = get(entry, "type", "transport")
  if t ~= nil then
    if type(t) ~= "string" or TYPES[t] == nil then
      fail(ctx, name, tkey, 'must be "stdio", "http" or "sse", got ' .. (type(t) == "string" and ('"' .. t .. '"') or jtype(t)))
    end
    s.type = TYPES[t]
  elseif command ~= nil then
    s.type = "stdio"
  elseif url ~= nil then
    s.type = "http"
    s.type_inferred = true
  else
    fail(ctx, name, nil, "needs 'command' (a stdio server) or 'url' (an http or sse server)")
  end
  if s.type == "stdio" and command == nil then fail(ctx, name, "command", "is required for a stdio server") end
  if s.type ~= "stdio" and url == nil then fail(ctx, name, "url", "is required for an " .. s.type .. " server") end
  if command ~= nil and url ~= nil then fail(ctx, name, nil, "has both 'command' and 'url': give one") end
  return command, url
end

-- {NAME = value} of the entry as "NAME=value" lines, sorted (null: taken from the environment).
local function shown_map(m, sep)
  if not is_object(m) then return nil end
  local out = {}
  for k, v in pairs(m) do
    out[#out + 1] = tostring(k) .. sep .. ((v == json.null or v == "") and "(from your environment)" or tostring(v))
  end
  table.sort(out)
  return out
end

-- What the trust hook is shown: the entry as the file has it (not interpolated), with what
-- changes what the command does (env: NODE_OPTIONS, LD_PRELOAD, PATH; envFile) or where a
-- request goes and what it carries (headers).
local function trust_entry(name, entry, s, command, url)
  local args = get(entry, "args")
  local shown = { name = name, type = s.type, raw = entry }
  if s.type == "stdio" then
    shown.command = tostring(command)
    shown.args = {}
    if is_array(args) then for i, a in ipairs(args) do shown.args[i] = tostring(a) end end
    local cwd = get(entry, "cwd", "working_dir")
    if type(cwd) == "string" then shown.cwd = cwd end
    shown.env = shown_map(get(entry, "env"), "=")
    local env_file = get(entry, "envFile")
    if env_file ~= nil then shown.env_file = tostring(env_file) end
  else
    shown.url = tostring(url)
    shown.headers = shown_map(get(entry, "headers"), ": ")
  end
  return shown
end

-- A server of a file outside the user's own configuration starts only with the hook's yes.
local function check_trust(ctx, name, entry, s, command, url)
  if ctx.trusted then
    s.trusted = true
    return
  end
  s.trusted = false
  local file, hash = ctx.file, ctx.hash
  if file and hash and trust.remembered(ctx.trust_dir, file, hash, name) then return end
  local hook = ctx.opts.trust
  if hook == nil then
    fail(ctx, name, nil, "not started: the file is not in your own configuration and nothing was asked (pass a "
      .. "trust hook, or trusted = true for a file you trust)", "untrusted")
  end
  if ctx.opts.ask == false then
    fail(ctx, name, nil, "not started: the file is not in your own configuration and the trust question was not "
      .. "asked (a load that asks nothing)", "unasked")
  end
  local ok, answer = pcall(hook, trust_entry(name, entry, s, command, url), file)
  if not ok then fail(ctx, name, nil, "not started: the trust hook raised: " .. tostring(answer), "untrusted") end
  if answer ~= true and answer ~= "always" and answer ~= "once" then
    fail(ctx, name, nil, "not started: the trust hook said no", "untrusted")
  end
  if answer ~= "once" and file and hash then
    local saved, err = trust.remember(ctx.trust_dir, file, hash, name)
    if not saved then s.trust_warning = "the answer could not be remembered: " .. tostring(err) end
  end
end

local function parse_stdio(ctx, name, entry, s, command)
  s.command = str(ctx, name, "command", command)
  if s.command == "" then fail(ctx, name, "command", "is empty") end
  local args = get(entry, "args")
  s.args = args ~= nil and string_array(ctx, name, "args", args) or {}
  local env = {}
  local env_file = get(entry, "envFile")
  if env_file ~= nil then env = read_env_file(ctx, name, str(ctx, name, "envFile", env_file)) end
  local e = get(entry, "env")
  if e ~= nil then
    for k, v in pairs(string_map(ctx, name, "env", e, env_name, true)) do env[k] = v end
  end
  s.env = env
  local cwd, ck = get(entry, "cwd", "working_dir")
  if cwd ~= nil then s.cwd = str(ctx, name, ck, cwd) end
end

local function parse_remote(ctx, name, entry, s, url)
  s.url = str(ctx, name, "url", url)
  if not s.url:match("^https?://") then fail(ctx, name, "url", "must be an http:// or https:// URL, got " .. s.url) end
  local h = get(entry, "headers")
  s.headers = h ~= nil and string_map(ctx, name, "headers", h, header_name) or {}
end

-- oauth settings pass through to the transport, strings interpolated (client secrets usually
-- come from ${env:...} or ${input:...}).
local function parse_oauth(ctx, name, entry, s)
  local oauth, ok = get(entry, "oauth", "auth")
  if oauth == nil then return end
  if not is_object(oauth) then fail(ctx, name, ok, "must be an object, got " .. jtype(oauth)) end
  local function walk(v, path)
    if type(v) == "string" then return interpolate(ctx, name, path, v) end
    if type(v) == "table" then
      local c = setmetatable({}, getmetatable(v))
      for k, x in pairs(v) do c[k] = walk(x, path .. "." .. tostring(k)) end
      return c
    end
    return v
  end
  s.oauth = walk(oauth, ok)
end

local function parse_server(ctx, name, entry)
  if type(name) ~= "string" or name == "" then fail(ctx, nil, nil, "a server name must be a non-empty string") end
  if not is_object(entry) then
    fail(ctx, name, nil, "must be an object, got " .. jtype(entry))
  end
  local s = { name = name, raw = entry }
  parse_flags(ctx, name, entry, s)
  local command, url = parse_type(ctx, name, entry, s)
  if s.disabled then return s end -- not started: nothing is interpolated or asked
  if ctx.only and not ctx.only[name] then
    s.skipped = true -- not asked for (opts.only): checked, not interpolated
    return s
  end
  check_trust(ctx, name, entry, s, command, url)
  if s.type == "stdio" then
    parse_stdio(ctx, name, entry, s, command)
    local sb = get(entry, "sandbox")
    if sb ~= nil then
      -- Checked in full (mcp.sandbox) when the transport is made; a file may only narrow it.
      if type(sb) ~= "string" and not is_object(sb) then
        fail(ctx, name, "sandbox", "must be a preset name or an object, got " .. jtype(sb))
      end
      s.sandbox = sb
    end
  else
    parse_remote(ctx, name, entry, s, url)
  end
  parse_oauth(ctx, name, entry, s)
  local timeout, tok = get(entry, "timeout_ms", "timeout")
  if timeout ~= nil then
    if type(timeout) ~= "number" or timeout <= 0 then fail(ctx, name, tok, "must be a positive number") end
    -- Cline and Roo give `timeout` in seconds; timeout_ms is milliseconds.
    s.timeout_ms = tok == "timeout" and timeout * 1000 or timeout
  end
  return s
end

-- ---- the whole file ----------------------------------------------------------------------------

local function parse_inputs(ctx, list)
  local by_id = {}
  if list == nil then return by_id end
  if not is_array(list) then fail(ctx, nil, "inputs", "must be an array, got " .. jtype(list)) end
  for i, inp in ipairs(list) do
    local f = "inputs[" .. i .. "]"
    if not is_object(inp) then fail(ctx, nil, f, "must be an object, got " .. jtype(inp)) end
    if type(inp.id) ~= "string" or inp.id == "" then fail(ctx, nil, f .. ".id", "must be a non-empty string") end
    local t = inp.type
    if t ~= nil and t ~= "promptString" and t ~= "pickString" and t ~= "command" then
      fail(ctx, nil, f .. ".type", 'must be "promptString" or "pickString", got ' .. tostring(t))
    end
    if t == "pickString" and not is_array(inp.options) then
      fail(ctx, nil, f .. ".options", "must be an array for a pickString input")
    end
    by_id[inp.id] = {
      id = inp.id, type = t or "promptString", description = type(inp.description) == "string" and inp.description or nil,
      password = inp.password == true, default = inp.default ~= json.null and inp.default or nil,
      options = inp.options,
    }
  end
  return by_id
end

-- Zed's settings.json: {"context_servers": {name: {"command": {"path", "args", "env"}}}} (older)
-- or {name: {"command", "args", "env"}} / {name: {"url", "headers"}} (newer). A server an
-- extension provides (no command, no url) cannot be started from the file: it is listed apart.
local function zed_servers(ctx, servers)
  if not is_object(servers) then return servers end
  local out, extensions = {}, {}
  for name, entry in pairs(servers) do
    if is_object(entry) and is_object(entry.command) then
      local e = {}
      for k, v in pairs(entry) do e[k] = v end
      e.command, e.args, e.env = entry.command.path, entry.command.args, entry.command.env
      if e.command == nil then fail(ctx, name, "command.path", "is required for a stdio server") end
      out[name] = e
    elseif is_object(entry) and entry.command == nil and entry.url == nil then
      extensions[#extensions + 1] = name
    else
      out[name] = entry
    end
  end
  table.sort(extensions)
  return out, extensions
end

local function parse_doc(ctx, doc)
  if not is_object(doc) then fail(ctx, nil, nil, "the top level must be a JSON object, got " .. jtype(doc)) end
  if is_object(doc.mcp) and (doc.mcp.servers ~= nil) and doc.servers == nil then
    doc = doc.mcp -- VS Code settings.json: {"mcp": {"servers": ..., "inputs": ...}}
  end
  local servers, format, key, extensions
  if doc.mcpServers ~= nil then
    servers, key = doc.mcpServers, "mcpServers"
    format = (doc.nativeMCPServers ~= nil) and "mcphub" or "mcpServers"
  elseif doc.servers ~= nil then
    servers, key, format = doc.servers, "servers", "vscode"
  elseif doc.context_servers ~= nil then
    key, format = "context_servers", "zed"
    servers, extensions = zed_servers(ctx, doc.context_servers)
  else
    fail(ctx, nil, nil, "no 'mcpServers' (Claude, Cursor, mcphub), 'servers' (VS Code) or 'context_servers' (Zed) object")
  end
  if not is_object(servers) then fail(ctx, nil, key, "must be an object {name: server}, got " .. jtype(servers)) end
  ctx.inputs = parse_inputs(ctx, doc.inputs)
  local out = { file = ctx.file, format = format, servers = {}, order = {}, inputs = ctx.inputs,
    extension_servers = extensions }
  local names = {}
  for name in pairs(servers) do names[#names + 1] = name end
  table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
  for _, name in ipairs(names) do
    local entry = servers[name]
    if ctx.opts.keep_going and type(name) == "string" and name ~= "" then
      -- One server's problem (an unset variable, a wrong field) stays that server's.
      local ok, res = pcall(parse_server, ctx, name, entry)
      if not ok then
        if getmetatable(res) ~= Fail then error(res, 0) end
        out.errors = out.errors or {}
        out.errors[name] = res.err
        res = { name = name, raw = entry, error = res.err, disabled = false, disabled_tools = {}, auto_approve = {} }
      end
      out.servers[name] = res
    else
      out.servers[name] = parse_server(ctx, name, entry)
    end
    out.order[#out.order + 1] = name
  end
  if format == "mcphub" and is_object(doc.nativeMCPServers) then
    out.native = doc.nativeMCPServers -- mcphub's settings of its Lua-native servers, kept as they are
  end
  return out
end

local function check_trust_opts(opts)
  if opts.trust ~= nil and type(opts.trust) ~= "function" then error("mcp.config.load: opts.trust must be a function", 3) end
  if opts.trusted ~= nil and type(opts.trusted) ~= "boolean" then
    error("mcp.config.load: opts.trusted must be a boolean", 3)
  end
  if opts.ask ~= nil and type(opts.ask) ~= "boolean" then error("mcp.config.load: opts.ask must be a boolean", 3) end
  if opts.sha256 ~= nil and (type(opts.sha256) ~= "string" or not opts.sha256:match("^%x+$") or #opts.sha256 ~= 64) then
    error("mcp.config.load: opts.sha256 must be a hex SHA-256", 3)
  end
end

--- Load a server configuration from a file path or an already decoded table.
--- opts: `on_input(input) -> value | nil, err` asked for `${input:id}` (input: id, type,
--- description, password, default, options, server); `inputs` {id = value} given up front;
--- `env` (table or function(name)) instead of os.getenv; `variables` {name = value} for other
--- `${name}` (they win over the built-in workspaceFolder, workspaceFolderBasename, userHome,
--- pathSeparator and `/` of VS Code and Cursor); `allow_cmd = true` runs mcphub's `${cmd: ...}`
--- through the shell (off by default; never for an untrusted file); `missing_env = "empty"` makes an unset variable "" instead
--- of an error; `only` {names}: interpolate just these servers (the others are checked, not
--- interpolated, and marked `skipped`), e.g. to start one server of a file; `keep_going`: a
--- server whose entry is invalid or cannot be interpolated does not fail the load, it comes as
--- `{name, raw, error}` and in `config.errors[name]` (problems of the file itself still fail).
--- Trust (docs/SECURITY.md "Config files"): a file outside the user's own configuration is not
--- trusted: each server it names needs `trust(entry, source) -> true | "once" | false` to say
--- yes (true is remembered for this file's content, under `trust_dir`, default the token store's
--- directory), or the host's `trusted = true`; without either it fails with kind "untrusted".
--- In such a file `${env:...}` expands only mcp.config.trust.ENV_ALLOWLIST and autoApprove is
--- ignored unless `honor_auto_approve = true`. A table source is trusted unless `trusted = false`;
--- a table read from a file may name it (`file`) and the SHA-256 of the content it came from
--- (`sha256`, the `sha256` of a load of that file), so that answers remembered for that content
--- count and a yes is remembered. `ask = false` asks nothing (a load no one asked for, such as a
--- host's startup): where the trust hook or `on_input` would be called (not for a remembered yes
--- nor a value in `inputs`), that server fails with kind "unasked" instead. The result has
--- `trusted`, and `sha256` for a file.
---@param source string|table
---@param opts table|nil
---@return table|nil config, mcp.Error|nil err
function M.load(source, opts)
  if type(source) ~= "string" and type(source) ~= "table" then
    error("mcp.config.load: a file path or a table expected", 2)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error("mcp.config.load: opts must be a table", 2) end
  if opts.on_input ~= nil and type(opts.on_input) ~= "function" then
    error("mcp.config.load: opts.on_input must be a function", 2)
  end
  if type(source) == "table" and source.servers ~= nil and source.order ~= nil and source.format ~= nil then
    return source -- already loaded
  end
  check_trust_opts(opts)
  local ctx = { opts = opts, input_values = {}, inputs = {}, trust_dir = trust.dir(opts.trust_dir) }
  if opts.only ~= nil then
    if type(opts.only) ~= "table" then error("mcp.config.load: opts.only must be an array of server names", 2) end
    ctx.only = {}
    for _, n in ipairs(opts.only) do ctx.only[n] = true end
  end
  local doc
  if type(source) == "string" then
    ctx.file = source
    local text, rerr = files.read(source)
    if not text then return nil, config_error(ctx, nil, nil, "cannot read the file: " .. tostring(rerr)) end
    local derr
    doc, derr = M.decode_jsonc(text)
    if doc == nil then return nil, config_error(ctx, nil, nil, "invalid JSON: " .. tostring(derr)) end
    ctx.hash = trust.hash(text)
    -- The user's own files are trusted; any other file only when the host says so.
    if opts.trusted ~= nil then ctx.trusted = opts.trusted else ctx.trusted = trust.user_file(source) end
  else
    doc = source
    ctx.file = opts.file
    ctx.hash = opts.file and opts.sha256 and opts.sha256:lower() or nil
    ctx.trusted = opts.trusted ~= false -- a table comes from the host itself
  end
  local ok, res = pcall(parse_doc, ctx, doc)
  if not ok then
    if getmetatable(res) == Fail then return nil, res.err end
    error(res, 0)
  end
  res.trusted, res.sha256 = ctx.trusted, ctx.hash
  return res
end

-- ---- input handlers ----------------------------------------------------------------------------

--- An `on_input` handler that asks on the terminal (/dev/tty, else stdin/stderr); passwords are
--- read with echo off when `stty` is available. opts: input (file or function), output (file).
---@param opts table|nil
---@return fun(input: table): string|nil, string|nil
function M.tty_input(opts)
  opts = opts or {}
  return function(input)
    local tty = not opts.input and io.open("/dev/tty", "r") or nil
    local tty_in = opts.input or tty or io.stdin
    local out = opts.output or io.open("/dev/tty", "w") or io.stderr
    -- The description, options and default come from the file: escaped (mcp.util.term).
    local prompt = term.escape(input.description or input.id)
    if input.server then prompt = prompt .. " (for " .. term.escape(input.server) .. ")" end
    if input.type == "pickString" and type(input.options) == "table" then
      for i, o in ipairs(input.options) do
        local label = type(o) == "table" and (o.label or o.value) or o
        out:write(("  %d) %s\n"):format(i, term.escape(label)))
      end
    end
    if input.default ~= nil then prompt = prompt .. " [" .. term.escape(input.default) .. "]" end
    out:write(prompt, ": ")
    out:flush()
    -- stty only on a terminal that opened (else the shell's redirect would print its own error);
    -- 2>/dev/null comes first so that nothing of it reaches the user's stderr either way.
    local secret = input.password and tty ~= nil and os.execute("stty -echo 2>/dev/null < /dev/tty")
    local line
    if type(tty_in) == "function" then line = tty_in() else line = tty_in:read("*l") end
    if secret then
      os.execute("stty echo 2>/dev/null < /dev/tty")
      out:write("\n")
    end
    if line == nil then return nil, "no answer (end of input)" end
    if line == "" and input.default ~= nil then return tostring(input.default) end
    if input.type == "pickString" and type(input.options) == "table" then
      local o = input.options[tonumber(line)]
      if o ~= nil then return tostring(type(o) == "table" and o.value or o) end
    end
    return line
  end
end

--- A `trust` hook that shows the server (escaped) and asks on the terminal (/dev/tty, else
--- stdin): "y" yes (remembered for this file's content), "o" once, anything else no.
--- opts: input (file or function), output (file).
---@param opts table|nil
---@return fun(entry: table, source: string|nil): boolean|string
function M.tty_trust(opts)
  return trust.tty_hook(opts)
end

--- The trust module (user_file, ENV_ALLOWLIST, ...): see mcp.config.trust.
M.trust = trust

--- An `on_input` handler for Neovim: vim.fn.inputsecret for passwords, vim.fn.inputlist for
--- pickString, vim.fn.input otherwise (all synchronous, so it works while the config loads).
---@return fun(input: table): string|nil, string|nil
function M.nvim_input()
  return function(input)
    local vim = rawget(_G, "vim")
    if vim == nil then return nil, "mcp.config.nvim_input works only inside Neovim" end
    local prompt = (input.description or input.id) .. (input.server and (" (" .. input.server .. ")") or "") .. ": "
    if input.type == "pickString" and type(input.options) == "table" then
      local lines = { prompt }
      for i, o in ipairs(input.options) do
        lines[#lines + 1] = ("%d. %s"):format(i, tostring(type(o) == "table" and (o.label or o.value) or o))
      end
      local i = vim.fn.inputlist(lines)
      local o = input.options[i]
      if o == nil then return nil, "nothing chosen" end
      return tostring(type(o) == "table" and o.value or o)
    end
    local ok, v
    if input.password then
      ok, v = pcall(vim.fn.inputsecret, prompt, input.default and tostring(input.default) or "")
    else
      -- the sentinel has no NUL: a Lua string with one reaches Vim script as a Blob (E976)
      ok, v = pcall(vim.fn.input, { prompt = prompt, default = input.default and tostring(input.default) or "",
        cancelreturn = "\1cancelled\1" })
    end
    if not ok or v == "\1cancelled\1" then return nil, "cancelled" end
    return v
  end
end

return M
