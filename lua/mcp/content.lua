--- Tool result content -> content parts a model API or a UI can use (the reference's
--- ConvertMCPContentToAISDK). Binary payloads are decoded to bytes, so a large image never turns
--- into prompt text.
---
--- Parts (every part keeps the item's `annotations` and `_meta` as `annotations` and `meta`):
---   {type="text", text=}
---   {type="image", data=<bytes>, media_type=}   base64 data or a data: URL
---   {type="image", url=, media_type=}           an http(s) URL, kept as a URL (never fetched)
---   {type="audio", data=<bytes>, media_type=}   (data: URLs and http(s) URLs as for images)
---   {type="resource", uri=, media_type=, text=} an embedded text resource
---   {type="resource", uri=, media_type=, data=<bytes>} an embedded blob resource
---   {type="resource_link", uri=, name=, title=, description=, media_type=, size=}
---   {type="text", text=<JSON of the item>, original_type=}  an unknown content type, or an
---                                  image/audio item without data or mimeType (as the reference)
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function fail(i, msg, item)
  return nil, errors.new(nil, "content[" .. i .. "]: " .. msg, item, { kind = "protocol" })
end

local function base(item, t)
  return { type = t, annotations = item.annotations, meta = item._meta }
end

-- An item the model should still see, as the reference passes it on: its JSON as text.
local function as_json_text(item)
  local part = base(item, "text")
  local ok, text = pcall(json.encode, item)
  part.text = ok and text or tostring(item)
  part.original_type = item.type
  return part
end

-- base64 text, a data: URL or an http(s) URL -> fields of a binary part
local function binary(i, item, what)
  local data, mime = item.data, item.mimeType
  if type(data) ~= "string" or data == "" or type(mime) ~= "string" or mime == "" then
    return as_json_text(item)
  end
  local part = base(item, what)
  part.media_type = mime
  local lower = data:sub(1, 8):lower()
  if lower:sub(1, 7) == "http://" or lower == "https://" then
    part.url = data
    return part
  end
  if lower:sub(1, 5) == "data:" then
    local comma = data:find(",", 1, true)
    if not comma then return fail(i, "malformed data: URL in " .. what .. " content", item) end
    data = data:sub(comma + 1)
  end
  local bytes, err = core.base64_decode(data, "std")
  if not bytes then return fail(i, "bad base64 " .. what .. " data (" .. err .. ")", item) end
  part.data = bytes
  return part
end

local CONVERT = {
  text = function(i, item)
    if type(item.text) ~= "string" then return fail(i, "text content has no text", item) end
    local part = base(item, "text")
    part.text = item.text
    return part
  end,
  image = function(i, item) return binary(i, item, "image") end,
  audio = function(i, item) return binary(i, item, "audio") end,
  resource = function(i, item)
    local r = item.resource
    if type(r) ~= "table" or type(r.uri) ~= "string" then
      return fail(i, "resource content has no resource.uri", item)
    end
    local part = base(item, "resource")
    part.uri, part.media_type = r.uri, r.mimeType
    if r._meta ~= nil then part.resource_meta = r._meta end
    if type(r.text) == "string" then
      part.text = r.text
    elseif type(r.blob) == "string" then
      local bytes, err = core.base64_decode(r.blob, "std")
      if not bytes then return fail(i, "bad base64 resource blob (" .. err .. ")", item) end
      part.data = bytes
    else
      return fail(i, "resource content has neither text nor blob", item)
    end
    return part
  end,
  resource_link = function(i, item)
    if type(item.uri) ~= "string" then return fail(i, "resource_link content has no uri", item) end
    local part = base(item, "resource_link")
    part.uri, part.name, part.title, part.description = item.uri, item.name, item.title, item.description
    part.media_type, part.size = item.mimeType, item.size
    return part
  end,
}

--- Convert MCP content (an array of content items, or a CallToolResult) to content parts.
--- An unknown content type, or an image or audio item without data or mimeType, becomes a text
--- part holding the item's JSON (as the reference does), so a tool that already ran never fails
--- here for a type we do not know. Returns the parts, or nil and an mcp.Error (kind "protocol")
--- naming the first bad item: bad base64, or a known type missing a field it needs.
---@param content table
---@return table[]|nil parts, mcp.Error|nil err
function M.convert_content(content)
  if type(content) ~= "table" then error("mcp.convert_content: content must be an array", 2) end
  if content[1] == nil and type(content.content) == "table" then content = content.content end
  local parts = {}
  for i, item in ipairs(content) do
    if type(item) ~= "table" then return fail(i, "not an object", item) end
    local conv = CONVERT[item.type]
    local part, err
    if conv == nil then part = as_json_text(item) else part, err = conv(i, item) end
    if part == nil then return nil, err end
    parts[i] = part
  end
  return parts
end

--- Plain text of content parts (text parts and text resources), joined with newlines; binary
--- parts become a short placeholder such as "[image image/png, 123 bytes]".
---@param parts table[] parts from convert_content
---@return string
function M.to_text(parts)
  local out = {}
  for _, p in ipairs(parts) do
    if p.type == "text" then out[#out + 1] = p.text
    elseif p.type == "resource" and p.text then out[#out + 1] = p.text
    elseif p.type == "resource_link" then out[#out + 1] = "[resource " .. p.uri .. "]"
    elseif p.url then out[#out + 1] = "[" .. p.type .. " " .. p.url .. "]"
    else
      out[#out + 1] = "[" .. p.type .. " " .. tostring(p.media_type) .. ", " .. #(p.data or "") .. " bytes]"
    end
  end
  return table.concat(out, "\n")
end

return M
