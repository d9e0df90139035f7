--- Tool search for agents with many tools: rank tools by a query over their name, title,
--- description and parameter names, and a `tool_search` meta-tool a host sends to the model in
--- place of hundreds of schemas (the rest go out deferred: mcp.tools.to_anthropic /
--- to_openai with opts.loaded). The source is an array of tools (converted by mcp.tools, raw
--- tools/list definitions) or anything with a list_tools() method returning one (an mcp.Hub:
--- the hub's namespaced tools, read at each search so tools added later are found).
local json = require("mcp.json")

local M = {}

-- Lower-case words of s, split at non-alphanumerics and camelCase humps (getWeather -> get, weather).
local function words(s, out)
  out = out or {}
  if type(s) ~= "string" then return out end
  s = s:gsub("(%l)(%u)", "%1 %2"):gsub("(%u)(%u%l)", "%1 %2")
  for w in s:lower():gmatch("[%w]+") do out[#out + 1] = w end
  return out
end

local function input_schema_of(t)
  local s = t.input_schema
  if s == nil then s = t.inputSchema end
  return type(s) == "table" and s or nil
end

--- The parameter names of a tool (its input schema's top-level properties), sorted.
local function param_names(t)
  local s = input_schema_of(t)
  local out = {}
  if s and type(s.properties) == "table" then
    for k in pairs(s.properties) do
      if type(k) == "string" then out[#out + 1] = k end
    end
  end
  table.sort(out)
  return out
end

-- Field weights: a word of the name counts most, then parameter names and title, then the
-- description.
local FIELDS = { { "name", 4 }, { "title", 3 }, { "params", 2 }, { "description", 1 } }

local function doc_of(t)
  local params = {}
  for _, p in ipairs(param_names(t)) do words(p, params) end
  local d = { name = words(t.original_name or t.name), title = words(t.title), params = params,
    description = words(t.description) }
  if t.original_name then words(t.name, d.name) end
  for _, f in ipairs(FIELDS) do
    local set = {}
    for _, w in ipairs(d[f[1]]) do set[w] = true end
    d[f[1]] = set
  end
  return d
end

-- The weight of term in one field set: exact word 1, a word it prefixes (3+ letters) 0.5.
local function match(set, term)
  if set[term] then return 1 end
  if #term >= 3 then
    for w in pairs(set) do
      if w:sub(1, #term) == term then return 0.5 end
    end
  end
  return 0
end

-- The tool_search meta-tool itself (it never finds itself).
local function is_meta(t)
  local m = type(t.provider_metadata) == "table" and t.provider_metadata.mcp
  return type(m) == "table" and m.meta_tool ~= nil
end

local function list_of(source)
  if type(source) == "table" and type(source.list_tools) == "function" then
    local list = source:list_tools()
    return type(list) == "table" and list or {}
  end
  if type(source) == "table" and type(source.tools) == "table" then return source.tools end
  return source
end

--- Rank tools against a query: each query word scores in each field it appears in (name > title
--- > parameter names > description, a word that is rare among the tools more than a common
--- one); the whole query found in a tool's name adds more. Tools that match nothing are left out.
--- Returns up to opts.limit (default 5) entries {tool=, name=, score=}, best first (ties by name).
---@param source table an array of tools, a tools/list result, or an object with list_tools()
---@param query string
---@param opts table|nil limit (integer, default 5)
---@return table[]
function M.search(source, query, opts)
  if type(query) ~= "string" then error("mcp.tools.search: query must be a string", 2) end
  local tools = list_of(source)
  if type(tools) ~= "table" then error("mcp.tools.search: an array of tools or an object with list_tools() expected", 2) end
  local limit = opts and opts.limit or 5
  local terms = words(query)
  local docs, df = {}, {}
  for i, t in ipairs(tools) do
    if type(t) == "table" and type(t.name) == "string" and not is_meta(t) then
      docs[i] = doc_of(t)
      for _, term in ipairs(terms) do
        for _, f in ipairs(FIELDS) do
          if match(docs[i][f[1]], term) > 0 then
            df[term] = (df[term] or 0) + 1
            break
          end
        end
      end
    end
  end
  local n, whole = #tools, query:lower():gsub("[^%w]", "")
  local hits = {}
  for i, t in ipairs(tools) do
    local d = docs[i]
    if d then
      local score = 0
      for _, term in ipairs(terms) do
        local idf = math.log(1 + n / (df[term] or n))
        for _, f in ipairs(FIELDS) do score = score + f[2] * idf * match(d[f[1]], term) end
      end
      if score > 0 and #whole >= 3 and t.name:lower():gsub("[^%w]", ""):find(whole, 1, true) then
        score = score + 4
      end
      if score > 0 then hits[#hits + 1] = { tool = t, name = t.name, score = score } end
    end
  end
  table.sort(hits, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.name < b.name
  end)
  for i = #hits, limit + 1, -1 do hits[i] = nil end
  return hits
end

local INPUT_SCHEMA = {
  type = "object",
  properties = {
    query = { type = "string", description = "Words describing the capability needed (for example: \"create calendar event\")" },
    limit = { type = "integer", minimum = 1, maximum = 20, description = "How many tools to return (default 5)" },
  },
  required = { "query" },
  additionalProperties = false,
}

--- A `tool_search` meta-tool in the shape of a converted tool (name, description, input_schema,
--- execute), to export with the few tools sent in full. execute({query=, limit=}) returns a text
--- part listing the matches and, as second value, a result with structuredContent = {tools =
--- {{name, description, parameters, score}}} and tool_references = {{type="tool_reference",
--- tool_name=}} (the content blocks Anthropic's client-side tool search expects in a
--- tool_result, which load the deferred tools named).
---@param source table as for search (a hub: its tools at each call)
---@param opts table|nil name (default "tool_search"), limit (default 5)
---@return table
function M.search_tool(source, opts)
  if type(source) ~= "table" then error("mcp.tools.search_tool: an array of tools or a hub expected", 2) end
  opts = opts or {}
  local tool = {
    name = opts.name or "tool_search",
    description = "Search the available tools by what they do. Returns the names, descriptions and "
      .. "parameters of the best matches; call a tool found here by its name.",
    type = "function",
    input_schema = INPUT_SCHEMA,
    provider_metadata = { mcp = { meta_tool = "tool_search" } },
  }
  tool.execute = function(args)
    if type(args) ~= "table" or type(args.query) ~= "string" then error("tool_search: args.query must be a string", 2) end
    local limit = tonumber(args.limit) or opts.limit or 5
    local hits = M.search(source, args.query, { limit = math.max(1, math.min(20, math.floor(limit))) })
    local found, refs, lines = json.array(), json.array(), {}
    for i, h in ipairs(hits) do
      local params = param_names(h.tool)
      found[i] = { name = h.name, description = h.tool.description, parameters = json.array(params), score = h.score }
      refs[i] = { type = "tool_reference", tool_name = h.name }
      lines[i] = h.name .. (h.tool.description and (": " .. h.tool.description) or "")
        .. (#params > 0 and (" (parameters: " .. table.concat(params, ", ") .. ")") or "")
    end
    local text = #lines > 0 and table.concat(lines, "\n") or ("No tool matches \"" .. args.query .. "\".")
    local result = { content = json.array({ { type = "text", text = text } }),
      structuredContent = { tools = found }, tool_references = refs }
    return { { type = "text", text = text } }, result
  end
  return tool
end

return M
