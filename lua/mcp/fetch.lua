--- Plain HTTP requests on the core's loop (libcurl, non-blocking): the OAuth flow's discovery,
--- registration and token requests, and anything else a host wants to fetch without blocking
--- its other clients. A request waits like every lua-mcp call: it suspends the calling task,
--- blocks (running the loop) outside a task, and lets a host loop step meanwhile.
---
--- Redirects are never followed: a 3xx comes back as a response whose `headers.location` the
--- caller may follow itself (mcp.auth does, re-validating each hop).
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")
local sched = require("mcp.sched")

local M = {}

M.DEFAULT_TIMEOUT_MS = 30000
M.DEFAULT_MAX_BODY = 1024 * 1024

local function check(cond, msg)
  if not cond then error("mcp.http_request: " .. msg, 3) end
end

local function form_escape(s)
  return (tostring(s):gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end
M.form_escape = form_escape

--- application/x-www-form-urlencoded text of a table; keys sorted, so the body is stable.
---@param t table<string, string|number|boolean>
---@return string
function M.form_encode(t)
  local keys = {}
  for k, v in pairs(t) do
    if v ~= nil and v ~= false then keys[#keys + 1] = k end
  end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do out[i] = form_escape(k) .. "=" .. form_escape(t[k]) end
  return table.concat(out, "&")
end

local function header_lines(headers)
  local lines, has = {}, {}
  if headers == nil then return lines, has end
  check(type(headers) == "table", "headers must be a table {Name = value}")
  local names = {}
  for name in pairs(headers) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local value = headers[name]
    check(type(name) == "string" and name:match("^[!#$%%&'*+%-.^_`|~%w]+$") ~= nil, "invalid header name " .. tostring(name))
    check(type(value) == "string" or type(value) == "number", "header " .. name .. " must be a string")
    value = tostring(value)
    check(not value:find("[\r\n%z]"), "header " .. name .. " contains a line break or NUL")
    lines[#lines + 1] = name .. ": " .. value
    has[name:lower()] = true
  end
  return lines, has
end

---@class mcp.HttpResponse
---@field status integer
---@field headers table<string, string> lower-cased names; repeated headers joined with ", "
---@field body string
---@field truncated boolean the body was longer than max_body and was cut there
---@field url string the URL requested

--- One HTTP request. opts: method (default "GET", "POST" with a body), url, headers
--- {Name = value}, body (string), or form (table, sent form-urlencoded) or json (table, sent as
--- JSON), timeout_ms (default 30000, the whole exchange), connect_timeout_ms, max_body (default
--- 1 MiB), refuse_addresses ("loopback", or "local": loopback and link-local; the connection is
--- refused when the host name resolves to such an address, on a fresh connection: the SSRF guard
--- at connect time; such a guarded request goes direct, not through the proxy of http_proxy or
--- https_proxy, whose address the guard would check instead of the target's), resolve
--- ({"host:port:address", ...}: pinned answers, as curl's --resolve), proxy (a proxy URL, "" for
--- none; default: the environment's, and for a guarded request $MCP_OAUTH_PROXY or none; a
--- guarded request through a proxy is not checked at connect time: the proxy resolves the
--- target). Returns the response (any
--- status, 3xx included), or nil and an mcp.Error (kind "transport" or "timeout") when there was
--- no response.
---@param opts table
---@return mcp.HttpResponse|nil, mcp.Error|nil
function M.request(opts)
  check(type(opts) == "table", "options table expected")
  check(type(opts.url) == "string" and opts.url:match("^[hH][tT][tT][pP][sS]?://") ~= nil, "url must be an http(s) URL")
  local lines, has = header_lines(opts.headers)
  local body = opts.body
  if opts.form ~= nil then
    check(type(opts.form) == "table", "form must be a table")
    body = M.form_encode(opts.form)
    if not has["content-type"] then lines[#lines + 1] = "Content-Type: application/x-www-form-urlencoded" end
  elseif opts.json ~= nil then
    body = json.encode(opts.json)
    if not has["content-type"] then lines[#lines + 1] = "Content-Type: application/json" end
  end
  check(body == nil or type(body) == "string", "body must be a string")
  local method = opts.method or (body ~= nil and "POST" or "GET")
  local timeout = opts.timeout_ms or M.DEFAULT_TIMEOUT_MS
  check(opts.refuse_addresses == nil or opts.refuse_addresses == "loopback" or opts.refuse_addresses == "local",
    'refuse_addresses must be "loopback" or "local"')
  check(opts.resolve == nil or type(opts.resolve) == "table", 'resolve must be an array of "host:port:address"')
  check(opts.proxy == nil or type(opts.proxy) == "string", "proxy must be a string")
  local proxy = opts.proxy
  if proxy == nil and opts.refuse_addresses ~= nil then
    -- (the host's opt-in for guarded requests: docs/SECURITY.md "Proxies")
    proxy = os.getenv("MCP_OAUTH_PROXY")
    if proxy == "" then proxy = nil end
  end
  local res, msg = sched.await(function(cb)
    core.http_fetch({
      method = method,
      url = opts.url,
      headers = lines,
      body = body,
      timeout_ms = timeout,
      connect_timeout_ms = opts.connect_timeout_ms,
      max_body = opts.max_body or M.DEFAULT_MAX_BODY,
      refuse_addresses = opts.refuse_addresses,
      resolve = opts.resolve,
      proxy = proxy,
    }, cb)
  end)
  if res == nil then
    local kind = tostring(msg):lower():find("timed? ?out") and "timeout" or "transport"
    return nil, errors.new(nil, ("%s %s failed: %s"):format(method, M.redact_url(opts.url), tostring(msg)), nil,
      { kind = kind, url = M.redact_url(opts.url) })
  end
  res.url = opts.url
  return res
end

--- The URL without its query and fragment (they may carry codes or tokens) and without the
--- password of its user information, for messages.
---@param url string
---@return string
function M.redact_url(url)
  return errors.redact_userinfo((tostring(url):gsub("[?#].*$", "")))
end

return M
