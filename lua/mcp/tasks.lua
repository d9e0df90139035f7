--- Tasks in the 2026-07-28 era (the `io.modelcontextprotocol/tasks` extension): a tools/call the
--- server answers with `resultType = "task"` is polled with `tasks/get` until the task ends, behind
--- the same call_tool. Input the task asks for goes to the elicitation, sampling and roots handlers
--- and back with `tasks/update`; the call's timeout and cancel token end it with `tasks/cancel`; the
--- call's on_progress hears the server's progress (the call's progressToken) until the task ends.
local core = require("mcp.core")
local errors = require("mcp.errors")
local modern = require("mcp.modern")
local sched = require("mcp.sched")

local M = {}

M.EXTENSION = "io.modelcontextprotocol/tasks"
--- Poll interval when the server names none, and the bounds on the one it names (ms).
M.DEFAULT_POLL_INTERVAL_MS = 500
M.MIN_POLL_INTERVAL_MS = 10
M.MAX_POLL_INTERVAL_MS = 5000

-- The task fields of a CreateTaskResult or a tasks/get result (top level in 2026-07-28; under
-- `task` in the 2025-11-25 shape).
local function task_of(res)
  if type(res) ~= "table" then return nil end
  if type(res.taskId) == "string" then return res end
  if type(res.task) == "table" and type(res.task.taskId) == "string" then return res.task end
  return nil
end
M.task_of = task_of

local function remember(client, task)
  local known = client.tasks[task.taskId] or {}
  for k, v in pairs(task) do known[k] = v end
  client.tasks[task.taskId] = known
end

local function protocol_error(method, msg, data)
  return nil, errors.new(nil, msg, data, { kind = "protocol", method = method })
end

-- The progress token of the call that created the task stays valid for the task's life (the
-- server may report progress with it while the task works): send_attempt kept its on_progress
-- registered; release it when the task has been followed to its end, whatever the end.
local function with_progress(follow, client, method, res, opts)
  local task = task_of(res)
  local token = task and client.task_progress[task.taskId]
  if token ~= nil then client.task_progress[task.taskId] = nil end
  local r, e = follow(client, method, res, opts) -- no pcall: it yields (Lua 5.1)
  if token ~= nil then client.progress[token] = nil end
  return r, e
end

--- Follow a task to its end; returns the tool's result, or nil, err.
---@param client mcp.Client
---@param method string the request that created the task (tools/call)
---@param res table the CreateTaskResult
---@param opts table the call's options (timeout_ms, cancel)
---@return table|nil result, mcp.Error|nil err
local function await(client, method, res, opts)
  local task = task_of(res)
  if task == nil then return protocol_error(method, "invalid task result: no taskId", res) end
  local id = task.taskId
  remember(client, task)
  local timeout = opts.timeout_ms or client.config.request_timeout_ms
  local deadline = timeout > 0 and core.now_ms() + timeout or nil
  local cancel = opts.cancel
  local poll_opts = { cache = false }
  local function give_up(kind, why)
    client:request("tasks/cancel", { taskId = id }, poll_opts) -- best effort
    return nil, errors.new(nil, why, { taskId = id }, { kind = kind, method = method })
  end
  while true do
    local status = task.status
    if status == "completed" then
      if type(task.result) ~= "table" then return protocol_error(method, "task " .. id .. " completed without a result", task) end
      return task.result
    elseif status == "failed" then
      local e = type(task.error) == "table" and task.error or {}
      return nil, errors.new(type(e.code) == "number" and e.code or nil,
        type(e.message) == "string" and e.message or ("task " .. id .. " failed"), e.data,
        { kind = type(e.code) == "number" and "rpc" or "protocol", method = method })
    elseif status == "cancelled" then
      return nil, errors.new(nil, "task " .. id .. " was cancelled by the server", task, { kind = "cancelled", method = method })
    elseif status == "input_required" and task.inputRequests ~= nil then
      local responses, err = modern.fulfil(client, method, task.inputRequests)
      if responses == nil then
        give_up("handler", "task input failed")
        return nil, err
      end
      local up
      up, err = client:request("tasks/update", { taskId = id, inputResponses = responses }, poll_opts)
      if up == nil then return nil, err end
    elseif status ~= "working" and status ~= "input_required" then
      return protocol_error(method, "task " .. id .. " has an unknown status " .. tostring(status), task)
    else
      -- wait the poll interval, watching the cancel token and the call's deadline
      local wait = tonumber(task.pollIntervalMs or task.pollInterval) or M.DEFAULT_POLL_INTERVAL_MS
      if wait < M.MIN_POLL_INTERVAL_MS then wait = M.MIN_POLL_INTERVAL_MS end
      if wait > M.MAX_POLL_INTERVAL_MS then wait = M.MAX_POLL_INTERVAL_MS end
      local until_ms = core.now_ms() + wait
      while core.now_ms() < until_ms do
        if cancel and cancel.cancelled then return give_up("cancelled", "request cancelled: " .. tostring(cancel.reason)) end
        if deadline and core.now_ms() >= deadline then
          return give_up("timeout", "request timed out after " .. timeout .. " ms (task " .. id .. ")")
        end
        local step = until_ms - core.now_ms()
        sched.sleep(step > 50 and 50 or (step > 0 and step or 0))
      end
    end
    if cancel and cancel.cancelled then return give_up("cancelled", "request cancelled: " .. tostring(cancel.reason)) end
    if deadline and core.now_ms() >= deadline then
      return give_up("timeout", "request timed out after " .. timeout .. " ms (task " .. id .. ")")
    end
    local got, err = client:request("tasks/get", { taskId = id }, poll_opts)
    if got == nil then return nil, err end
    local t = task_of(got)
    if t == nil or t.taskId ~= id then return protocol_error("tasks/get", "invalid tasks/get result", got) end
    task = t
    remember(client, task)
  end
