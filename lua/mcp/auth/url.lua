--- URL helpers of the OAuth flow: a small RFC 3986 parser for http(s) URLs, origins, query
--- strings, relative references, and the address checks of the SSRF guard. Comparisons the
--- specification wants exact (issuer, iss, resource) are done on the strings, never on parsed
--- and re-serialised URLs.
local term = require("mcp.util.term")

local M = {}

local function unescape(s)
  return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end
M.unescape = unescape

---@class mcp.auth.Url
---@field scheme string lower-cased
---@field host string lower-cased, IPv6 without brackets
---@field port integer|nil explicit port
---@field path string "" when absent
---@field query string|nil without "?"
---@field fragment string|nil
---@field userinfo string|nil

--- Parse an absolute http(s) URL; nil and a reason for anything else.
---@param s string
---@return mcp.auth.Url|nil, string|nil
function M.parse(s)
  if type(s) ~= "string" then return nil, "not a string" end
  if s:find("[%s%z]") then return nil, "contains white space" end
  -- Control characters (C0, DEL, C1) have no place in a URL and could drive a terminal it is shown on.
  if s:find("[\1-\31\127]") or s:find("\194[\128-\159]") then return nil, "contains control characters" end
  -- A raw byte 0x80..0x9F is a C1 control (CSI, OSC) to a terminal that is not UTF-8; a URL
  -- percent-encodes what is not text, so any byte that is not UTF-8 is refused, and so is a
  -- bidirectional control (it makes a URL read otherwise than it goes).
  if s:find("[\128-\255]") and term.escape(s) ~= s then
    return nil, "contains bytes that are not UTF-8 or bidirectional controls"
  end
  local scheme, rest = s:match("^(%a[%w+.%-]*):(.*)$")
  if not scheme then return nil, "no scheme" end
  scheme = scheme:lower()
  if scheme ~= "http" and scheme ~= "https" then return nil, "not an http(s) URL" end
  if rest:sub(1, 2) ~= "//" then return nil, "no authority" end
  rest = rest:sub(3)
  local fragment
  local hpos = rest:find("#", 1, true)
  if hpos then fragment, rest = rest:sub(hpos + 1), rest:sub(1, hpos - 1) end
  local query
  local qpos = rest:find("?", 1, true)
  if qpos then query, rest = rest:sub(qpos + 1), rest:sub(1, qpos - 1) end
  local authority, path = rest:match("^([^/]*)(.*)$")
  local userinfo
  local at = authority:find("@[^@]*$")
  if at then userinfo, authority = authority:sub(1, at - 1), authority:sub(at + 1) end
  local host, port
  if authority:sub(1, 1) == "[" then
    host, port = authority:match("^%[([%x:.]+)%](.*)$")
    if not host then return nil, "bad IPv6 host" end
  else
    host, port = authority:match("^([^:]*)(.*)$")
  end
  if port ~= "" then
    port = port:match("^:(%d*)$")
    if not port then return nil, "bad port" end
    port = port ~= "" and tonumber(port) or nil
    if port and port > 65535 then return nil, "bad port" end
  else
    port = nil
  end
  if host == "" then return nil, "no host" end
  return {
    scheme = scheme, host = host:lower(), port = port, path = path, query = query,
    fragment = fragment, userinfo = userinfo,
  }
end

local DEFAULT_PORT = { http = 80, https = 443 }

--- "scheme://host[:port]" with the default port left out.
---@param u mcp.auth.Url|string
---@return string|nil
function M.origin(u)
  if type(u) == "string" then u = M.parse(u) end
  if not u then return nil end
  local host = u.host:find(":", 1, true) and ("[" .. u.host .. "]") or u.host
  local port = u.port and u.port ~= DEFAULT_PORT[u.scheme] and (":" .. u.port) or ""
  return u.scheme .. "://" .. host .. port
end

---@param a string
---@param b string
---@return boolean
function M.same_origin(a, b)
  local oa, ob = M.origin(a), M.origin(b)
  return oa ~= nil and oa == ob
end

--- The URL without its fragment (the default resource, RFC 8707).
function M.strip_fragment(s)
  return (s:gsub("#.*$", ""))
end

--- Decode a query string into a table (the first value of a repeated name wins).
---@param q string|nil
---@return table<string, string>
function M.parse_query(q)
  local out = {}
  for pair in (q or ""):gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=?(.*)$")
    k = unescape(k)
    if out[k] == nil then out[k] = unescape(v) end
  end
  return out
