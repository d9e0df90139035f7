--- Sampling ergonomics: the client's sampling/createMessage handler checks what the registered
--- handler returns, and helpers build the result.
---
---   client:on_sampling_request(function(params)
---     -- params: the request's params (messages, systemPrompt, maxTokens, modelPreferences...)
---     return mcp.sampling.text("Paris", { model = "my-model" })  -- or just return "Paris"
---   end)
local errors = require("mcp.errors")

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

local function valid_block(b)
  return type(b) == "table" and type(b.type) == "string"
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
  if not ok then return bad("the sampling handler returned no valid content (a block with a type)", result) end
  if type(out.model) ~= "string" then return bad("the sampling handler returned no model name", result) end
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
  local result, err = client.handlers.sampling(params)
  if result == nil then return nil, err end
  return M.finish(result)
end

return M
