--- Server tools -> tools an agent runs (the reference's MCPToolConverter). A tool is a plain table:
---
---   name, title, description          from the definition (title: the tool's, else annotations.title)
---   type                              "dynamic" (automatic mode) or "function" (a schema was given)
---   input_schema                      the server's inputSchema as sent (unknown keywords, $ref,
---                                     x-mcp-header untouched); in automatic mode `properties`
---                                     defaults to {} and `additionalProperties` is false, as the
---                                     reference does. A schema given in the map replaces it.
---   output_schema                     the given one, else the server's outputSchema
---   annotations                       the hints readOnlyHint, destructiveHint, idempotentHint,
---                                     openWorldHint (and title), with untrusted = true: the server
---                                     asserts them, nothing checks them
---   provider_metadata.mcp             {client_name, tool_name, title, annotations, app, meta,
---                                     definition (the server's definition as listed: what
---                                     mcp.tools.pin_store fingerprints)}
---   execute(args, opts)               call the tool: content parts (mcp.convert_content), and the
---                                     CallToolResult as second value, and third what of the
---                                     output a pattern could not check (mcp.schema's unchecked),
---                                     if anything; nil, err on failure.
---                                     opts: the per-call options of client:call_tool, and
---                                     max_result_bytes (parts cut to that budget, see cut_result)
---
--- Exporters for model APIs are mcp.tools.to_openai / to_anthropic / to_gemini / to_codecompanion.
local apps = require("mcp.tools.apps")
local budget = require("mcp.tools.budget")
local content = require("mcp.content")
local errors = require("mcp.errors")
local export = require("mcp.tools.export")
local json = require("mcp.json")
local pins = require("mcp.tools.pins")
local schema = require("mcp.schema")
local search = require("mcp.tools.search")

local M = {}

--- A deep copy of a value (tables copied recursively, cycles and shared tables kept as such,
--- metatables kept).
---@param v any
---@param seen table|nil copies made so far (internal)
---@return any
local function deep_copy(v, seen)
  if type(v) ~= "table" then return v end
  seen = seen or {}
  if seen[v] then return seen[v] end
  local c = {}
  seen[v] = c
  for k, x in pairs(v) do c[k] = deep_copy(x, seen) end
  return setmetatable(c, getmetatable(v))
end
M.deep_copy = deep_copy

local HINTS = { "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint" }

local function annotations_of(def)
  local a = def.annotations
  if type(a) ~= "table" then return nil end
  local out = { untrusted = true }
  for _, h in ipairs(HINTS) do
    if type(a[h]) == "boolean" then out[h] = a[h] end
  end
  if type(a.title) == "string" then out.title = a.title end
  return out
end

local function automatic_schema(s)
  local out = type(s) == "table" and deep_copy(s) or { type = "object" }
  if out.properties == nil or out.properties == json.null then out.properties = json.object() end
  out.additionalProperties = false
  return out
end

-- structuredContent, or the first text part parsed as JSON, validated against output_schema.
local function check_output(tool, result, output_schema, from_map)
  local value = result.structuredContent
  local what = "structuredContent"
  if value == nil then
    if not from_map then return true end -- the server's own schema only judges structuredContent
    for _, part in ipairs(result.content or {}) do
      if type(part) == "table" and part.type == "text" and type(part.text) == "string" then
        local parsed = json.decode(part.text)
        if parsed == nil then
          return nil, errors.new(nil, "Tool \"" .. tool.name .. "\" returned content that does not match the expected outputSchema: not JSON",
            nil, { kind = "validation", method = "tools/call" })
        end
        value, what = parsed, "content"
        break
      end
    end
    if value == nil then
      return nil, errors.new(nil, "Tool \"" .. tool.name .. "\" did not return structuredContent or parseable text content",
        nil, { kind = "validation", method = "tools/call" })
    end
  end
  local ok, err, unchecked = schema.validate(output_schema, value)
  if not ok then
    return nil, errors.new(nil, "Tool \"" .. tool.name .. "\" returned " .. what
      .. " that does not match the expected outputSchema: " .. err.message, err.data,
      { kind = "validation", method = "tools/call", cause = err })
  end
  result.structuredContent = value
  return true, unchecked
end

-- opts without max_result_bytes (the client's per-call options reject keys they do not know).
local function split_budget(opts)
  if opts == nil or opts.max_result_bytes == nil then return opts, nil end
  local max = opts.max_result_bytes
  if type(max) ~= "number" or max < 0 or max ~= math.floor(max) then
    error("mcp tool execute: max_result_bytes must be an integer >= 0", 3)
  end
  local rest = {}
  for k, v in pairs(opts) do
    if k ~= "max_result_bytes" then rest[k] = v end
  end
  return rest, max
end

local function make_execute(client, tool, user_output_schema)
  return function(args, opts)
    if args ~= nil and type(args) ~= "table" then error("mcp tool execute: args must be a table", 2) end
    local max_bytes, unchecked
    opts, max_bytes = split_budget(opts)
    local result, err = client:call_tool(tool.name, args or json.object(), opts)
    if result == nil then
      return nil, errors.new(err.code, "MCP tool " .. tool.name .. " failed: " .. err.message, err.data,
        { kind = err.kind, method = "tools/call", status_code = err.status_code, cause = err })
    end
    if result.isError ~= true then
      local s = user_output_schema or tool.output_schema
      if s ~= nil then
        local ok, verr = check_output(tool, result, s, user_output_schema ~= nil)
        if not ok then return nil, verr end
        unchecked = verr -- (check_output: true, and what a pattern could not check)
      end
    end
    if type(result.content) ~= "table" then return json.array(), result, unchecked end -- the 2024 toolResult shape
    local parts, cerr = content.convert_content(result.content)
    if parts == nil then return nil, cerr end
    if max_bytes then parts = budget.cut(parts, max_bytes) end
    return parts, result, unchecked
  end
end

---@class mcp.ToolConverter
---@field client mcp.Client
local Converter = {}
Converter.__index = Converter

--- A converter bound to a connected client (NewMCPToolConverter).
---@param client mcp.Client
---@return mcp.ToolConverter
function M.new_tool_converter(client)
  if type(client) ~= "table" or type(client.call_tool) ~= "function" then
    error("mcp.new_tool_converter: a client expected", 2)
  end
  return setmetatable({ client = client }, Converter)
end

local function get_field(t, snake, camel)
  if t[snake] ~= nil then return t[snake] end
  return t[camel]
end

--- Convert definitions you already hold (ToolsFromDefinitions): a tools/list result or an array
--- of tools. schemas nil: every tool, automatic schemas. schemas a map name -> {input_schema=,
--- output_schema=} (camelCase accepted): only the tools it names, with those schemas.
---@param definitions table
---@param schemas table|nil
---@return table[]|nil tools, mcp.Error|nil err
function Converter:tools_from_definitions(definitions, schemas)
  if type(definitions) ~= "table" then error("tools_from_definitions: definitions must be a table", 2) end
  if schemas ~= nil and type(schemas) ~= "table" then error("tools_from_definitions: schemas must be a table", 2) end
  local defs = type(definitions.tools) == "table" and definitions.tools or definitions
  local client_name = self.client.config and self.client.config.client_name or nil
  local out = {}
  for _, def in ipairs(defs) do
    if type(def) ~= "table" or type(def.name) ~= "string" then
      return nil, errors.new(nil, "invalid tool definition: no name", def, { kind = "protocol" })
    end
    local given = schemas and schemas[def.name]
    if schemas == nil or given ~= nil then
      if given ~= nil and type(given) ~= "table" then
        error("tools_from_definitions: schemas[" .. def.name .. "] must be a table", 2)
      end
      local app, aerr = apps.get_tool_meta(def)
      if aerr then return nil, aerr end
      if app then
        if app.resourceUri == nil then
          app = nil
        else
          app.mimeType = apps.MIME_TYPE
        end
      end
      local title = def.title
      if title == nil and type(def.annotations) == "table" and type(def.annotations.title) == "string" then
        title = def.annotations.title
      end
      local annotations = annotations_of(def)
      local tool = {
        name = def.name,
        title = type(title) == "string" and title or nil,
        description = type(def.description) == "string" and def.description or nil,
        annotations = annotations,
      }
      local user_out
      if given then
        tool.type = "function"
        local in_s = get_field(given, "input_schema", "inputSchema")
        tool.input_schema = in_s ~= nil and in_s or deep_copy(def.inputSchema)
        user_out = get_field(given, "output_schema", "outputSchema")
        tool.output_schema = user_out or def.outputSchema
      else
        tool.type = "dynamic"
        tool.input_schema = automatic_schema(def.inputSchema)
        tool.output_schema = def.outputSchema
      end
      tool.provider_metadata = { mcp = {
        client_name = client_name, tool_name = def.name, title = tool.title, annotations = annotations,
        app = app, meta = def._meta, definition = def,
      } }
      tool.execute = make_execute(self.client, tool, user_out)
      out[#out + 1] = tool
    end
  end
  return out
end

--- Fetch every tool (all pages of tools/list) and convert them (ConvertToGoAITools).
---@param opts table|nil per-call options for the listing
---@return table[]|nil tools, mcp.Error|nil err
function Converter:convert_to_tools(opts)
  local defs, err = self.client:list_all_tools(opts)
  if defs == nil then return nil, err end
  return self:tools_from_definitions(defs, nil)
end

--- Fetch every tool and convert only those named in schemas (ConvertToGoAIToolsWithSchemas).
---@param schemas table map name -> {input_schema=, output_schema=}
---@param opts table|nil
---@return table[]|nil tools, mcp.Error|nil err
function Converter:convert_to_tools_with_schemas(schemas, opts)
  if type(schemas) ~= "table" then error("convert_to_tools_with_schemas: schemas must be a table", 2) end
  local defs, err = self.client:list_all_tools(opts)
  if defs == nil then return nil, err end
  return self:tools_from_definitions(defs, schemas)
end

--- Fetch and convert every tool of a client (GetMCPToolsForAgent).
---@param client mcp.Client
---@param opts table|nil
---@return table[]|nil tools, mcp.Error|nil err
function M.get_tools_for_agent(client, opts)
  return M.new_tool_converter(client):convert_to_tools(opts)
end

--- A map name -> tool of converted tools.
---@param tools table[]
---@return table<string, table>
function M.by_name(tools)
  local out = {}
  for _, t in ipairs(tools) do out[t.name] = t end
  return out
end

M.cut_result = budget.cut
M.search = search.search
M.search_tool = search.search_tool
M.pin_store = pins.pin_store
M.to_openai = export.to_openai
M.to_anthropic = export.to_anthropic
M.to_gemini = export.to_gemini
M.to_codecompanion = export.to_codecompanion

return M