end

--- Resolve a reference (a Location header) against a base URL. Enough for redirects:
--- absolute URLs, network-path, absolute-path and query-only references.
---@param base string
---@param ref string
---@return string|nil
function M.resolve(base, ref)
  if ref:match("^%a[%w+.%-]*:") then return ref end
  local b = M.parse(base)
  if not b then return nil end
  if ref:sub(1, 2) == "//" then return b.scheme .. ":" .. ref end
  local origin = M.origin(b)
  if ref:sub(1, 1) == "/" then return origin .. ref end
  if ref:sub(1, 1) == "?" then return origin .. b.path .. ref end
  local dir = b.path:match("^(.*/)") or "/"
  return origin .. dir .. ref
end

-- ---- the SSRF guard ------------------------------------------------------------------------

local function ipv4(host)
  local a, b, c, d = host:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  if not a then return nil end
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if a > 255 or b > 255 or c > 255 or d > 255 then return nil end
  return a, b, c, d
end

--- Is host a loopback name or address (localhost, 127/8, ::1)?
---@param host string
---@return boolean
function M.is_loopback(host)
  host = host:lower()
  if host == "localhost" or host:match("%.localhost$") or host == "::1" then return true end
  local a = ipv4(host)
  if a == 127 then return true end
  local mapped = host:match("^::ffff:(%d+%.%d+%.%d+%.%d+)$")
  return mapped ~= nil and M.is_loopback(mapped)
end

--- Is host an address a remote server must not send us to: loopback, private (10/8,
--- 172.16/12, 192.168/16, 100.64/10), link-local (169.254/16, fe80::/10), unique-local
--- (fc00::/7), unspecified or multicast? Names other than localhost are not resolved here.
---@param host string
---@return boolean
function M.is_internal(host)
  host = host:lower()
  if M.is_loopback(host) then return true end
  local a, b = ipv4(host)
  if a then
    return a == 0 or a == 10 or (a == 172 and b >= 16 and b <= 31) or (a == 192 and b == 168)
      or (a == 169 and b == 254) or (a == 100 and b >= 64 and b <= 127) or a >= 224
  end
  if host:find(":", 1, true) then
    local mapped = host:match("^::ffff:(%d+%.%d+%.%d+%.%d+)$")
    if mapped then return M.is_internal(mapped) end
    local first = tonumber(host:match("^(%x+):") or "0", 16) or 0
    return host == "::" or (first >= 0xfc00 and first <= 0xfdff) or (first >= 0xfe80 and first <= 0xfebf)
      or first >= 0xff00
  end
  return false
end

--- May the client fetch `target` (a metadata, registration or token URL the server or its
--- metadata named) when it talks to the MCP server at `server`? https is required, http only on
--- loopback; a loopback or internal address only when the MCP server itself is on one.
---@param target string
---@param server string
---@return boolean ok, string|nil reason
function M.check_fetchable(target, server)
  local t, why = M.parse(target)
  if not t then return false, "invalid URL (" .. tostring(why) .. ")" end
  if t.userinfo then return false, "URL with credentials" end
  local s = M.parse(server)
  if t.scheme ~= "https" and not M.is_loopback(t.host) then
    return false, "not https (http is allowed for loopback only)"
  end
  if M.is_loopback(t.host) and not (s and M.is_loopback(s.host)) then
    return false, "loopback address " .. t.host .. " named by a server that is not on loopback"
  end
  if M.is_internal(t.host) and not (s and M.is_internal(s.host)) then
    return false, "internal address " .. t.host .. " named by a server that is not on one"
  end
  return true
end

--- The connect-time half of the guard (fetch's refuse_addresses) for requests made on behalf of
--- the MCP server at `server`: whatever a host name resolves to, nothing is refused for a server
--- on loopback, loopback addresses for one on another internal address, and loopback and
--- link-local ones (the host's own services, a cloud metadata endpoint) for any other. Private
--- addresses a name resolves to are allowed: an intranet's authorization server has one.
---@param server string
---@return string|nil guard "loopback", "local" or nil
function M.connect_guard(server)
  local s = M.parse(server)
  if s and M.is_loopback(s.host) then return nil end
  if s and M.is_internal(s.host) then return "loopback" end
  return "local"
end

return M
