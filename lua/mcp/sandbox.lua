--- Confined stdio servers: the `sandbox` option of mcp.stdio_transport, mcp.create_stdio_client,
--- config entries and `mcp-lua --sandbox`, enforced in the child before exec with Linux Landlock
--- and no_new_privs (src/transports/sandbox.c).
---
---   sandbox = { read = {paths}, write = {paths}, net = false, mode = "required" | "best_effort" }
---   sandbox = "npx"                       -- a preset
---   sandbox = { preset = "npx", read = { "/srv/docs" } }
---
--- read/write: the only paths the server and its children may read (and execute) or write, on
--- top of DEFAULT_READ / DEFAULT_WRITE (the system's library and binary dirs, the dynamic
--- loader's config, /dev/null) and the server's own command. `net = false` denies TCP connect
--- and bind (Landlock ABI 4 or newer). `mode = "required"` (the default) fails the start with a
--- clear error when the kernel cannot enforce what was asked; `"best_effort"` starts with what
--- it can enforce and reports the rest to `on_error` (the sandbox's, else the client's).
local core = require("mcp.core")

local M = {}

--- What any program needs to start: binaries, libraries, the dynamic loader's config.
M.DEFAULT_READ = {
  "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32",
  "/usr/lib64", "/usr/libx32", "/usr/libexec", "/usr/local/bin", "/usr/local/lib", "/etc/ld.so.cache",
  "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload", "/dev/urandom", "/dev/random", "/dev/zero",
}
M.DEFAULT_WRITE = { "/dev/null" }

-- What a package runner needs besides: TLS roots, name resolution, the user database, time zones,
-- shared data (Debian's npm lives in /usr/share/nodejs).
local NET_BASE = {
  "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf",
  "/etc/gai.conf", "/etc/host.conf", "/etc/passwd", "/etc/group", "/etc/localtime", "/usr/share", "/usr/local/share",
}

local function home(sub)
  local h = os.getenv("HOME")
  if h == nil or h:sub(1, 1) ~= "/" then return nil end
  return h .. "/" .. sub
end

local function tmp()
  local t = os.getenv("TMPDIR")
  return (t and t:sub(1, 1) == "/") and t or "/tmp"
end

-- The install prefix of a program found in PATH (/opt/node for /opt/node/bin/node), for
-- interpreters outside the system dirs (nvm, a tarball in /opt).
local function prefix_of(prog)
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    local f = io.open(dir .. "/" .. prog, "rb")
    if f then
      f:close()
      return (dir:gsub("/bin/?$", ""))
    end
  end
  return nil
end

local function list(...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "table" then
      for _, x in ipairs(v) do out[#out + 1] = x end
    elseif v ~= nil then
      out[#out + 1] = v
    end
  end
  return out
end

--- Presets: functions returning {read, write, net} for the usual package runners. npx and uvx
--- download packages, so they keep the network; their caches are writable.
M.PRESETS = {
  npx = function()
    return {
      read = list(NET_BASE, prefix_of("node"), home(".npmrc"), home(".nvm"), home(".config/npm")),
      write = list(home(".npm"), tmp()),
      net = true,
    }
  end,
  uvx = function()
    return {
      read = list(NET_BASE, prefix_of("uv"), home(".local/bin"), home(".config/uv")),
      write = list(home(".cache/uv"), home(".local/share/uv"), tmp()),
      net = true,
    }
  end,
}

--- The kernel's Landlock ABI version (0: none).
---@return integer
function M.abi()
  return core.sandbox_abi()
end

local KEYS = { preset = true, read = true, write = true, net = true, mode = true, on_error = true }

local function check_paths(v, field)
  if v == nil then return {} end
  if type(v) ~= "table" then error("mcp.sandbox: " .. field .. " must be an array of paths", 4) end
  for i, p in ipairs(v) do
    if type(p) ~= "string" or p == "" then error(("mcp.sandbox: %s[%d] must be a non-empty path"):format(field, i), 4) end
  end
  return v
end

-- The user's option as a table: a preset name, or a table (with an optional preset).
local function normalise(spec)
  if type(spec) == "string" then spec = { preset = spec } end
  if type(spec) ~= "table" then error("mcp.sandbox: sandbox must be a preset name or a table", 3) end
  for k in pairs(spec) do
    if not KEYS[k] then error("mcp.sandbox: unknown field '" .. tostring(k) .. "'", 3) end
  end
  if spec.mode ~= nil and spec.mode ~= "required" and spec.mode ~= "best_effort" then
    error('mcp.sandbox: mode must be "required" or "best_effort"', 3)
  end
  if spec.net ~= nil and type(spec.net) ~= "boolean" then error("mcp.sandbox: net must be a boolean", 3) end
  if spec.on_error ~= nil and type(spec.on_error) ~= "function" then error("mcp.sandbox: on_error must be a function", 3) end
  local base = { read = {}, write = {} }
  if spec.preset ~= nil then
    local make = M.PRESETS[spec.preset]
    if make == nil then error("mcp.sandbox: unknown preset '" .. tostring(spec.preset) .. "' (npx, uvx)", 3) end
    base = make()
  end
  local net = spec.net
  if net == nil then net = base.net ~= false end
  return {
    read = list(M.DEFAULT_READ, base.read, check_paths(spec.read, "read")),
    write = list(M.DEFAULT_WRITE, base.write, check_paths(spec.write, "write")),
    net = net, mode = spec.mode or "required", on_error = spec.on_error,
  }
end

--- The sandbox the core enforces, from the user's option: {read, write, net}, or nil (none).
--- In "required" mode everything asked goes to the core, which fails the start when the kernel
--- cannot enforce it; in "best_effort" mode what the kernel cannot enforce is left out and
--- reported to on_error (the sandbox's, else `on_error`, else stderr).
---@param spec string|table|nil
---@param on_error fun(err: mcp.Error)|nil
---@return table|nil
function M.resolve(spec, on_error)
  if spec == nil or spec == false then return nil end
  local s = normalise(spec)
  local out = { read = s.read, write = s.write, net = s.net }
  if s.mode == "required" then return out end
  local abi, missing = M.abi(), nil
  if abi < 1 then
    out, missing = nil, "the sandbox is not enforced: this kernel has no Landlock"
  elseif not s.net and abi < 4 then
    out.net, missing = true, ("net = false is not enforced: it needs Landlock ABI 4 (this kernel has %d)"):format(abi)
  end
  if missing then
    local report = s.on_error or on_error
    local err = require("mcp.errors").new(nil, "mcp.sandbox: " .. missing, nil, { kind = "sandbox" })
    if report then report(err) else io.stderr:write(tostring(err.message), "\n") end
  end
  return out
end

return M
