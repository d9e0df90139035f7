-- mcp_server.lua: a tiny helper for writing MCP servers in plain Lua (stdio transport).
--
-- Wire format: newline-delimited JSON-RPC 2.0 on stdin/stdout, one message per line;
-- logs go to stderr only. Runs on Lua 5.1 - 5.4 and LuaJIT with Debian's lua-cjson.
--
--   local mcp = dofile(dir .. "/mcp_server.lua")
--   local server = mcp.new{ name = "demo", version = "1.0.0", instructions = "..." }
--   server:tool{ name = "echo", description = "...", inputSchema = {...},
--                call = function(args, req) return "text" end }
--   server:run()
--
-- JSON writing is done here (not by cjson) so that empty arrays (mcp.array{}), exact
-- number literals (mcp.raw("9007199254740993")) and request ids survive unchanged.

local cjson = require("cjson")

local M = {}
M.null = cjson.null
M.LATEST_PROTOCOL_VERSION = "2025-11-25"
M.SUPPORTED_PROTOCOL_VERSIONS = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" }
M.NO_RESPONSE = setmetatable({}, { __tostring = function() return "mcp.NO_RESPONSE" end })

local unpack = table.unpack or unpack

---------------------------------------------------------------------------------------
-- JSON writing
---------------------------------------------------------------------------------------
local ARRAY_MT, OBJECT_MT, RAW_MT, ERROR_MT = {}, {}, {}, {}

function M.array(t) return setmetatable(t or {}, ARRAY_MT) end   -- always encoded as [...]
function M.object(t) return setmetatable(t or {}, OBJECT_MT) end -- always encoded as {...}
function M.raw(text) return setmetatable({ text = text }, RAW_MT) end -- JSON text, written as is

-- Shortest decimal text that reads back as x; integral values without ".0".
function M.number(x)
  if math.type and math.type(x) == "integer" then return tostring(x) end
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if x == math.floor(x) and x > -2 ^ 63 and x < 2 ^ 63 then return string.format("%.0f", x) end
  for p = 14, 16 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

-- cjson escapes "/" as "\/"; undo that for readability ("\/" only ever stands for "/").
local function json_string(s)
  local e = cjson.encode(s)
  if s:find("/", 1, true) then e = e:gsub("\\/", "/") end
  return e
end