end

--- The 2025-11-25 shape: a tools/call sent with `task` (opts.task) answers CreateTaskResult
--- {task = Task}; poll tasks/get until the task leaves "working", then tasks/result gives the
--- tool's result (or its error). Input goes through the ordinary server requests meanwhile.
---@param client mcp.Client
---@param method string
---@param res table the CreateTaskResult
---@param opts table the call's options
---@return table|nil result, mcp.Error|nil err
local function await_legacy(client, method, res, opts)
  local task = task_of(res)
  if task == nil then return protocol_error(method, "invalid task result: no taskId", res) end
  local id = task.taskId
  remember(client, task)
  local timeout = opts.timeout_ms or client.config.request_timeout_ms
  local deadline = timeout > 0 and core.now_ms() + timeout or nil
  local cancel = opts.cancel
  local function give_up(kind, why)
    client:request("tasks/cancel", { taskId = id }) -- best effort
    return nil, errors.new(nil, why, { taskId = id }, { kind = kind, method = method })
  end
  while task.status == "working" do
    local wait = tonumber(task.pollInterval) or M.DEFAULT_POLL_INTERVAL_MS
    if wait < M.MIN_POLL_INTERVAL_MS then wait = M.MIN_POLL_INTERVAL_MS end
    if wait > M.MAX_POLL_INTERVAL_MS then wait = M.MAX_POLL_INTERVAL_MS end
    local until_ms = core.now_ms() + wait
    while core.now_ms() < until_ms do
      if cancel and cancel.cancelled then return give_up("cancelled", "request cancelled: " .. tostring(cancel.reason)) end
      if deadline and core.now_ms() >= deadline then
        return give_up("timeout", "request timed out after " .. timeout .. " ms (task " .. id .. ")")
      end
      local step = until_ms - core.now_ms()
      sched.sleep(step > 50 and 50 or (step > 0 and step or 0))
    end
    local got, err = client:request("tasks/get", { taskId = id })
    if got == nil then return nil, err end
    local t = task_of(got)
    if t == nil or t.taskId ~= id then return protocol_error("tasks/get", "invalid tasks/get result", got) end
    task = t
    remember(client, task)
  end
  if task.status == "cancelled" then
    return nil, errors.new(nil, "task " .. id .. " was cancelled by the server", task, { kind = "cancelled", method = method })
  end
  -- completed, failed or input_required: tasks/result answers when the task ends
  local left = deadline and math.max(1, deadline - core.now_ms()) or 0
  return client:request("tasks/result", { taskId = id }, { timeout_ms = left, cancel = cancel })
end

--- Follow a task to its end (the 2026-07-28 extension): the tool's result, or nil, err. The call's
--- on_progress keeps receiving the progress the server reports with the call's token meanwhile.
---@param client mcp.Client
---@param method string the request that created the task (tools/call)
---@param res table the CreateTaskResult
---@param opts table the call's options (timeout_ms, cancel, on_progress)
---@return table|nil result, mcp.Error|nil err
function M.await(client, method, res, opts)
  return with_progress(await, client, method, res, opts)
end

--- Follow a 2025-11-25 task to its end, with progress as M.await.
---@param client mcp.Client
---@param method string
---@param res table the CreateTaskResult
---@param opts table the call's options
---@return table|nil result, mcp.Error|nil err
function M.await_legacy(client, method, res, opts)
  return with_progress(await_legacy, client, method, res, opts)
end

return M
