--- Trace context (SEP-414) and spans: a host that traces its MCP traffic gives the client config
--- `trace_context` (a table {traceparent=, tracestate=}, or a function(span) returning one) and/or
--- the OpenTelemetry-shaped hooks `on_span_start(span)` and `on_span_end(span)`. Every request
--- then carries `traceparent` / `tracestate` in its params' `_meta` (W3C Trace Context, exempt
--- from the `_meta` prefix rule) and is one span:
---
---   span = { name = "tools/call my_tool", method = "tools/call", server = "server name" | nil,
---            tool = "my_tool" | nil, start_ms = <monotonic ms>,
---            -- on_span_end adds:
---            status = "ok" | "error" (an mcp.Error, or a tool result with isError),
---            error = mcp.Error | nil, duration_ms = number }
---
--- on_span_start may return a trace context for this request (the child span the host's tracer
--- opened: {traceparent=, tracestate=}); otherwise `trace_context` is asked. The span table is the
--- same for both hooks, so a host may keep its own span object in it. The hooks run synchronously
--- and must not yield; an error in one goes to on_error and does not fail the request. Clients
--- without these settings pay nothing (Client:request does not load this module).
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function report(client, what, e)
  client:_report(errors.new(nil, what .. " raised: " .. tostring(e), nil, { kind = "handler" }))
end

local function hook(client, name, span)
  local fn = client:_hook(name)
  if fn == nil then return nil end
  local ok, res = pcall(fn, span)
  if not ok then
    report(client, name, res)
    return nil
  end
  return res
end

--- The trace context of a request: what on_span_start returned, else the config's trace_context
--- (a table, or a function of the span). nil when there is none.
---@param client mcp.Client
---@param span table
---@param from_hook any
---@return table|nil
function M.context(client, span, from_hook)
  if type(from_hook) == "table" and from_hook.traceparent ~= nil then return from_hook end
  local tc = client:_hook("trace_context")
  if type(tc) == "function" then
    local ok, res = pcall(tc, span)
    if not ok then
      report(client, "trace_context", res)
      return nil
    end
    tc = res
  end
  if type(tc) == "table" and type(tc.traceparent) == "string" then return tc end
  return nil
end

--- params with the trace context in `_meta` (traceparent, and tracestate when given); the caller's
--- params are not modified.
---@param params table|nil
---@param ctx table {traceparent=, tracestate=}
---@return table
function M.with_context(params, ctx)
  local p = {}
  for k, v in pairs(params or {}) do p[k] = v end
  local meta = json.object()
  if type(p._meta) == "table" then
    for k, v in pairs(p._meta) do meta[k] = v end
  end
  meta.traceparent = ctx.traceparent
  if type(ctx.tracestate) == "string" and ctx.tracestate ~= "" then meta.tracestate = ctx.tracestate end
  p._meta = meta
  return p
end

--- A new span for a request of method.
---@param client mcp.Client
---@param method string
---@param params table|nil
---@return table span
function M.start(client, method, params)
  local info = client:server_info()
  local tool = method == "tools/call" and type(params) == "table" and type(params.name) == "string" and params.name or nil
  return {
    name = tool and (method .. " " .. tool) or method,
    method = method,
    server = type(info) == "table" and type(info.name) == "string" and info.name or nil,
    tool = tool,
    start_ms = core.now_ms(),
  }
end

--- One request as a span: on_span_start, the trace context into _meta, send(params), on_span_end.
---@param client mcp.Client
---@param method string
---@param params table|nil
---@param send fun(params: table|nil): any, mcp.Error|nil
---@return any result, mcp.Error|nil err
function M.request(client, method, params, send)
  local span = M.start(client, method, params)
  local ctx = M.context(client, span, hook(client, "on_span_start", span))
  if ctx then params = M.with_context(params, ctx) end
  local res, err = send(params)
  span.duration_ms = core.now_ms() - span.start_ms
  -- a tool's own failure (isError) is an error span too
  span.status = (res ~= nil and not (type(res) == "table" and res.isError == true)) and "ok" or "error"
  span.error = err
  hook(client, "on_span_end", span)
  return res, err
end

return M
