--- Converted tools (mcp.tools) in the function-calling shapes of model APIs, and an adapter for
--- CodeCompanion.nvim's tool tables. Schemas are passed as they are (no keyword is stripped)
--- except where an API documents a restricted dialect (Gemini's `parameters` with openapi = true).
local budget = require("mcp.tools.budget")
local json = require("mcp.json")

local M = {}

--- The result budget exporters apply unless told otherwise (bytes of text and binary data).
M.DEFAULT_MAX_RESULT_BYTES = 100000

local function check(tools, fname)
  if type(tools) ~= "table" then error("mcp.tools." .. fname .. ": an array of converted tools expected", 3) end
  for i, t in ipairs(tools) do
    if type(t) ~= "table" or type(t.name) ~= "string" then
      error("mcp.tools." .. fname .. ": tool " .. i .. " has no name", 3)
    end
  end
end

local function params_of(t)
  return t.input_schema or { type = "object", properties = json.object() }
end

-- opts.loaded (an array of names or a set name -> true): the tools sent in full; nil when every
-- tool is. Also whether a loaded tool is mcp.tools.search_tool's meta-tool (client-side search).
local function loaded_set(tools, opts, fname)
  local loaded = opts and opts.loaded
  if loaded == nil then return nil, false end
  if type(loaded) ~= "table" then error("mcp.tools." .. fname .. ": opts.loaded must be a table of tool names", 3) end
  local set = {}
  for k, v in pairs(loaded) do
    if type(k) == "number" then set[v] = true elseif v then set[k] = true end
  end
  local client_search = false
  for _, t in ipairs(tools) do
    local m = set[t.name] and type(t.provider_metadata) == "table" and t.provider_metadata.mcp
    if type(m) == "table" and m.meta_tool == "tool_search" then client_search = true end
  end
  return set, client_search
end

-- Anthropic's server-side tool search tools (opts.search), one of which a request with deferred
-- tools needs unless the host runs the search itself.
local ANTHROPIC_SEARCH = {
  bm25 = { type = "tool_search_tool_bm25_20251119", name = "tool_search_tool_bm25" },
  regex = { type = "tool_search_tool_regex_20251119", name = "tool_search_tool_regex" },
}

--- OpenAI function tools. opts.api: "chat" (default, Chat Completions:
--- {type="function", ["function"]={name, description, parameters, strict}}) or "responses"
--- (Responses API: {type="function", name, description, parameters, strict}); opts.strict: sets
--- `strict` (OpenAI's strict mode demands every property required and additionalProperties false).
--- opts.loaded (names): the tools sent in full. The Responses API marks the others
--- `defer_loading = true` and gets the hosted `{type="tool_search"}` tool (unless a loaded tool is
--- mcp.tools.search_tool's, or opts.search = false); Chat Completions has no deferral, so the
--- others are left out (the host's tool_search finds them; load them in a later turn).
---@param tools table[]
---@param opts table|nil api, strict, loaded, search
---@return table[]
function M.to_openai(tools, opts)
  check(tools, "to_openai")
  opts = opts or {}
  local loaded, client_search = loaded_set(tools, opts, "to_openai")
  local out, deferred = json.array(), 0
  for _, t in ipairs(tools) do
    local defer = loaded ~= nil and not loaded[t.name]
    local fn = { name = t.name, description = t.description or "", parameters = params_of(t) }
    if opts.strict ~= nil then fn.strict = opts.strict end
    if opts.api == "responses" then
      fn.type = "function"
      if defer then
        fn.defer_loading = true
        deferred = deferred + 1
      end
      out[#out + 1] = fn
    elseif not defer then
      out[#out + 1] = { type = "function", ["function"] = fn }
    end
  end
  if deferred > 0 and not client_search and opts.search ~= false then out[#out + 1] = { type = "tool_search" } end
  return out
end

--- Anthropic Messages API tools: {name, description, input_schema}. opts.loaded (names): the
--- tools sent in full; the others get `defer_loading = true` (the model finds them through a
--- tool search) and, unless a loaded tool is mcp.tools.search_tool's meta-tool (whose result
--- carries the tool_reference blocks) or opts.search = false, Anthropic's server-side search tool
--- comes first: opts.search "bm25" (default) or "regex".
---@param tools table[]
---@param opts table|nil loaded, search
---@return table[]
function M.to_anthropic(tools, opts)
  check(tools, "to_anthropic")
  local loaded, client_search = loaded_set(tools, opts, "to_anthropic")
  local search = opts and opts.search
  if search ~= nil and search ~= false and ANTHROPIC_SEARCH[search] == nil then
    error("mcp.tools.to_anthropic: opts.search must be \"bm25\", \"regex\" or false", 2)
  end
  local out, deferred = json.array(), false
  for _, t in ipairs(tools) do
    local s = params_of(t)
    if type(s) == "table" and s.type == nil then
      local c = {}
      for k, v in pairs(s) do c[k] = v end
      c.type = "object" -- the API requires type "object" at the root
      s = c
    end
    local entry = { name = t.name, description = t.description, input_schema = s }
    if loaded ~= nil and not loaded[t.name] then
      entry.defer_loading = true
      deferred = true
    end
    out[#out + 1] = entry
  end
  if deferred and not client_search and search ~= false then
    local st = ANTHROPIC_SEARCH[search or "bm25"]
    table.insert(out, 1, { type = st.type, name = st.name })
  end
  return out
end

-- The OpenAPI 3.0 subset Gemini's `parameters` accepts.
local GEMINI_KEYS = { type = true, format = true, title = true, description = true, nullable = true,
  enum = true, maxItems = true, minItems = true, properties = true, required = true, minProperties = true,
  maxProperties = true, minLength = true, maxLength = true, pattern = true, example = true, anyOf = true,
  propertyOrdering = true, default = true, items = true, minimum = true, maximum = true }

local function openapi_subset(s)
  if type(s) ~= "table" then return s end
  local out = {}
  for k, v in pairs(s) do
    if GEMINI_KEYS[k] then
      if k == "properties" then
        local p = json.object()
        for name, sub in pairs(v) do p[name] = openapi_subset(sub) end
        out[k] = p
      elseif k == "items" then
        out[k] = openapi_subset(v)
      elseif k == "anyOf" then
        local l = json.array()
        for i, sub in ipairs(v) do l[i] = openapi_subset(sub) end
        out[k] = l
      else
        out[k] = v
      end
    end
  end
  return setmetatable(out, getmetatable(s))
end

--- A Gemini `Tool`: {functionDeclarations = {{name, description, parametersJsonSchema}}}. With
--- opts.openapi = true the schema goes in `parameters`, reduced to the OpenAPI subset that field
--- accepts ($ref, additionalProperties, oneOf... are dropped), for endpoints without
--- parametersJsonSchema.
---@param tools table[]
---@param opts table|nil
---@return table
function M.to_gemini(tools, opts)
  check(tools, "to_gemini")
  opts = opts or {}
  local decls = json.array()
  for _, t in ipairs(tools) do
    local d = { name = t.name, description = t.description }
    if opts.openapi then
      d.parameters = openapi_subset(params_of(t))
    else
      d.parametersJsonSchema = params_of(t)
    end
    decls[#decls + 1] = d
  end
  return { functionDeclarations = decls }
end

--- A CodeCompanion.nvim tool table for one converted tool (the function-tool API of
--- CodeCompanion v17+: cmds receive (self, args, opts) and report through opts.output_cb).
--- The call runs in an mcp task, so the host must drive lua-mcp's loop (mcp.loop.fd/step);
--- opts.blocking = true calls the tool synchronously instead. The text of the content parts
--- goes to the chat, cut to opts.max_result_bytes (default 100000; false: no limit) with a
--- marker saying how much was cut. Register it in CodeCompanion's `interactions.chat.tools`
--- (`strategies.chat.tools` before CodeCompanion v18) as
---   [name] = { callback = mcp.tools.to_codecompanion(tool), description = tool.description }
--- (the Neovim plugin's mcp.nvim.chat.codecompanion() builds that table for every server).
---@param tool table a converted tool
---@param opts table|nil blocking (boolean), timeout_ms (per call), max_result_bytes (integer|false)
---@return table
function M.to_codecompanion(tool, opts)
  if type(tool) ~= "table" or type(tool.execute) ~= "function" then
    error("mcp.tools.to_codecompanion: a converted tool expected", 2)
  end
  opts = opts or {}
  local max_bytes = opts.max_result_bytes
  if max_bytes == nil then max_bytes = M.DEFAULT_MAX_RESULT_BYTES end
  local content = require("mcp.content")
  local function run(args, cb)
    local parts, res_or_err = tool.execute(args, { timeout_ms = opts.timeout_ms })
    if parts ~= nil and max_bytes then parts = budget.cut(parts, max_bytes) end
    if parts == nil then
      cb({ status = "error", data = tostring(res_or_err) })
    elseif type(res_or_err) == "table" and res_or_err.isError == true then
      cb({ status = "error", data = content.to_text(parts) })
    else
      cb({ status = "success", data = content.to_text(parts) })
    end
  end
  return {
    name = tool.name,
    schema = { type = "function", ["function"] = {
      name = tool.name, description = tool.description or "", parameters = params_of(tool),
    } },
    cmds = {
      function(_, args, cmd_opts)
        local cb = cmd_opts and cmd_opts.output_cb
        if opts.blocking or cb == nil then
          local result
          run(args, function(r) result = r end)
          if cb then return cb(result) end
          return result
        end
        local sched = require("mcp.sched")
        sched.spawn_handler(function(e) cb({ status = "error", data = tostring(e) }) end, run, args, cb)
        sched.run_ready() -- sends the request now; the answer arrives through the host's loop
      end,
    },
    output = {
      success = function(self, stdout, meta)
        local text = type(stdout) == "table" and table.concat(stdout, "\n") or tostring(stdout)
        meta.tools.chat:add_tool_output(self, text)
      end,
      error = function(self, stderr, meta)
        local text = type(stderr) == "table" and table.concat(stderr, "\n") or tostring(stderr)
        meta.tools.chat:add_tool_output(self, "Error from MCP tool " .. tool.name .. ": " .. text)
      end,
    },
  }
end

return M
