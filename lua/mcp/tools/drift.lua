--- Tool definition drift ("rug pull") detection: the reference's FingerprintTools and
--- DetectToolDrift. A digest pins each tool's description, resolved input schema and title; keep
--- the fingerprints taken when a human reviewed the tools and compare later listings with them.
local canonical = require("mcp.util.canonical")
local json = require("mcp.json")
local errors = require("mcp.errors")

local M = {}

-- The schema the reference resolves a tool without one to.
local function empty_schema()
  return { type = "object", properties = json.object(), additionalProperties = false }
end

local function description_tag(d)
  if type(d) == "string" then return { type = "string", value = d } end
  if d == nil then return { type = "none" } end
  return { type = "function" }
end

--- The digest of one tool: base64url(SHA-256(canonical JSON of {description, inputSchema,
--- title})). Accepts a converted tool (input_schema) or a raw definition (inputSchema). A
--- definition canonical JSON cannot hold (a number like 1e400, which decodes to infinity) gives
--- nil and a "validation" mcp.Error: it comes from the server and must not raise.
---@param tool table
---@return string|nil digest, mcp.Error|nil err
function M.fingerprint_tool(tool)
  if type(tool) ~= "table" then error("mcp.fingerprint_tool: tool must be a table", 2) end
  local schema = tool.input_schema
  if schema == nil then schema = tool.inputSchema end
  if schema == nil then schema = empty_schema() end
  local title = tool.title
  if title == nil then title = canonical.UNDEFINED end
  local ok, digest = pcall(canonical.digest,
    { description = description_tag(tool.description), inputSchema = schema, title = title })
  if not ok then
    return nil, errors.new(nil, "cannot fingerprint tool " .. tostring(tool.name) .. ": " .. tostring(digest),
      nil, { kind = "validation" })
  end
  return digest
end

--- Fingerprint tools: an array of tools (converted by mcp.tools or raw tools/list definitions)
--- or a map name -> tool. Returns a map name -> digest.
---@param tools table
---@return table<string, string>|nil fingerprints, mcp.Error|nil err
function M.fingerprint_tools(tools)
  if type(tools) ~= "table" then error("mcp.fingerprint_tools: tools must be a table", 2) end
  if type(tools.tools) == "table" then tools = tools.tools end -- a tools/list result
  local out = json.object() -- {} when empty
  if #tools > 0 then
    for i, t in ipairs(tools) do
      if type(t) ~= "table" or type(t.name) ~= "string" then
        error("mcp.fingerprint_tools: tool " .. i .. " has no name", 2)
      end
      local d, err = M.fingerprint_tool(t)
      if d == nil then return nil, err end
      out[t.name] = d
    end
  else
    for name, t in pairs(tools) do
      if type(name) ~= "string" or type(t) ~= "table" then
        error("mcp.fingerprint_tools: expected an array of tools or a map name -> tool", 2)
      end
      local d, err = M.fingerprint_tool(t)
      if d == nil then return nil, err end
      out[name] = d
    end
  end
  return out
end

local function sorted_keys_where(t, pred)
  local out = json.array() -- [] when empty, as the reference's lists encode
  for k in pairs(t) do
    if pred(k) then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

--- Compare two fingerprint maps: {added = names only in current, removed = names only in
--- baseline, changed = names whose digest differs}, each sorted. Either argument may also be a
--- list of tools, fingerprinted first.
---@param current table<string, string>|table
---@param baseline table<string, string>|table
---@return {added: string[], removed: string[], changed: string[]}|nil drift, mcp.Error|nil err
function M.detect_tool_drift(current, baseline)
  if type(current) ~= "table" or type(baseline) ~= "table" then
    error("mcp.detect_tool_drift: (current, baseline) fingerprint maps expected", 2)
  end
  local err
  if #current > 0 or type(current.tools) == "table" then
    current, err = M.fingerprint_tools(current)
    if current == nil then return nil, err end
  end
  if #baseline > 0 or type(baseline.tools) == "table" then
    baseline, err = M.fingerprint_tools(baseline)
    if baseline == nil then return nil, err end
  end
  return {
    added = sorted_keys_where(current, function(k) return baseline[k] == nil end),
    removed = sorted_keys_where(baseline, function(k) return current[k] == nil end),
    changed = sorted_keys_where(current, function(k) return baseline[k] ~= nil and baseline[k] ~= current[k] end),
  }
end

--- True when the drift report lists anything.
---@param drift table a detect_tool_drift result
---@return boolean
function M.has_drift(drift)
  return #drift.added + #drift.removed + #drift.changed > 0
end

return M
