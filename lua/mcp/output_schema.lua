--- call_tool's `validate_output = true`: the result's structuredContent is checked against the
--- tool's outputSchema (with mcp.schema, JSON Schema 2020-12) in the raw call, as the converted
--- tools' execute does. The client remembers each tool's outputSchema from every tools/list page
--- it reads (forgotten on notifications/tools/list_changed); a tool it has not seen makes it read
--- the tool list once. A tool without an outputSchema, and a result with isError, are not checked;
--- a tool with one whose (successful) result has no structuredContent fails (the spec: a server
--- MUST return structured results that conform to its outputSchema).
local errors = require("mcp.errors")

local M = {}

--- Remember the outputSchema (or its absence) of the tools of a tools/list page.
---@param client mcp.Client
---@param tools table[]
function M.learn(client, tools)
  local known = client.output_schemas or {}
  client.output_schemas = known
  for _, t in ipairs(tools) do
    if type(t) == "table" and type(t.name) == "string" then
      known[t.name] = type(t.outputSchema) == "table" and t.outputSchema or false
    end
  end
end

--- Forget what was learned (the server's tool list changed).
---@param client mcp.Client
function M.forget(client)
  client.output_schemas = nil
end

local function fail(name, msg, data)
  return nil, errors.new(nil, "Tool \"" .. name .. "\" " .. msg, data, { kind = "validation", method = "tools/call" })
end

--- Check a tools/call result of tool name against its outputSchema: the result, or nil and an
--- mcp.Error (kind "validation"; data.result is the result, data.errors the schema's errors).
---@param client mcp.Client
---@param name string
---@param res table the tools/call result
---@param opts table|nil the call's options (timeout_ms, cancel: for reading the tool list)
---@return table|nil result, mcp.Error|nil err
function M.check(client, name, res, opts)
  if res.isError == true then return res end
  local known = client.output_schemas
  if known == nil or known[name] == nil then
    local _, err = client:list_all_tools(opts and { timeout_ms = opts.timeout_ms, cancel = opts.cancel } or nil)
    if err then return nil, err end
    known = client.output_schemas or {}
  end
  local schema = known[name]
  if schema == nil then return fail(name, "is not in the server's tool list: its outputSchema is unknown", { result = res }) end
  if schema == false then return res end
  if res.structuredContent == nil then
    return fail(name, "has an outputSchema but returned no structuredContent", { result = res })
  end
  local ok, verr = require("mcp.schema").validate(schema, res.structuredContent, { what = "structuredContent" })
  if ok then return res end
  return fail(name, "returned " .. verr.message, { result = res, errors = verr.data.errors, path = verr.data.path })
end

return M
