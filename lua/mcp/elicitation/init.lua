--- Elicitation ergonomics: answers (accept/decline/cancel), SEP-1034 defaults, validation of an
--- accepted answer against the requested schema (SEP-1330 enum forms included), the field list a
--- UI asks for, and the ready handlers for a terminal and for Neovim.
---
---   client:on_elicitation_request(function(req)
---     -- req: message, requested_schema, meta, mode ("form"|"url"), url, elicitation_id, params,
---     --      server (the asking server's title or name: show it)
---     return mcp.elicitation.accept({ name = "Ada" })   -- or decline() / cancel()
---   end)
---
--- The client calls M.handle for every elicitation/create request: an answer that is not a valid
--- result, an accepted form that does not match the schema (after defaults), or a handler that
--- raises is reported through on_error and answered with a JSON-RPC error.
local errors = require("mcp.errors")
local json = require("mcp.json")
local schema = require("mcp.schema")

local M = {}

local INTERNAL = errors.ERROR_CODES.INTERNAL_ERROR

--- An accepting answer with the user's content (a table of field -> value).
---@param content table|nil
---@param meta table|nil sent as _meta
---@return table
function M.accept(content, meta)
  if content ~= nil and type(content) ~= "table" then error("mcp.elicitation.accept: content must be a table", 2) end
  return { action = "accept", content = content or json.object(), _meta = meta }
end

--- The user said no.
---@param meta table|nil
---@return table
function M.decline(meta)
  return { action = "decline", _meta = meta }
end

--- The user dismissed the request without answering.
---@param meta table|nil
---@return table
function M.cancel(meta)
  return { action = "cancel", _meta = meta }
end

local function copy_value(v)
  if type(v) ~= "table" then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = copy_value(x) end
  return setmetatable(c, getmetatable(v))
end

--- Content with the schema's defaults filled in for omitted fields (SEP-1034); nested object
--- properties too. The input table is not modified.
---@param requested_schema table|nil
---@param content table|nil
---@return table
function M.apply_defaults(requested_schema, content)
  local out = {}
  for k, v in pairs(content or {}) do out[k] = v end
  local props = type(requested_schema) == "table" and requested_schema.properties
  if type(props) == "table" then
    for name, ps in pairs(props) do
      if type(ps) == "table" then
        if out[name] == nil and ps.default ~= nil then
          out[name] = copy_value(ps.default)
        elseif type(out[name]) == "table" and type(ps.properties) == "table" then
          out[name] = M.apply_defaults(ps, out[name])
        end
      end
    end
  end
  return json.object(out)
end

--- Validate accepted content against the requested schema. true, or nil and an mcp.Error (kind
--- "validation") naming the failing field.
---@param requested_schema table
---@param content table
---@return boolean|nil ok, mcp.Error|nil err
function M.validate(requested_schema, content)
  return schema.validate(requested_schema, content, { what = "the elicitation answer" })
end

-- ---- the fields a UI asks for ----------------------------------------------------------------

local function choices_of(s)
  if type(s) ~= "table" then return nil end
  if type(s.enum) == "table" then
    local out = {}
    local names = type(s.enumNames) == "table" and s.enumNames or {} -- legacy titled enum
    for i, v in ipairs(s.enum) do
      out[i] = { value = v, label = type(names[i]) == "string" and names[i] or tostring(v) }
    end
    return out
  end
  local list = s.oneOf or s.anyOf
  if type(list) == "table" and list[1] ~= nil then
    local out = {}
    for i, o in ipairs(list) do
      if type(o) ~= "table" or o.const == nil then return nil end
      out[i] = { value = o.const, label = type(o.title) == "string" and o.title or tostring(o.const) }
    end
    return out
  end
  return nil
end

--- The fields of a flat elicitation schema, in the server's property order: the JSON decoder
--- keeps the key order of every `properties` object it reads (its metatable's `__keyorder`).
--- For a schema built in Lua (no recorded order): required ones first (in `required` order), then
--- the rest by name. Each: name, title, description, type, required, default, format, minimum,
--- maximum, min_length, max_length, min_items, max_items, pattern, choices ({value=, label=} list,
--- from enum/enumNames/oneOf/anyOf), multiple (an array of choices), schema (the property's own
--- schema, which parse_answer checks each answer against).
---@param requested_schema table|nil
---@return table[]
function M.fields(requested_schema)
  local props = type(requested_schema) == "table" and requested_schema.properties
  if type(props) ~= "table" then return {} end
  local req, order, seen = {}, {}, {}
  if type(requested_schema.required) == "table" then
    for _, n in ipairs(requested_schema.required) do
      if type(n) == "string" and props[n] ~= nil then req[n] = true end
    end
  end
  local mt = getmetatable(props)
  local keyorder = type(mt) == "table" and rawget(mt, "__keyorder") or nil
  if type(keyorder) == "table" then
    for _, n in ipairs(keyorder) do
      if type(n) == "string" and props[n] ~= nil and not seen[n] then
        seen[n] = true
        order[#order + 1] = n
      end
    end
  elseif type(requested_schema.required) == "table" then
    for _, n in ipairs(requested_schema.required) do
      if req[n] and not seen[n] then
        seen[n] = true
        order[#order + 1] = n
      end
    end
  end
  local rest = {}
  for n in pairs(props) do
    if type(n) == "string" and not seen[n] then rest[#rest + 1] = n end
  end
  table.sort(rest)
  for _, n in ipairs(rest) do order[#order + 1] = n end
  local out = {}
  for _, n in ipairs(order) do
    local s = props[n]
    if type(s) ~= "table" then s = {} end
    local f = {
      name = n, title = s.title, description = s.description, type = s.type, required = req[n] == true,
      default = s.default, format = s.format, minimum = s.minimum, maximum = s.maximum,
      min_length = s.minLength, max_length = s.maxLength, min_items = s.minItems, max_items = s.maxItems,
      pattern = s.pattern, schema = s,
    }
    if s.type == "array" then
      f.choices = choices_of(s.items)
      f.multiple = true
    else
      f.choices = choices_of(s)
    end
    out[#out + 1] = f
  end
  return out
end

local TRUE_WORDS = { y = true, yes = true, ["true"] = true, ["1"] = true, on = true }
local FALSE_WORDS = { n = false, no = false, ["false"] = false, ["0"] = false, off = false }

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function pick(choices, word)
  local n = tonumber(word)
  if n and choices[n] then return choices[n].value end
  for _, c in ipairs(choices) do
    if tostring(c.value) == word then return c.value end
  end
  for _, c in ipairs(choices) do
    if c.label:lower() == word:lower() then return c.value end
  end
  return nil
end

--- Check one field's value against the field's own schema (format, minimum/maximum,
--- minLength/maxLength, pattern, enum, minItems/maxItems, ...). true, or nil and a message to show.
---@param field table one of M.fields()
---@param value any
---@return boolean|nil ok, string|nil err
function M.check_answer(field, value)
  local s = field.schema
  if type(s) ~= "table" then return true end
  local list = schema.errors(s, value, { max_errors = 1 })
  if #list == 0 then return true end
  local e = list[1]
  return nil, e.path == "" and e.message or schema.describe(e)
end

local parse

--- Turn what a user typed for a field into a value: numbers, booleans (y/yes/true/1 or
--- n/no/false/0), a choice by its number, value or label, several choices separated by commas;
--- then check it against the field's schema (check_answer), so a UI can ask that field again at
--- once. Returns the value, or nil and a message to show.
---@param field table one of M.fields()
---@param text string
---@return any value, string|nil err
function M.parse_answer(field, text)
  local v, err = parse(field, text)
  if v == nil then return nil, err end
  local ok, cerr = M.check_answer(field, v)
  if not ok then return nil, cerr end
  return v
end

parse = function(field, text)
  text = trim(text)
  if field.choices then
    if field.multiple then
      local out = json.array()
      for word in text:gmatch("[^,]+") do
        local v = pick(field.choices, trim(word))
        if v == nil then return nil, "not one of the choices: " .. trim(word) end
        out[#out + 1] = v
      end
      return out
    end
    local v = pick(field.choices, text)
    if v == nil then return nil, "not one of the choices: " .. text end
    return v
  end
  local t = field.type
  if t == "boolean" then
    local w = text:lower()
    if TRUE_WORDS[w] then return true end
    if FALSE_WORDS[w] ~= nil then return false end
    return nil, "answer yes or no"
  elseif t == "integer" or t == "number" then
    local n = tonumber(text)
    if n == nil then return nil, "not a number" end
    if t == "integer" then
      if n ~= math.floor(n) then return nil, "not a whole number" end
      if math.tointeger then n = math.tointeger(n) or n end
    end
    return n
  elseif t == "array" then
    local out = json.array()
    for word in text:gmatch("[^,]+") do out[#out + 1] = trim(word) end
    return out
  end
  return text
end

-- ---- the request and its answer --------------------------------------------------------------

-- The schemes a browser parses as "special" (WHATWG URL): a backslash is a slash there, and any
-- number of slashes may follow the colon ("https:\\evil.example" is https://evil.example/).
local SPECIAL_SCHEMES = { http = true, https = true, ws = true, wss = true, ftp = true }

--- The host of a URL as a browser would open it (what a UI shows next to the URL: the user decides
--- whom to trust by it), and whether it is an internationalized name (a punycode label "xn--", or
--- non-ASCII characters), which a UI should warn about: it may look like another host. The URL is
--- read as a browser reads it: tabs and newlines dropped, a backslash a slash in http(s), userinfo
--- up to the last "@" left out, the host percent-decoded. nil for a URL without a host.
---@param url string
---@return string|nil host, boolean punycode
function M.url_host(url)
  if type(url) ~= "string" then return nil, false end
  local u = url:gsub("[\t\n\r]", ""):gsub("^[%c ]+", ""):gsub("[%c ]+$", "")
  local scheme, rest = u:match("^(%a[%w+.-]*):(.*)$")
  if scheme == nil then return nil, false end
  local authority
  if SPECIAL_SCHEMES[scheme:lower()] then
    authority = rest:gsub("\\", "/"):match("^/*([^/?#]*)")
  else
    authority = rest:match("^//([^/?#]*)")
  end
  if authority == nil then return nil, false end
  authority = authority:gsub("^.*@", "") -- userinfo is not the host
  local host = authority:match("^%[[^%]]*%]") or authority:gsub(":%d*$", "")
  host = host:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end):lower()
  if host == "" then return nil, false end
  local intl = host:find("^xn%-%-") ~= nil or host:find("%.xn%-%-") ~= nil or host:find("[\128-\255]") ~= nil
  return host, intl
end

--- The request table a handler receives, built from elicitation/create params.
---@param params table
---@return table
function M.request_from_params(params)
  local host, puny = M.url_host(params.url)
  return {
    message = params.message,
    requested_schema = params.requestedSchema,
    meta = params._meta,
    mode = params.mode or "form",
    url = params.url,
    url_host = host,
    url_punycode = puny,
    elicitation_id = params.elicitationId,
    params = params,
  }
end

local function bad(msg, data, kind)
  return nil, errors.new(INTERNAL, msg, data, { kind = kind or "handler", method = "elicitation/create" })
end

--- Check a handler's answer and shape the JSON-RPC result.
---@param req table the request (request_from_params)
---@param result any what the handler returned
---@return table|nil result, mcp.Error|nil err
function M.finish(req, result)
  if type(result) ~= "table" then
    return bad("the elicitation handler returned a " .. type(result) .. ", not a result table")
  end
  local action = result.action
  if action ~= "accept" and action ~= "decline" and action ~= "cancel" then
    return bad("the elicitation handler returned an invalid result (action must be accept, decline or cancel)")
  end
  local out = { action = action }
  local meta = result._meta or result.meta
  if meta ~= nil then out._meta = meta end
  if action == "accept" and req.mode ~= "url" then
    local content = result.content
    if content == nil then content = {} end
    if type(content) ~= "table" or (content[1] ~= nil) or json.is_array(content) then
      return bad("the elicitation answer's content must be an object of field values", result)
    end
    local s = req.requested_schema
    if type(s) == "table" then
      content = M.apply_defaults(s, content)
      local ok, err = M.validate(s, content)
      if not ok then
        return bad(err.message, err.data, "validation")
      end
    end
    out.content = json.object(content)
  end
  return out
end

-- The asking server's title or name (serverInfo), for a handler to show: the user must see who asks.
local function server_name(client)
  local info = client:server_info()
  if type(info) ~= "table" then return nil end
  local name = type(info.title) == "string" and info.title ~= "" and info.title or info.name
  return type(name) == "string" and name ~= "" and name or nil
end

--- The client's elicitation/create handler: check the params, run the registered handler, check
--- its answer (defaults applied, then validated), and return the result or nil, err.
---@param client mcp.Client
---@param params table
---@return table|nil result, mcp.Error|nil err
function M.handle(client, params)
  if type(params.message) ~= "string" then
    return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid elicitation request: message must be a string",
      params, { kind = "protocol", method = "elicitation/create" })
  end
  local req = M.request_from_params(params)
  req.server = server_name(client)
  if req.mode ~= "form" and req.mode ~= "url" then
    return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid elicitation request: unknown mode " .. tostring(req.mode),
      params, { kind = "protocol", method = "elicitation/create" })
  end
  if req.mode == "url" and type(req.url) ~= "string" then
    return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid elicitation request: url mode without a url",
      params, { kind = "protocol", method = "elicitation/create" })
  end
  local handler, url = client:_handler("elicitation")
  if req.mode == "url" and not url then
    -- 2025-11-25: a mode the client did not declare (elicitation.url) is refused with -32602
    return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid elicitation request: this client did not "
      .. "declare URL-mode elicitation", params, { kind = "protocol", method = "elicitation/create" })
  end
  local result, err = handler(req)
  if result == nil then return nil, err end
  return M.finish(req, result)
end

--- Open a URL (http or https only) with the system's opener (xdg-open, or open on macOS), the
--- URL single-quoted for the shell. For the terminal handler's open_url. true when the opener
--- started; false when there is none (the handler then tells the user to open the URL).
---@param url string
---@return boolean
function M.open_url(url)
  if type(url) ~= "string" or not url:match("^https?://") then return false end
  local function succeeded(r) return r == true or r == 0 end
  local cmd
  if succeeded(os.execute("command -v xdg-open >/dev/null 2>&1")) then
    cmd = "xdg-open"
  elseif succeeded(os.execute("[ \"$(uname -s 2>/dev/null)\" = Darwin ]")) then
    cmd = "open" -- (macOS's; on Linux `open` may be openvt)
  else
    return false
  end
  local quoted = "'" .. url:gsub("'", "'\\''") .. "'"
  return succeeded(os.execute(cmd .. " " .. quoted .. " >/dev/null 2>&1 &"))
end

--- A handler that asks on the terminal (see mcp/elicitation/tty.lua for opts).
---@param opts table|nil input, output, max_rounds, open_url
---@return fun(req: table): table
function M.terminal_handler(opts)
  return require("mcp.elicitation.tty").handler(opts)
end

--- A handler that asks with vim.ui.input / vim.ui.select (see mcp/elicitation/nvim.lua).
---@param opts table|nil
---@return fun(req: table): table|nil
function M.nvim_handler(opts)
  return require("mcp.elicitation.nvim").handler(opts)
end

return M
