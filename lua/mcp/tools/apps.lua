--- MCP Apps: tools that attach an interactive HTML resource served from a ui:// URI, with the
--- TypeScript SDK's rules (the `_meta.ui` sanitiser, visibility, JS-exact fingerprints).
local canonical = require("mcp.util.canonical")
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

M.EXTENSION_NAME = "io.modelcontextprotocol/ui"
M.MIME_TYPE = "text/html;profile=mcp-app"
M.LEGACY_RESOURCE_URI_META_KEY = "ui/resourceUri"

local function app_error(msg, data)
  return errors.new(nil, msg, data, { kind = "protocol" })
end

local function is_object(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  if mt and mt.__jsontype then return mt.__jsontype == "object" end
  return v[1] == nil
end

local function is_list(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  if mt and mt.__jsontype then return mt.__jsontype == "array" end
  return next(v) == nil or v[1] ~= nil
end

--- The capabilities a host that renders MCP Apps advertises (merge into client capabilities).
---@return table
function M.client_capabilities()
  return { extensions = { [M.EXTENSION_NAME] = { mimeTypes = json.array({ M.MIME_TYPE }) } } }
end

--- The tool's normalised `_meta.ui`: every ui key, plus `resourceUri` (from `_meta.ui.resourceUri`
--- or the legacy flat key) and `visibility` (only "model" and "app" kept). nil when the tool has
--- neither; nil and an error when the URI is not a string starting with ui://.
---@param tool table a tool definition (or a converted tool: the `meta` its provider_metadata keeps under `mcp` is used)
---@return table|nil meta, mcp.Error|nil err
function M.get_tool_meta(tool)
  if type(tool) ~= "table" then error("mcp.apps.get_tool_meta: tool must be a table", 2) end
  local meta = tool._meta
  if meta == nil and type(tool.provider_metadata) == "table" and type(tool.provider_metadata.mcp) == "table" then
    meta = tool.provider_metadata.mcp.meta
  end
  if not is_object(meta) then meta = nil end
  local ui = meta and meta.ui
  if not is_object(ui) then ui = nil end
  local uri = ui and ui.resourceUri
  if uri == nil and meta then uri = meta[M.LEGACY_RESOURCE_URI_META_KEY] end
  if uri ~= nil then
    if type(uri) ~= "string" or uri:sub(1, 5) ~= "ui://" then
      return nil, app_error("Invalid MCP App resource URI: " .. (pcall(json.encode, uri) and json.encode(uri) or tostring(uri)),
        { tool = tool.name })
    end
  elseif ui == nil then
    return nil
  end
  local out = {}
  for k, v in pairs(ui or {}) do out[k] = v end
  out.resourceUri = uri
  local vis = ui and ui.visibility
  if is_list(vis) then
    local list = json.array()
    for _, v in ipairs(vis) do
      if v == "model" or v == "app" then list[#list + 1] = v end
    end
    out.visibility = list
  else
    out.visibility = nil
  end
  return out
end

--- The tool's ui:// resource URI, or nil (nil, err for an invalid one).
---@param tool table
---@return string|nil uri, mcp.Error|nil err
function M.get_resource_uri(tool)
  local meta, err = M.get_tool_meta(tool)
  if meta == nil then return nil, err end
  return meta.resourceUri
end

--- Whether the tool has an app resource (nil, err for an invalid URI).
---@param tool table
---@return boolean|nil, mcp.Error|nil
function M.is_app_tool(tool)
  local uri, err = M.get_resource_uri(tool)
  if err then return nil, err end
  return uri ~= nil
end

local function tools_of(definitions, fname)
  if type(definitions) ~= "table" then error("mcp.apps." .. fname .. ": a tools/list result or an array of tools expected", 3) end
  if type(definitions.tools) == "table" then return definitions.tools end
  return definitions
end

--- The unique resource URIs of the tools, in first-seen order.
---@param definitions table a tools/list result ({tools=...}) or an array of tools
---@return string[]|nil uris, mcp.Error|nil err
function M.get_resource_uris(definitions)
  local seen, out = {}, json.array()
  for _, tool in ipairs(tools_of(definitions, "get_resource_uris")) do
    local uri, err = M.get_resource_uri(tool)
    if err then return nil, err end
    if uri and not seen[uri] then
      seen[uri] = true
      out[#out + 1] = uri
    end
  end
  return out
end

--- Split tools into the ones the model sees and the ones only the app may call. A tool without
--- visibility metadata is model-visible; "model" and "app" select the lists; a visibility list
--- that is empty after filtering hides the tool from both (as the TypeScript SDK). Other fields of
--- a tools/list result (nextCursor...) are kept in both.
---@param definitions table a tools/list result or an array of tools
---@return table|nil model_visible, table|mcp.Error app_visible_or_err
function M.split_tools(definitions)
  local list = tools_of(definitions, "split_tools")
  local model, app = json.array(), json.array()
  for _, tool in ipairs(list) do
    local meta, err = M.get_tool_meta(tool)
    if err then return nil, err end
    local vis = meta and meta.visibility
    local has = {}
    for _, v in ipairs(vis or {}) do has[v] = true end
    if vis == nil or has.model then model[#model + 1] = tool end
    if has.app then app[#app + 1] = tool end
  end
  if list == definitions then return model, app end
  local m, a = {}, {}
  for k, v in pairs(definitions) do
    m[k], a[k] = v, v
  end
  m.tools, a.tools = model, app
  return m, a
end

local function string_list(v)
  if not is_list(v) then return nil end
  local out = json.array()
  for _, s in ipairs(v) do
    if type(s) == "string" then out[#out + 1] = s end
  end
  return out
end

--- The TypeScript SDK's sanitiser for a resource's `_meta.ui`: `prefersBorder` must be a boolean,
--- `csp` an object whose connectDomains/resourceDomains/frameDomains are string lists (other
--- entries dropped), `permissions` an object; a malformed field is dropped, unknown keys pass.
---@param ui any
---@return table|nil
function M.sanitize_resource_meta(ui)
  if not is_object(ui) then return nil end
  local out = {}
  for k, v in pairs(ui) do out[k] = v end
  if out.prefersBorder ~= nil and type(out.prefersBorder) ~= "boolean" then out.prefersBorder = nil end
  if out.csp ~= nil then
    if is_object(out.csp) then
      local csp = {}
      for k, v in pairs(out.csp) do csp[k] = v end
      for _, key in ipairs({ "connectDomains", "resourceDomains", "frameDomains" }) do
        if csp[key] ~= nil then csp[key] = string_list(csp[key]) end
      end
      out.csp = csp
    else
      out.csp = nil
    end
  end
  if out.permissions ~= nil and not is_object(out.permissions) then out.permissions = nil end
  return out
end

--- Extract an app resource from a resources/read result: {uri, mime_type, html, meta}.
---@param uri string
---@param result table the read result ({contents=...})
---@return table|nil resource, mcp.Error|nil err
function M.resource_from_read_result(uri, result)
  if type(uri) ~= "string" or type(result) ~= "table" then
    error("mcp.apps.resource_from_read_result: (uri, read result) expected", 2)
  end
  local content
  for _, c in ipairs(result.contents or {}) do
    if type(c) == "table" and c.uri == uri then
      content = c
      break
    end
  end
  if content == nil then return nil, app_error("MCP App resource not found in read result: " .. uri) end
  if content.mimeType ~= M.MIME_TYPE then
    return nil, app_error("Unsupported MCP App resource MIME type: " .. tostring(content.mimeType))
  end
  local html
  if type(content.text) == "string" then
    html = content.text
  elseif type(content.blob) == "string" then
    local err
    html, err = core.base64_decode(content.blob, "any")
    if not html then return nil, app_error("MCP App resource blob is not base64 (" .. err .. "): " .. uri) end
  else
    return nil, app_error("Unsupported MCP App resource content format: " .. uri)
  end
  local meta = is_object(content._meta) and content._meta.ui or nil
  return { uri = uri, mime_type = M.MIME_TYPE, html = html, meta = M.sanitize_resource_meta(meta) }
end

--- Read a ui:// resource from the server and extract it.
---@param client mcp.Client
---@param uri string
---@param opts table|nil per-call options
---@return table|nil resource, mcp.Error|nil err
function M.read_resource(client, uri, opts)
  if type(client) ~= "table" or type(uri) ~= "string" then
    error("mcp.apps.read_resource: (client, uri) expected", 2)
  end
  if uri:sub(1, 5) ~= "ui://" then
    return nil, app_error("Unsupported MCP App resource URI: " .. uri)
  end
  local res, err = client:read_resource(uri, opts)
  if res == nil then return nil, err end
  return M.resource_from_read_result(uri, res)
end

--- A stable digest of an app resource: base64url(SHA-256(canonical JSON of {csp, html,
--- permissions})), equal to the TypeScript SDK's for the same resource.
---@param resource table {html=, meta=}
---@return string
function M.fingerprint_resource(resource)
  if type(resource) ~= "table" or type(resource.html) ~= "string" then
    error("mcp.apps.fingerprint_resource: a resource with html expected", 2)
  end
  local meta = type(resource.meta) == "table" and resource.meta or {}
  return canonical.digest({ html = resource.html, csp = meta.csp or core.null, permissions = meta.permissions or core.null })
end

--- True when two resource fingerprints differ.
---@param current string
---@param baseline string
---@return boolean
function M.detect_resource_drift(current, baseline)
  return current ~= baseline
end

return M
