--- Sampling ergonomics: the client's sampling/createMessage handler checks what the registered
--- handler returns, and helpers build the result.
---
---   client:on_sampling_request(function(params)
---     -- params: the request's params (messages, systemPrompt, maxTokens, modelPreferences...)
---     return mcp.sampling.text("Paris", { model = "my-model" })  -- or just return "Paris"
---   end)
---
--- Tools in sampling (2025-11-25, SEP-1577): register with { tools = true } and the request's
--- params carry tools and toolChoice ({mode = "auto"|"required"|"none"}); the handler may answer
--- with tool_use blocks (tool_use, tool_calls), the server runs them and asks again with
--- tool_result blocks (tool_uses, tool_result, tool_loop help a handler with that conversation).
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

--- A CreateMessageResult with one text block.
---@param text string
---@param opts table|nil model (default "unknown"), stop_reason (default "endTurn"), role ("assistant")
---@return table
function M.text(text, opts)
  if type(text) ~= "string" then error("mcp.sampling.text: text must be a string", 2) end
  opts = opts or {}
  return {
    role = opts.role or "assistant",
    content = { type = "text", text = text },
    model = opts.model or "unknown",
    stopReason = opts.stop_reason or "endTurn",
  }
end

local function bad(msg, data)
  return nil, errors.new(errors.ERROR_CODES.INTERNAL_ERROR, msg, data,
    { kind = "handler", method = "sampling/createMessage" })
end

-- tool_use (SEP-1577) needs id, name and an input object; other blocks a type.
local function valid_block(b)
  if type(b) ~= "table" or type(b.type) ~= "string" then return false end
  if b.type == "tool_use" then
    return type(b.id) == "string" and type(b.name) == "string" and type(b.input) == "table"
  end
  if b.type == "tool_result" then
    return type(b.toolUseId) == "string" and type(b.content) == "table"
  end
  return true
end

-- The blocks of a message's (or result's) content: a single block or an array of them.
local function blocks_of(content)
  if type(content) ~= "table" then return {} end
  if content.type ~= nil then return { content } end
  return content
end

-- ---- tools in sampling (2025-11-25, SEP-1577) --------------------------------------------------

--- A tool_use block: the model asks to call tool name with input (the answer of a sampling
--- handler whose model wants a tool; the server runs it and asks again with the tool_result).
---@param id string unique within the conversation
---@param name string one of the request's tools
---@param input table|nil the tool's arguments
---@param meta table|nil sent as _meta
---@return table
function M.tool_use(id, name, input, meta)
  if type(id) ~= "string" or type(name) ~= "string" then error("mcp.sampling.tool_use: id and name must be strings", 2) end
  if input ~= nil and type(input) ~= "table" then error("mcp.sampling.tool_use: input must be a table", 2) end
  return { type = "tool_use", id = id, name = name, input = json.object(input or {}), _meta = meta }
end

--- A tool_result block answering the tool_use tool_use_id.
---@param tool_use_id string
---@param content table|string an array of content blocks, or a text
---@param opts table|nil is_error, structured_content, meta
---@return table
function M.tool_result(tool_use_id, content, opts)
  if type(tool_use_id) ~= "string" then error("mcp.sampling.tool_result: tool_use_id must be a string", 2) end
  if type(content) == "string" then content = { { type = "text", text = content } } end
  if type(content) ~= "table" then error("mcp.sampling.tool_result: content must be a table or a string", 2) end
  opts = opts or {}
  return {
    type = "tool_result", toolUseId = tool_use_id, content = json.array(blocks_of(content)),
    structuredContent = opts.structured_content, isError = opts.is_error, _meta = opts.meta,
  }
end

--- A CreateMessageResult asking for tool calls: the tool_use blocks (and any text before them),
--- stopReason "toolUse".
---@param blocks table[] content blocks, at least one tool_use
---@param opts table|nil model (default "unknown"), role ("assistant")
---@return table
function M.tool_calls(blocks, opts)
  if type(blocks) ~= "table" or blocks[1] == nil then error("mcp.sampling.tool_calls: blocks must be a non-empty array", 2) end
  opts = opts or {}
  return { role = opts.role or "assistant", content = json.array(blocks), model = opts.model or "unknown",
    stopReason = "toolUse" }
end

--- The tool_use blocks of a message or a CreateMessageResult (its content: one block or an array).
---@param message table
---@return table[]
function M.tool_uses(message)
  local out = {}
  for _, b in ipairs(blocks_of(type(message) == "table" and message.content)) do
    if type(b) == "table" and b.type == "tool_use" then out[#out + 1] = b end
  end
  return out
end

local function bad_request(msg, params)
  return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid sampling request: " .. msg, params,
    { kind = "protocol", method = "sampling/createMessage" })
end

