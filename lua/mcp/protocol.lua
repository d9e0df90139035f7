--- Protocol constants (the reference's "Protocol versions" table).
local M = {}

M.LATEST_PROTOCOL_VERSION = "2026-07-28"
M.LATEST_LEGACY_PROTOCOL_VERSION = "2025-11-25"
--- The version the client sends in initialize.
M.PROTOCOL_VERSION = M.LATEST_LEGACY_PROTOCOL_VERSION
M.SUPPORTED_PROTOCOL_VERSIONS = {
  "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
}
M.DEFAULT_PROTOCOL_DISCOVERY_TIMEOUT_MS = 1000
--- How long a server the transport spawns (stdio) may take to write its first line while the
--- server/discover probe waits (lua/mcp/probe.lua). Real servers answer the probe 0.04-1.4 s after
--- spawn on an idle machine (docs/INTEROP.md); a loaded machine takes several times that.
M.DEFAULT_PROTOCOL_DISCOVERY_STARTUP_MS = 10000
M.MODERN_PROTOCOL_ERROR_CODES = { -32020, -32021, -32022 }
M.DEFAULT_REQUEST_TIMEOUT_MS = 30000
-- The first connect of a server the transport spawns (stdio): a cold `npx -y` / `uvx` start
-- downloads its package first (28 s measured); the TypeScript SDK allows 60 s too.
M.DEFAULT_STDIO_CONNECT_TIMEOUT_MS = 60000
--- How many input_required rounds (SEP-2322) one call may take before it fails.
M.DEFAULT_MAX_INPUT_ROUNDS = 16
M.LOGGING_LEVELS = {
  "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
}

--- Versions with the stateful lifecycle (initialize, then notifications/initialized), the ones
--- a client can ask for in initialize (config.protocol_version).
M.STATEFUL_PROTOCOL_VERSIONS = {
  "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
}

--- Check config.protocol_version: the version to ask for (nil: PROTOCOL_VERSION, the legacy
--- initialize default), or nil and a message when this client does not speak it. A stateful
--- version asks for the initialize handshake; a stateless one (2026-07-28) for the modern era.
---@param version string|nil
---@return string|nil version, string|nil err
function M.requestable(version)
  if version == nil then return M.PROTOCOL_VERSION end
  if M.is_supported(version) then return version end
  return nil, "unknown protocol version " .. tostring(version) .. "; use one of "
    .. table.concat(M.SUPPORTED_PROTOCOL_VERSIONS, ", ")
end

--- The server info a 2026-07-28 DiscoverResult carries in its _meta
--- (`io.modelcontextprotocol/serverInfo`, an Implementation): the whole object as the server sent
--- it (name, version, title, description, icons, websiteUrl and any other field), as the legacy
--- era's InitializeResult.serverInfo is kept; nil when name or version is missing. A shallow copy,
--- so the caller's result is never shared.
---@param result table
---@return table|nil
function M.discover_result_server_info(result)
  local meta = type(result) == "table" and result._meta
  local info = type(meta) == "table" and meta["io.modelcontextprotocol/serverInfo"]
  if type(info) ~= "table" or type(info.name) ~= "string" or type(info.version) ~= "string" then
    return nil
  end
  local copy = {}
  for k, v in pairs(info) do copy[k] = v end
  return setmetatable(copy, getmetatable(info))
end

function M.is_supported(version)
  for _, v in ipairs(M.SUPPORTED_PROTOCOL_VERSIONS) do
    if v == version then return true end
  end
  return false
end

return M
