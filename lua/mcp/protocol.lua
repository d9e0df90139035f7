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
M.MODERN_PROTOCOL_ERROR_CODES = { -32020, -32021, -32022 }
M.DEFAULT_REQUEST_TIMEOUT_MS = 30000
M.LOGGING_LEVELS = {
  "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
}

function M.is_supported(version)
  for _, v in ipairs(M.SUPPORTED_PROTOCOL_VERSIONS) do
    if v == version then return true end
  end
  return false
end

return M
