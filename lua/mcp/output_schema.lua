--- call_tool's `validate_output = true`: the result's structuredContent is checked against the
--- tool's outputSchema (with mcp.schema, JSON Schema 2020-12) in the raw call, as the converted
--- tools' execute does. The client keeps the tools/list pages it reads (forgotten on
--- notifications/tools/list_changed) and indexes their outputSchemas only when a result is checked,
--- so a client that never validates pays nothing per tool; a tool it has not seen makes it read the
--- tool list once. A tool without an outputSchema, and a result with isError, are not checked;
--- a tool with one whose (successful) result has no structuredContent fails (the spec: a server
--- MUST return structured results that conform to its outputSchema).
local errors = require("mcp.errors")

local M = {}

--- A client's kept tools/list pages and their index (built when first checked). The client holds
--- it (Client:_tool_schemas() makes it when first used).
---@return table
function M.new()
  return { pages = nil, index = nil }
end

--- Keep a tools/list page for validate_output. Only the page is kept (no work per tool: a client
--- that never validates pays one table slot per page); the index by name is built when a result is
--- first checked. first: the listing's first page (the pages of an older listing are dropped).
---@param state table the client's (M.new)
---@param tools table[]
---@param first boolean
function M.learn(state, tools, first)
  local pages = (not first and state.pages) or {}
  pages[#pages + 1] = tools
  state.pages, state.index = pages, nil
end

--- Forget what was learned (the server's tool list changed).
---@param state table the client's (M.new)
function M.forget(state)
  state.pages, state.index = nil, nil
end

-- Tool name -> outputSchema (false: none), built from the kept pages once per listing.
local function index(client)
  local state = client:_tool_schemas()
  local known = state.index
  if known then return known end
  known = {}
  for _, tools in ipairs(state.pages or {}) do
    for _, t in ipairs(tools) do
      if type(t) == "table" and type(t.name) == "string" then
        known[t.name] = type(t.outputSchema) == "table" and t.outputSchema or false
      end
    end
  end
  state.index = known
  return known
end

local function fail(name, msg, data)
  return nil, errors.new(nil, "Tool \"" .. name .. "\" " .. msg, data, { kind = "validation", method = "tools/call" })
end

--- Check a tools/call result of tool name against its outputSchema: the result, or nil and an
--- mcp.Error (kind "validation"; data.result is the result, data.errors the schema's errors). A
--- valid result has a third value when part of it could not be checked (mcp.schema's unchecked:
--- a pattern neither engine runs).
---@param client mcp.Client
---@param name string
---@param res table the tools/call result
---@param opts table|nil the call's options (timeout_ms, cancel: for reading the tool list)
---@return table|nil result, mcp.Error|nil err, table[]|nil unchecked
function M.check(client, name, res, opts)
  if res.isError == true then return res end
  local known = index(client)
  if known[name] == nil then
    local _, err = client:list_all_tools(opts and { timeout_ms = opts.timeout_ms, cancel = opts.cancel } or nil)
    if err then return nil, err end
    known = index(client)
  end
  local schema = known[name]
  if schema == nil then return fail(name, "is not in the server's tool list: its outputSchema is unknown", { result = res }) end
  if schema == false then return res end
  if res.structuredContent == nil then
    return fail(name, "has an outputSchema but returned no structuredContent", { result = res })
  end
  local ok, verr, unchecked = require("mcp.schema").validate(schema, res.structuredContent, { what = "structuredContent" })
  if ok then return res, nil, unchecked end -- (a pattern no engine here runs: said, never passed silently)
  return fail(name, "returned " .. verr.message, { result = res, errors = verr.data.errors, path = verr.data.path })
end

return M