local function is_sequence(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function encode_into(v, out)
  local t = type(v)
  if v == nil or v == cjson.null then
    out[#out + 1] = "null"
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif t == "number" then
    out[#out + 1] = M.number(v)
  elseif t == "string" then
    out[#out + 1] = json_string(v)
  elseif t == "table" then
    local mt = getmetatable(v)
    if mt == RAW_MT then
      out[#out + 1] = v.text
    elseif mt == ARRAY_MT or (mt ~= OBJECT_MT and rawget(v, 1) ~= nil and is_sequence(v)) then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode_into(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = tostring(k) end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = json_string(k)
        out[#out + 1] = ":"
        local val = v[k]
        if val == nil then val = v[tonumber(k)] end
        encode_into(val, out)
      end
      out[#out + 1] = "}"
    end
  else
    error("cannot encode a " .. t .. " as JSON", 2)
  end
end

function M.encode(v)
  local out = {}
  encode_into(v, out)
  return table.concat(out)
end

function M.decode(s) return cjson.decode(s) end

---------------------------------------------------------------------------------------
-- Raw access to the JSON text of a received line (exact ids, tokens, big integers, [] vs {})
---------------------------------------------------------------------------------------
local function skip_ws(s, i) return s:find("[^ \t\r\n]", i) or #s + 1 end

local function skip_string(s, i) -- s[i] == '"'; returns the index after the closing quote
  local j = i + 1
  while true do
    local k = s:find('["\\]', j)
    if not k then return nil end
    if s:byte(k) == 92 then j = k + 2 else return k + 1 end
  end
end

local function skip_value(s, i) -- returns the index after the value starting at i
  local c = s:sub(i, i)
  if c == '"' then return skip_string(s, i) end
  if c == "{" or c == "[" then
    local depth, j = 0, i
    while true do
      local k = s:find('[%[%]{}"]', j)
      if not k then return nil end
      local ch = s:sub(k, k)
      if ch == '"' then
        j = skip_string(s, k)
        if not j then return nil end
      else
        depth = depth + ((ch == "{" or ch == "[") and 1 or -1)
        j = k + 1
        if depth == 0 then return j end
      end
    end
  end
  return s:find("[,%]}%s]", i) or #s + 1
end

-- Span (first, after-last) of member `key` of the object starting at (or after blanks from) i.
local function member_span(s, i, key)
  i = skip_ws(s, i)
  if s:sub(i, i) ~= "{" then return nil end
  i = skip_ws(s, i + 1)
  local found_a, found_b
  while s:sub(i, i) == '"' do
    local e = skip_string(s, i)
    if not e then return nil end
    local k = s:sub(i + 1, e - 2)
    if k:find("\\", 1, true) then
      local ok, dk = pcall(cjson.decode, s:sub(i, e - 1))
      k = ok and dk or k
    end
    i = skip_ws(s, e)
    if s:sub(i, i) ~= ":" then return nil end
    local a = skip_ws(s, i + 1)
    local b = skip_value(s, a)
    if not b then return nil end
    if k == key then found_a, found_b = a, b end -- the last duplicate wins, as in cjson
    i = skip_ws(s, b)
    if s:sub(i, i) ~= "," then break end
    i = skip_ws(s, i + 1)
  end
  return found_a, found_b
end

-- M.raw_get(line, "params", "arguments") -> the exact JSON text of line.params.arguments, or nil
function M.raw_get(s, ...)
  local a, b = 1, #s + 1
  for n = 1, select("#", ...) do
    a, b = member_span(s, a, (select(n, ...)))
    if not a then return nil end
  end
  return s:sub(a, b - 1)
end

---------------------------------------------------------------------------------------
-- Errors and content helpers
---------------------------------------------------------------------------------------
-- A JSON-RPC error; return it as the 2nd value of a handler (or error() it).
function M.rpc_error(code, message, data)
  return setmetatable({ code = code, message = message, data = data }, ERROR_MT)
end

function M.text(s) return { type = "text", text = s } end

-- A tool result with a single text item (isError optional).
function M.text_result(s, is_error)
  return { content = M.array { M.text(s) }, isError = is_error or nil }
end

-- math.floor that gives a Lua 5.4 integer (cjson on 5.4 decodes every number as a float).
function M.int(v)
  v = tonumber(v)
  return v and math.floor(v)
end

function M.log(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  io.stderr:write(table.concat(parts, " "), "\n")
  io.stderr:flush()
end

---------------------------------------------------------------------------------------
-- Request context passed to handlers
---------------------------------------------------------------------------------------
local Request = {}
Request.__index = Request

-- Raw JSON text of a member path of this request's line, e.g. req:raw("params", "arguments").
function Request:raw(...) return M.raw_get(self.line, ...) end

-- Send notifications/progress if the request carried params._meta.progressToken.
function Request:progress(progress, total, message)
  local token = self:raw("params", "_meta", "progressToken")
  if not token then return false end
  self.server:notify("notifications/progress", {
    progressToken = M.raw(token), progress = progress, total = total, message = message,
  })
  return true
end

---------------------------------------------------------------------------------------
-- Server
---------------------------------------------------------------------------------------
local Server = {}
Server.__index = Server

function M.new(opts)
  opts = opts or {}
  local self = setmetatable({
    info = { name = opts.name or "lua-mcp-server", version = opts.version or "0.0.0", title = opts.title },
    instructions = opts.instructions,
    protocol_version = opts.protocol_version, -- force an answer (tests); nil = negotiate
    page_size = opts.page_size,               -- nil = no pagination
    queue_while_waiting = opts.queue_while_waiting,
    numeric_ids = opts.numeric_ids,           -- ids of server-to-client requests: 1,2.. instead of "srv-1"
    float_ids = os.getenv("MCP_TEST_RESPOND_FLOAT_IDS") == "1",
    tools = {}, tool_index = {},
    resources = {}, resource_index = {}, templates = {},
    prompts = {}, prompt_index = {},
    subscriptions = {}, log_level = "info",
    methods = {}, notifications = {},   -- method name -> function(server, params, req)
    queue = {}, responses = {}, next_id = 0,
    -- hooks (fault injection): before_send(server) before each line written,
    -- before_handle(server, req) before each message is dispatched
  }, Server)
  for k, v in pairs(M.default_methods) do self.methods[k] = v end
  io.stdout:setvbuf("full")
  return self
end

-- Registration. Tool: {name, title?, description, inputSchema, outputSchema?, annotations?, call(args, req)}
function Server:tool(def)
  self.tools[#self.tools + 1] = def
  self.tool_index[def.name] = def
  return def
end

-- Resource: {uri, name, title?, description?, mimeType?, text? | blob? | read(uri, req)}
function Server:resource(def)
  self.resources[#self.resources + 1] = def
  self.resource_index[def.uri] = def
  return def
end

-- Template: {uriTemplate, name, description?, mimeType?, pattern (Lua, captures -> read args),
--            read(uri, captures..., req), complete = {arg = fn(value, context) -> list}}
function Server:resource_template(def)
  self.templates[#self.templates + 1] = def
  return def
end

-- Prompt: {name, title?, description, arguments = {{name, description, required}},
--          get(args, req) -> messages | {description, messages}, complete = {arg = fn(value, context)}}
function Server:prompt(def)
  self.prompts[#self.prompts + 1] = def
  self.prompt_index[def.name] = def
  return def
end

-- Output ---------------------------------------------------------------------------------
function Server:write_line(line)
  if self.before_send then self.before_send(self) end
  io.stdout:write(line, "\n")
  io.stdout:flush()
end

function Server:send(msg) self:write_line(M.encode(msg)) end

function Server:notify(method, params)
  self:send({ jsonrpc = "2.0", method = method, params = params })
end

function Server:id_text(req)
  local id = req.raw_id or "null"
  if self.float_ids and id:match("^%-?%d+$") then id = id .. ".0" end
  return id
end

function Server:respond(req, result)
  self:write_line('{"jsonrpc":"2.0","id":' .. self:id_text(req) .. ',"result":' .. M.encode(result) .. "}")
end

function Server:respond_error(req, code, message, data)
  local err = { code = code, message = message, data = data }
  self:write_line('{"jsonrpc":"2.0","id":' .. self:id_text(req) .. ',"error":' .. M.encode(err) .. "}")
end

-- Input ----------------------------------------------------------------------------------
-- Next message from stdin as a request context {line, msg, raw_id, params}, or nil on EOF.
function Server:read_message()
  while true do
    local line = io.stdin:read("*l")
    if not line then return nil end
    line = line:gsub("\r$", "")
    if line:find("%S") then
      local ok, msg = pcall(cjson.decode, line)
      if ok and type(msg) == "table" and rawget(msg, 1) == nil then
        local params = msg.params
        if type(params) ~= "table" then params = {} end
        return setmetatable({ line = line, msg = msg, params = params, server = self,
                              raw_id = M.raw_get(line, "id") }, Request)
      elseif ok then
        local what = type(msg) == "table" and "Batches are not supported" or "Invalid Request"
        self:write_line('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"' .. what .. '"}}')
      else
        M.log("[" .. self.info.name .. "] unparsable input: " .. line:sub(1, 200))
        self:write_line('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
      end
    end
  end
end

local function is_response(msg)
  return msg.method == nil and msg.id ~= nil and (msg.result ~= nil or msg.error ~= nil)
end

-- Server-to-client request: sends it, then reads until the matching response arrives.
-- Client messages arriving meanwhile are handled at once (or queued if queue_while_waiting).
-- Returns the response context: .msg = {jsonrpc, id, result | error}, .line = its raw text.
function Server:request(method, params)
  self.next_id = self.next_id + 1
  local id = self.numeric_ids and self.next_id or ("srv-" .. self.next_id)
  self:send({ jsonrpc = "2.0", id = id, method = method, params = params })
  while self.responses[id] == nil do
    local req = self:read_message()
    if not req then os.exit(0) end -- client went away while we were waiting
    if is_response(req.msg) then
      self.responses[req.msg.id] = req
    elseif self.queue_while_waiting then
      self.queue[#self.queue + 1] = req
    else
      self:handle(req)
    end
  end
  local resp = self.responses[id]
  self.responses[id] = nil
  return resp
end

-- Dispatch -------------------------------------------------------------------------------
function Server:handle(req)
  local msg = req.msg
  if self.before_handle then self.before_handle(self, req) end
  if is_response(msg) then
    M.log("[" .. self.info.name .. "] ignoring unexpected response id " .. tostring(req.raw_id))
    return
  end
  if type(msg.method) ~= "string" then
    if msg.id ~= nil then self:respond_error(req, -32600, "Invalid Request") end
    return
  end
  if msg.id == nil then -- notification
    local h = self.notifications[msg.method]
    if h then
      local ok, err = pcall(h, self, req.params, req)
      if not ok then M.log("[" .. self.info.name .. "] notification handler failed: " .. tostring(err)) end
    end
    return
  end
  local h = self.methods[msg.method]
  if not h then return self:respond_error(req, -32601, "Method not found: " .. msg.method) end
  local ok, result, err = pcall(h, self, req.params, req)
  if not ok then
    if getmetatable(result) == ERROR_MT then
      err = result
    else
      M.log("[" .. self.info.name .. "] " .. msg.method .. " failed: " .. tostring(result))
      err = M.rpc_error(-32603, "Internal error: " .. tostring(result))
    end
  end
  if result == M.NO_RESPONSE then return end
  if err then return self:respond_error(req, err.code, err.message, err.data) end
  self:respond(req, result == nil and {} or result)
end

function Server:run()
  while true do
    local req = table.remove(self.queue, 1) or self:read_message()
    if not req then break end
    self:handle(req)
  end
  io.stdout:flush()
end

-- Pagination with opaque cursors; page_size nil = everything in one page.
local function encode_cursor(offset) return string.format("pg~%x~%x", offset, (offset * 2654435761) % 4096) end
local function decode_cursor(c)
  local o, chk = tostring(c):match("^pg~(%x+)~(%x+)$")
  o = o and tonumber(o, 16)
  if not o or tonumber(chk, 16) ~= (o * 2654435761) % 4096 then return nil end
  return o
end

function Server:paginate(list, params, key, convert)
  local first = 1
  if params.cursor ~= nil and params.cursor ~= cjson.null then
    first = decode_cursor(params.cursor)
    if not first or first > #list + 1 then error(M.rpc_error(-32602, "Invalid cursor")) end
  end
  local last = self.page_size and math.min(#list, first + self.page_size - 1) or #list
  local page = M.array {}
  for i = first, last do page[#page + 1] = convert(list[i]) end
  return { [key] = page, nextCursor = last < #list and encode_cursor(last + 1) or nil }
end

local function pick(def, fields)
  local out = {}
  for _, f in ipairs(fields) do out[f] = def[f] end
  return out
end

local function complete_list(values, prefix)
  local out = M.array {}
  for _, v in ipairs(values or {}) do
    if tostring(v):sub(1, #prefix) == prefix then out[#out + 1] = tostring(v) end
  end
  return out
end

local function negotiate(v)
  for _, s in ipairs(M.SUPPORTED_PROTOCOL_VERSIONS) do
    if v == s then return v end
  end
  return M.LATEST_PROTOCOL_VERSION
end

-- Resolve a uri against static resources and templates: returns def, captures
function Server:find_resource(uri)
  if self.resource_index[uri] then return self.resource_index[uri], {} end
  for _, t in ipairs(self.templates) do
    local caps = t.pattern and { uri:match(t.pattern) }
    if caps and caps[1] ~= nil then return t, caps end
  end
end

M.default_methods = {
  initialize = function(self, params, req)
    self.initialize_params, self.initialize_line = params, req.line
    self.client_capabilities = type(params.capabilities) == "table" and params.capabilities or {}
    self.client_info = params.clientInfo
    return {
      protocolVersion = self.protocol_version or negotiate(params.protocolVersion),
      capabilities = {
        tools = { listChanged = true },
        resources = { subscribe = true, listChanged = true },
        prompts = { listChanged = true },
        completions = M.object {},
        logging = M.object {},
      },
      serverInfo = self.info,
      instructions = self.instructions,
    }
  end,

  ping = function() return M.object {} end,

  ["logging/setLevel"] = function(self, params)
    self.log_level = params.level
    return M.object {}
  end,

  ["tools/list"] = function(self, params)
    return self:paginate(self.tools, params, "tools", function(t)
      return pick(t, { "name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta" })
    end)
  end,

  ["tools/call"] = function(self, params, req)
    local tool = self.tool_index[params.name]
    if not tool then return nil, M.rpc_error(-32602, "Unknown tool: " .. tostring(params.name)) end
    local args = type(params.arguments) == "table" and params.arguments or {}
    local ok, result, err = pcall(tool.call, args, req)
    if not ok then
      if getmetatable(result) == ERROR_MT then return nil, result end
      return M.text_result("Tool " .. tool.name .. " failed: " .. tostring(result), true)
    end
    if type(result) == "string" then result = M.text_result(result) end
    return result, err
  end,

  ["resources/list"] = function(self, params)
    return self:paginate(self.resources, params, "resources", function(r)
      return pick(r, { "uri", "name", "title", "description", "mimeType", "size", "annotations" })
    end)
  end,

  ["resources/templates/list"] = function(self, params)
    return self:paginate(self.templates, params, "resourceTemplates", function(t)
      return pick(t, { "uriTemplate", "name", "title", "description", "mimeType", "annotations" })
    end)
  end,

  ["resources/read"] = function(self, params, req)
    local uri = params.uri
    local def, caps = self:find_resource(tostring(uri))
    local content
    if def and def.read then
      caps[#caps + 1] = req
      content = def.read(uri, unpack(caps))
    elseif def then
      content = { text = def.text, blob = def.blob }
    end
    if not content then return nil, M.rpc_error(-32002, "Resource not found", { uri = uri }) end
    if content.contents then return content end -- a full ReadResourceResult
    content.uri = content.uri or uri
    content.mimeType = content.mimeType or def.mimeType
    return { contents = M.array { content } }
  end,

  ["resources/subscribe"] = function(self, params)
    self.subscriptions[tostring(params.uri)] = true
    return M.object {}
  end,

  ["resources/unsubscribe"] = function(self, params)
    self.subscriptions[tostring(params.uri)] = nil
    return M.object {}
  end,

  ["prompts/list"] = function(self, params)
    return self:paginate(self.prompts, params, "prompts", function(p)
      local out = pick(p, { "name", "title", "description" })
      out.arguments = p.arguments and M.array(p.arguments) or nil
      return out
    end)
  end,

  ["prompts/get"] = function(self, params, req)
    local p = self.prompt_index[params.name]
    if not p then return nil, M.rpc_error(-32602, "Unknown prompt: " .. tostring(params.name)) end
    local args = type(params.arguments) == "table" and params.arguments or {}
    for _, a in ipairs(p.arguments or {}) do
      if a.required and args[a.name] == nil then
        return nil, M.rpc_error(-32602, "Missing required argument: " .. a.name)
      end
    end
    local r = p.get(args, req)
    if r.messages == nil then r = { messages = r } end
    r.description = r.description or p.description
    r.messages = M.array(r.messages)
    return r
  end,

  ["completion/complete"] = function(self, params, req)
    local ref, arg = params.ref or {}, params.argument or {}
    local def
    if ref.type == "ref/prompt" then
      def = self.prompt_index[ref.name]
    elseif ref.type == "ref/resource" then
      for _, t in ipairs(self.templates) do
        if t.uriTemplate == ref.uri then def = t end
      end
      def = def or self.resource_index[ref.uri]
    end
    if not def then return nil, M.rpc_error(-32602, "Unknown reference: " .. tostring(ref.name or ref.uri)) end
    local fn = def.complete and def.complete[arg.name]
    local values = M.array {}
    if fn then
      local ctx = type(params.context) == "table" and params.context or {}
      values = complete_list(fn(tostring(arg.value or ""), ctx, req), tostring(arg.value or ""))
    end
    local total = #values
    while #values > 100 do table.remove(values) end
    return { completion = { values = values, total = total, hasMore = total > #values } }
  end,
}

return M
