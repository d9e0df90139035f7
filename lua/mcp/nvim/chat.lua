--- mcp.nvim.chat: the plugin's tools for chat plugins. Names follow mcphub.nvim's, where users
--- look for them: tools `server__tool`, a CodeCompanion group per server (named after it) and one
--- group `mcp` with every tool.
---
---   require("codecompanion").setup({ interactions = { chat = {
---     tools = require("mcp.nvim.chat").codecompanion() } } })   -- then @{mcp} or @{github} in a chat
local plugin = require("mcp.nvim.plugin")
local tools = require("mcp.tools")

local M = {}

-- A hub seen as the client a tool converter needs: its tools, calls routed (and approved) by it.
local function hub_client(hub)
  return {
    config = { client_name = "lua-mcp.nvim" },
    list_all_tools = function() return hub:list_tools() end,
    call_tool = function(_, name, arguments, opts) return hub:call_tool(name, arguments, opts) end,
  }
end

--- Converted tools (mcp.tools) of every server of the plugin's hubs (started and waited for),
--- each with `server`. Called from init.lua, it starts the hubs with nobody asking: as background
--- work (plugin.start{background = true}), where a server that needs a login logs in nowhere and
--- waits in "login_required" (a warning says to run :McpLogin); hubs already started stay as they are.
---@return table[]
function M.tools()
  plugin.start({ background = true })
  plugin.wait()
  local out = {}
  for _, h in ipairs(plugin.hubs) do
    local defs = h.hub:list_tools()
    local conv = assert(tools.new_tool_converter(hub_client(h.hub)):tools_from_definitions(defs))
    for i, t in ipairs(conv) do
      t.server = defs[i].server
      out[#out + 1] = t
    end
  end
  return out
end

--- The plugin's tools in a model API's or chat plugin's format: "openai", "anthropic", "gemini"
--- (mcp.tools.to_*), "codecompanion" (M.codecompanion()) or "avante" (M.avante()).
---@param format string
---@param opts table|nil passed to the exporter
---@return table
function M.tools_for(format, opts)
  if format == "codecompanion" then return M.codecompanion(opts) end
  if format == "avante" then return M.avante() end
  local export = ({ openai = tools.to_openai, anthropic = tools.to_anthropic, gemini = tools.to_gemini })[format]
  if export == nil then error("mcp.nvim.chat.tools_for: unknown format '" .. tostring(format) .. "'", 2) end
  return export(M.tools(), opts)
end

--- CodeCompanion's `interactions.chat.tools` table (CodeCompanion v18; `strategies.chat.tools`
--- before): every tool by its namespaced name, a group per server and the group `mcp`.
---@param opts table|nil passed to mcp.tools.to_codecompanion (blocking, timeout_ms, max_result_bytes)
---@return table
function M.codecompanion(opts)
  local out = { groups = {} }
  local all = {}
  for _, t in ipairs(M.tools()) do
    out[t.name] = { description = t.description or "", callback = tools.to_codecompanion(t, opts) }
    all[#all + 1] = t.name
    local g = out.groups[t.server]
    if g == nil then
      g = { description = "Tools of the MCP server " .. t.server, tools = {}, opts = { collapse_tools = true } }
      out.groups[t.server] = g
    end
    g.tools[#g.tools + 1] = t.name
  end
  out.groups.mcp = { description = "Every tool of the MCP servers", tools = all, opts = { collapse_tools = true } }
  return out
end

local AVANTE_TYPES = { string = "string", integer = "integer", number = "number", boolean = "boolean" }

-- An avante param description from a tool's input schema: its properties as fields (types avante
-- does not know go as "string" with the JSON schema in the description).
local function avante_param(schema)
  local fields, req = {}, {}
  schema = type(schema) == "table" and schema or {}
  for _, n in ipairs(type(schema.required) == "table" and schema.required or {}) do req[n] = true end
  local props = type(schema.properties) == "table" and schema.properties or {}
  local names = require("mcp.nvim.ui").sorted_keys(props)
  for _, n in ipairs(names) do
    local p = type(props[n]) == "table" and props[n] or {}
    local t = AVANTE_TYPES[p.type]
    local desc = p.description or n
    if t == nil then desc = desc .. " (JSON: " .. require("mcp.json").encode(p) .. ")" end
    fields[#fields + 1] = { name = n, description = desc, type = t or "string", optional = not req[n] }
  end
  return { type = "table", fields = fields }
end

-- Run a converted tool; done(text, err) as avante's on_complete takes them.
local function run_tool(t, params, done)
  local content = require("mcp.content")
  local parts, res = t.execute(params or {}, {})
  if parts == nil then return done(nil, tostring(res)) end
  if type(res) == "table" and res.isError == true then return done(nil, content.to_text(parts)) end
  return done(content.to_text(parts), nil)
end

--- avante.nvim's `custom_tools`: one per tool, named `server__tool`, its parameters from the input
--- schema. `func` takes (params, opts) with opts.on_complete (current avante), or (params, on_log,
--- on_complete) (older ones); with on_complete the call runs in an mcp task, without it it waits
--- and returns result, error.
---@return table[]
function M.avante()
  local out = {}
  for _, t in ipairs(M.tools()) do
    out[#out + 1] = {
      name = t.name,
      description = t.description or t.name,
      param = avante_param(t.input_schema),
      returns = { { name = "result", description = "The tool's text output", type = "string" },
        { name = "error", description = "Why the call failed", type = "string", optional = true } },
      func = function(params, a, b)
        local on_complete = type(a) == "table" and a.on_complete or b
        if type(on_complete) ~= "function" then
          local text, err
          run_tool(t, params, function(x, e) text, err = x, e end)
          return text, err
        end
        require("mcp").spawn(function() run_tool(t, params, on_complete) end)
      end,
    }
  end
  return out
end

return M
