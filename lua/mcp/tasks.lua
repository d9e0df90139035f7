--- Tasks in the 2026-07-28 era (the `io.modelcontextprotocol/tasks` extension): a tools/call the
--- server answers with `resultType = "task"` is polled with `tasks/get` until the task ends, behind
--- the same call_tool. Input the task asks for goes to the elicitation, sampling and roots handlers
--- and back with `tasks/update`; the call's timeout and cancel token end it with `tasks/cancel`; the
--- call's on_progress hears the server's progress (the call's progressToken) until the task ends.
--- The 2025-11-25 shape (legacy era) is followed the same way (M.await_legacy). The era objects
--- call this; it reaches the client through its public methods and its internal interface
--- (_timeout_ms, _remember_task, _claim_task_progress, _set_progress; docs/ARCHITECTURE.md).
local core = require("mcp.core")
local errors = require("mcp.errors")
local handlers = require("mcp.handlers")
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

local function protocol_error(method, msg, data)
  return nil, errors.new(nil, msg, data, { kind = "protocol", method = method })
end

-- What both eras share while a task is followed: its id, the call's deadline and cancel token,
-- the options of the requests sent about the task, and give_up (best-effort tasks/cancel, then
-- the error). With reset_timeout_on_progress, the progress the server reports for the task
-- (the call's token) restarts the call's timeout, as it does while the call itself is waiting;
-- max_total_timeout_ms bounds the following whatever progress comes (counted from the task's
-- creation).
local Follow = {}
Follow.__index = Follow

function Follow:give_up(kind, why)
  self.client:request("tasks/cancel", { taskId = self.id }, self.req_opts) -- best effort
  return nil, errors.new(nil, why, { taskId = self.id }, { kind = kind, method = self.method })
end

-- nil, err once the call is cancelled or past its deadline; else nothing.
function Follow:check()
  local cancel = self.cancel
  if cancel and cancel.cancelled then return self:give_up("cancelled", "request cancelled: " .. tostring(cancel.reason)) end
  local now = core.now_ms()
  if self.total_at and now >= self.total_at then
    return self:give_up("timeout", "request timed out after " .. self.max_total_ms .. " ms (max_total_timeout_ms, task "
      .. self.id .. ")")
  end
  if self.deadline and now >= self.deadline then
    return self:give_up("timeout", "request timed out after " .. self.timeout .. " ms (task " .. self.id .. ")")
  end
end

-- Wait the poll interval the task names (within bounds), watching the cancel token and the
-- deadline: true, or nil, err.
function Follow:sleep(interval)
  local wait = tonumber(interval) or M.DEFAULT_POLL_INTERVAL_MS
  if wait < M.MIN_POLL_INTERVAL_MS then wait = M.MIN_POLL_INTERVAL_MS end
  if wait > M.MAX_POLL_INTERVAL_MS then wait = M.MAX_POLL_INTERVAL_MS end
  local until_ms = core.now_ms() + wait
  while core.now_ms() < until_ms do
    local _, err = self:check()
    if err then return nil, err end
    local step = until_ms - core.now_ms()
    sched.sleep(step > 50 and 50 or (step > 0 and step or 0))
  end
  return true
end

-- tasks/get (unless the call is cancelled or past its deadline): the task's new state, or nil, err.
function Follow:get()
  local _, err = self:check()
  if err then return nil, err end
  local got
  got, err = self.client:request("tasks/get", { taskId = self.id }, self.req_opts)
  if got == nil then return nil, err end
  local t = task_of(got)
  if t == nil or t.taskId ~= self.id then return protocol_error("tasks/get", "invalid tasks/get result", got) end
  self.client:_remember_task(t)
  return t
end

-- The server reported progress for the task: with reset_timeout_on_progress, the timeout restarts.
function Follow:progressed()
  self.deadline = core.now_ms() + self.timeout
end

-- Follow the task a CreateTaskResult names with loop(follow, task) (one per era). The progress
-- token of the call that created the task stays valid for the task's life (the server may report
-- progress with it while the task works): send_attempt kept its on_progress registered; it is
-- released when the task has been followed to its end, whatever the end.
local function follow(loop, client, method, res, opts, req_opts)
  local task = task_of(res)
  if task == nil then return protocol_error(method, "invalid task result: no taskId", res) end
  local id = task.taskId
  client:_remember_task(task)
  local timeout = client:_timeout_ms(opts)
  local f = setmetatable({
    client = client, method = method, id = id, timeout = timeout, cancel = opts.cancel, req_opts = req_opts,
    deadline = timeout > 0 and core.now_ms() + timeout or nil, reset = opts.reset_timeout_on_progress == true,
    max_total_ms = opts.max_total_timeout_ms,
  }, Follow)
  if f.max_total_ms then f.total_at = core.now_ms() + f.max_total_ms end
  local token, on_progress = client:_claim_task_progress(id)
  if token ~= nil and f.reset and f.deadline then
    client:_set_progress(token, function(params)
      f:progressed()
      if on_progress then return on_progress(params) end
    end)
  end
  local r, e = loop(f, task) -- no pcall: it yields (Lua 5.1)
  if token ~= nil then client:_set_progress(token, nil) end
  return r, e
end

-- The 2026-07-28 extension: poll tasks/get, answer the input the task asks for with tasks/update,
-- until the task ends with its result (inline).
local function await(f, task)
  local method, id = f.method, f.id
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
      local responses, err = handlers.fulfil(f.client, method, task.inputRequests)
      if responses == nil then
        f:give_up("handler", "task input failed")
        return nil, err
      end
      local up
      up, err = f.client:request("tasks/update", { taskId = id, inputResponses = responses }, f.req_opts)
      if up == nil then return nil, err end
    elseif status ~= "working" and status ~= "input_required" then
      return protocol_error(method, "task " .. id .. " has an unknown status " .. tostring(status), task)
    else
      local ok, err = f:sleep(task.pollIntervalMs or task.pollInterval)
      if not ok then return nil, err end
    end
    local err
    task, err = f:get()
    if task == nil then return nil, err end
  end
end

-- The 2025-11-25 shape: a tools/call sent with `task` (opts.task) answers CreateTaskResult
-- {task = Task}; poll tasks/get until the task leaves "working", then tasks/result gives the
-- tool's result (or its error). Input goes through the ordinary server requests meanwhile.
local function await_legacy(f, task)
  while task.status == "working" do
    local ok, err = f:sleep(task.pollInterval)
    if not ok then return nil, err end
    task, err = f:get()
    if task == nil then return nil, err end
  end
  if task.status == "cancelled" then
    return nil, errors.new(nil, "task " .. f.id .. " was cancelled by the server", task, { kind = "cancelled", method = f.method })
  end
  -- completed, failed or input_required: tasks/result answers when the task ends
  local ends = f.deadline
  if f.total_at and (ends == nil or f.total_at < ends) then ends = f.total_at end
  local left = ends and math.max(1, ends - core.now_ms()) or 0
  return f.client:request("tasks/result", { taskId = f.id }, { timeout_ms = left, cancel = f.cancel })
end

--- Follow a task to its end (the 2026-07-28 extension): the tool's result, or nil, err. The call's
--- on_progress keeps receiving the progress the server reports with the call's token meanwhile.
---@param client mcp.Client
---@param method string the request that created the task (tools/call)
---@param res table the CreateTaskResult
---@param opts table the call's options (timeout_ms, reset_timeout_on_progress, max_total_timeout_ms, cancel,
---  on_progress)
---@return table|nil result, mcp.Error|nil err
function M.await(client, method, res, opts)
  return follow(await, client, method, res, opts, { cache = false })
end

--- Follow a 2025-11-25 task to its end, with progress as M.await.
---@param client mcp.Client
---@param method string
---@param res table the CreateTaskResult
---@param opts table the call's options
---@return table|nil result, mcp.Error|nil err
function M.await_legacy(client, method, res, opts)
  return follow(await_legacy, client, method, res, opts, nil)
end

return M