--- Check the tool blocks of a sampling request's messages (SEP-1577): a message with tool_result
--- blocks has nothing else, and answers exactly the tool_use ids of the message before it.
--- true, or nil and a message.
---@param messages table[]
---@return boolean|nil ok, string|nil err
function M.check_tool_messages(messages)
  for i, m in ipairs(messages) do
    local blocks = blocks_of(type(m) == "table" and m.content)
    local results = {}
    local others = false
    for _, b in ipairs(blocks) do
      if type(b) == "table" and b.type == "tool_result" then
        if type(b.toolUseId) ~= "string" then return nil, "a tool_result without toolUseId" end
        results[b.toolUseId] = true
        results[#results + 1] = b.toolUseId
      elseif type(b) == "table" and b.type == "tool_use" and not valid_block(b) then
        return nil, "a tool_use needs id, name and input"
      else
        others = true
      end
    end
    if #results > 0 then
      if others then return nil, "a message with tool_result blocks must contain only tool results" end
      local uses = M.tool_uses(messages[i - 1] or {})
      if #uses ~= #results then return nil, "the tool_result blocks do not answer the tool_use blocks before them" end
      for _, u in ipairs(uses) do
        if not results[u.id] then return nil, "no tool_result for tool_use " .. tostring(u.id) end
      end
    end
  end
  return true
end

--- Run a tool loop inside a sampling handler, for a host whose model calls tools the host runs
--- itself: step(messages) asks the model (a CreateMessageResult or a string); while its answer
--- has tool_use blocks, execute(tool_use) runs each (a tool_result block, a text, or an array of
--- content blocks; raising or nil, err gives an isError result), the answers are appended, and
--- the model is asked again, at most opts.max_iterations (10) times. The last answer, or nil, err.
---@param messages table[] the conversation so far (not modified)
---@param step fun(messages: table[]): table|string|nil, any
---@param execute fun(tool_use: table): any
---@param opts table|nil max_iterations
---@return table|nil result, mcp.Error|nil err
function M.tool_loop(messages, step, execute, opts)
  local max = (opts and opts.max_iterations) or 10
  local conv = {}
  for i, m in ipairs(messages) do conv[i] = m end
  for _ = 1, max do
    local answer, err = step(conv)
    if answer == nil then return nil, err end
    local result, ferr = M.finish(answer)
    if result == nil then return nil, ferr end
    local uses = M.tool_uses(result)
    if #uses == 0 then return result end
    conv[#conv + 1] = { role = "assistant", content = json.array(blocks_of(result.content)) }
    local answers = json.array()
    for _, u in ipairs(uses) do
      local ok, out, xerr = pcall(execute, u)
      if not ok or out == nil then
        answers[#answers + 1] = M.tool_result(u.id, tostring(ok and xerr or out), { is_error = true })
      elseif type(out) == "table" and out.type == "tool_result" then
        answers[#answers + 1] = out
      else
        answers[#answers + 1] = M.tool_result(u.id, out)
      end
    end
    conv[#conv + 1] = { role = "user", content = answers }
  end
  return bad("the tool loop did not end within " .. max .. " iterations")
end

--- Check a sampling answer: a string becomes a text result; a table needs content (a block or an
--- array of blocks, each with a type) and a model; role defaults to "assistant".
---@param result any
---@return table|nil result, mcp.Error|nil err
function M.finish(result)
  if type(result) == "string" then return M.text(result) end
  if type(result) ~= "table" then
    return bad("the sampling handler returned a " .. type(result) .. ", not a result table")
  end
  local out = {}
  for k, v in pairs(result) do out[k] = v end
  if out.role == nil then out.role = "assistant" end
  if out.role ~= "assistant" and out.role ~= "user" then
    return bad("the sampling handler returned an invalid role: " .. tostring(out.role), result)
  end
  local c = out.content
  local ok = valid_block(c)
  if not ok and type(c) == "table" and c[1] ~= nil then
    ok = true
    for _, b in ipairs(c) do ok = ok and valid_block(b) end
  end
  if not ok then
    return bad("the sampling handler returned no valid content (a block with a type; a tool_use with id, name "
      .. "and input)", result)
  end
  if type(out.model) ~= "string" then return bad("the sampling handler returned no model name", result) end
  if out.stopReason == nil and #M.tool_uses(out) > 0 then out.stopReason = "toolUse" end
  return out
end

--- The client's sampling/createMessage handler.
---@param client mcp.Client
---@param params table
---@return table|nil result, mcp.Error|nil err
function M.handle(client, params)
  if type(params.messages) ~= "table" then
    return nil, errors.new(errors.ERROR_CODES.INVALID_PARAMS, "Invalid sampling request: messages must be an array",
      params, { kind = "protocol", method = "sampling/createMessage" })
  end
  local handler, tools = client:_handler("sampling")
  if (params.tools ~= nil or params.toolChoice ~= nil) and not tools then
    -- 2025-11-25: tools only when the client declared sampling.tools
    return bad_request("tools or toolChoice, but this client did not declare sampling.tools", params)
  end
  local ok, why = M.check_tool_messages(params.messages)
  if not ok then return bad_request(why, params) end
  local result, err = handler(params)
  if result == nil then return nil, err end
  return M.finish(result)
end

return M
