--- The scheduler: coroutines started with mcp.spawn, the ready queue, and the three ways a
--- waiting call behaves (blocking outside a task, suspending inside one, host-driven step(0)).
--- The C core never resumes a coroutine: its callbacks only queue results here, and coroutines
--- run from run_ready(), outside any C callback, so no handler runs on a dead or foreign
--- coroutine and a task may block, yield or fail freely.
local core = require("mcp.core")
local term = require("mcp.util.term")

local unpack = table.unpack or unpack
local pack = table.pack or function(...) return { n = select("#", ...), ... } end

local M = {}

local tasks = setmetatable({}, { __mode = "k" }) -- coroutine -> true for tasks we run
local live = 0
local queue, qhead, qtail = {}, 1, 0
local held = {} -- errors raised by the task error hook, for the next run()/step() to raise

--- The default task error hook: one line on stderr, escaped (mcp.util.term): the error may quote
--- a server's text, whose terminal controls must not reach the user's terminal.
local function default_task_error(err)
  local line = tostring(err):gsub("[\r\n]+", " | ")
  io.stderr:write("mcp: a task failed: ", term.escape(line), "\n")
end
local task_error_hook = default_task_error

--- Set the hook that receives the error of a task started with mcp.spawn: fn(err, traceback).
--- nil restores the default (one line on stderr, escaped: mcp.util.term). An error raised by the hook is kept and raised
--- by the next mcp.run() or mcp.loop.step(), never by another call. Returns the previous hook.
---@param fn fun(err: any, traceback: string)|nil
---@return fun(err: any, traceback: string)
function M.on_task_error(fn)
  if fn ~= nil and type(fn) ~= "function" then error("mcp.on_task_error: fn must be a function or nil", 2) end
  local prev = task_error_hook
  task_error_hook = fn or default_task_error
  return prev
end

local function task_failed(err, traceback)
  local ok, herr = pcall(task_error_hook, err, traceback)
  if not ok then held[#held + 1] = herr end
end

-- Raise the first error a task error hook raised (only run() and step() call this).
local function raise_held(level)
  if #held > 0 then
    local err = table.remove(held, 1)
    error(err, level and level + 1 or 0)
  end
end

-- The item is made and stored before qtail counts it: out of memory making or storing it raises
-- here and leaves the queue as it was (advanced first, it would leave a hole that the next
-- run_ready raises on, once).
local function push_ready(co, ...)
  local item = { co = co, args = pack(...) }
  queue[qtail + 1] = item
  qtail = qtail + 1
end

-- Tasks waiting for the next budgeted round (M.pace_start), and the round count: a round is one
-- host step's budget (run_ready_budget called without ms_left).
local deferred, round, paced_round, pacing = {}, 0, -1, false

local function has_ready()
  return qhead <= qtail or deferred[1] ~= nil
end
M.has_ready = has_ready

-- Coroutines M.pcall runs a function in (PUC 5.1 only) -> the task they run for.
local owners = setmetatable({}, { __mode = "k" })

--- The running coroutine when it is one of ours (a task), else nil. Inside M.pcall on PUC 5.1
--- (a coroutine of its own) this is the task the pcall runs in: the task is what gets resumed.
function M.current()
  local co = coroutine.running()
  if co == nil then return nil end
  if tasks[co] then return co end
  return owners[co]
end

-- PUC Lua 5.1 cannot yield across pcall; LuaJIT and 5.2+ can.
local pcall_yields = _VERSION ~= "Lua 5.1" or type(jit) == "table"

--- pcall(fn, ...) that the running task may yield through on every Lua version. On PUC 5.1 in a
--- task, fn runs in a coroutine of its own whose yields are passed on to the scheduler (and
--- resumes passed back); elsewhere it is pcall.
---@param fn function
---@return boolean ok, any ...
function M.pcall(fn, ...)
  if pcall_yields then return pcall(fn, ...) end
  local task = M.current()
  if task == nil then return pcall(fn, ...) end
  local co = coroutine.create(fn)
  owners[co] = task
  local res = pack(coroutine.resume(co, ...))
  while res[1] and coroutine.status(co) == "suspended" do
    res = pack(coroutine.resume(co, coroutine.yield(unpack(res, 2, res.n))))
  end
  owners[co] = nil
  return unpack(res, 1, res.n)
end

-- A task's function runs as the coroutine's body itself, with no pcall around it inside the
-- coroutine: PUC Lua 5.1 cannot yield across pcall, and a task must be able to yield. Its error
-- surfaces from coroutine.resume in run_ready, which gets the traceback from the dead coroutine.
local function new_task(fn, args, on_failure)
  local co = coroutine.create(fn)
  tasks[co] = { on_failure = on_failure }
  live = live + 1
  push_ready(co, unpack(args, 1, args.n))
  return co
end

local function task_ended(co, ok, err)
  local t = tasks[co]
  tasks[co] = nil
  live = live - 1
  if ok then return end
  local msg = debug.traceback(co, tostring(err))
  if t and t.on_failure then
    local ok2, err2 = pcall(t.on_failure, msg)
    if not ok2 then task_failed(err2, tostring(err2)) end
  else
    task_failed(err, msg)
  end
end

--- Run fn(...) in a new task. An error in it goes to the task error hook (M.on_task_error).
---@param fn function
---@return thread
function M.spawn(fn, ...)
  assert(type(fn) == "function", "mcp.spawn: fn must be a function")
  return new_task(fn, pack(...), nil)
end

--- Run a handler in a new task; its error goes to on_failure(message) instead of the caller.
function M.spawn_handler(on_failure, fn, ...)
  return new_task(fn, pack(...), on_failure)
end

-- Resume the task at the head of the queue.
local function resume_next()
  local item = queue[qhead]
  queue[qhead] = nil
  qhead = qhead + 1
  if coroutine.status(item.co) == "suspended" then
    local ok, err = coroutine.resume(item.co, unpack(item.args, 1, item.args.n))
    if coroutine.status(item.co) == "dead" and tasks[item.co] then
      task_ended(item.co, ok, err)
    elseif not ok then
      task_failed(err, debug.traceback(item.co, tostring(err)))
    end
  end
end

-- Queue the tasks waiting to start a server, at the front of the queue (they were ready before
-- any task queued since): all of them for an unpaced run, only the first in line for a new round
-- (the others would only wait again, and stay in line behind it, ahead of any later start).
local function release_deferred(first_only)
  local n = #deferred
  if n == 0 then return end
  if first_only then n = 1 end
  -- each stored before qhead counts it, and taken off deferred once queued: out of memory on the
  -- way leaves no hole in the queue and no task both queued and deferred (resumed twice)
  for i = n, 1, -1 do
    local item = { co = deferred[i], args = pack() }
    queue[qhead - 1] = item
    qhead = qhead - 1
    if first_only then table.remove(deferred, 1) else deferred[i] = nil end
  end
end

--- Starting a server (pipes, the sandbox's ruleset, the helper thread that waits for the child's
--- exec: ~0.2-0.6 ms of the host's thread each, which adds up past the budget) is paced in a host
--- loop: a task that starts a second server in one budgeted step waits for the next step, in line
--- behind the tasks already waiting. Outside a budgeted step (blocking calls, mcp.run(),
--- set_budget(0)) it returns at once, and so does a waiting task resumed there: such a run would
--- otherwise only put it back in line, round after round, and never start it (a blocking wait or
--- mcp.run() spun).
function M.pace_start()
  if not pacing then return end
  local co = M.current()
  if co == nil then return end
  if paced_round == round or deferred[1] ~= nil then
    repeat
      deferred[#deferred + 1] = co
      coroutine.yield()
      if not pacing then return end
    until paced_round ~= round
  end
  paced_round = round
end

--- Resume every queued task once. Task failures go to the task error hook; this never raises
--- them (any waiting call runs it).
function M.run_ready()
  -- unpaced, also when a blocking wait runs inside a budgeted step (a coroutine of the host's
  -- own in a task): the waiting starts may be what it waits for
  local was = pacing
  pacing = false
  if deferred[1] ~= nil then release_deferred() end -- (inline: the blocking path's every round)
  while qhead <= qtail do resume_next() end
  qhead, qtail = 1, 0
  pacing = was
end

-- The work one host step may do, in ms (0: unbounded). A host's frame is bounded by it: tasks
-- still queued when it is spent run on the next step (loop.timeout() is then 0).
local budget_ms = 2
-- The least a step's dispatch may decode of a large message, when the tasks spent the budget.
local MIN_SLICE_MS = 0.25

--- Set the work budget of one mcp.loop.step() (and of the Neovim adapter's step): ms of resumed
--- tasks and handlers per step, the rest queued for the next one, and ms of decoding a large
--- message, the rest decoded in the next steps; 0 removes the bound. Default 2.
--- mcp.run() and blocking calls are not bounded. Returns the previous budget.
---@param ms number
---@return number
function M.set_budget(ms)
  if type(ms) ~= "number" or ms < 0 or ms ~= ms then
    error("mcp.loop.set_budget: ms must be a number >= 0", 2)
  end
  local prev = budget_ms
  budget_ms = ms
  return prev
end

--- The current step budget in ms (0: unbounded).
---@return number
function M.get_budget()
  return budget_ms
end

--- Resume queued tasks until the queue is empty or ms_left ms have passed (at least one task);
--- ms_left nil: the whole budget. Returns the ms left of it (math.huge when unbounded).
---@param ms_left number|nil
---@return number
function M.run_ready_budget(ms_left)
  if budget_ms <= 0 then
    M.run_ready()
    return math.huge
  end
  if ms_left == nil then -- a new step's budget
    round = round + 1
    release_deferred(true)
  end
  local start = core.now_ms()
  local deadline = start + (ms_left or budget_ms)
  local was = pacing
  pacing = true
  while qhead <= qtail do
    resume_next()
    if core.now_ms() >= deadline then break end
  end
  pacing = was
  if qhead > qtail then qhead, qtail = 1, 0 end
  return deadline - core.now_ms()
end

--- One loop iteration: run ready tasks, wait up to timeout_ms for I/O or timers (0 when a task
--- is ready), dispatch, run the tasks that became ready. Returns the number of events.
---@param timeout_ms number|nil default 0; negative waits until something happens
---@return integer
function M.step(timeout_ms)
  raise_held()
  local left = M.run_ready_budget()
  local t = timeout_ms or 0
  if has_ready() then t = 0 end
  -- the dispatch is bounded too: a large message is decoded over several steps (at least a
  -- slice each, however much the tasks took)
  local n = core.step(t, budget_ms > 0 and (left > MIN_SLICE_MS and left or MIN_SLICE_MS) or nil)
  -- the tasks the dispatch woke: what is left of the budget (at least one task when the first
  -- run left some); none when the first run spent it, they run on the next step
  if left > 0 then M.run_ready_budget(left) end
  raise_held()
  return n
end

-- (a shared function: a closure made in loop_block would end every return of it in UCLO, which
-- LuaJIT 2.1's trace compiler cannot compile)
local function noop() end

-- One round of loop_block without a deadline: run ready tasks, else step the loop once (sleeping
-- in the core until an fd or a timer fires). True when pred() holds after it.
local function block_round(pred)
  -- has_ready() written inline: this runs once per message a blocking call waits for
  if qhead <= qtail or deferred[1] ~= nil then -- (run_ready with nothing queued does nothing)
    M.run_ready()
    if pred() then return true end
  end
  local n, alive = core.step((qhead <= qtail or deferred[1] ~= nil) and 0 or -1)
  if n == 0 and not alive and qhead > qtail and not pred() then
    error("mcp: waiting for a result but nothing is in flight (deadlock)", 4)
  end
  return pred()
end

--- How code outside any task waits until pred() holds: run ready tasks and step the loop, each
--- step sleeping in the core until one of its fds or timers fires. With ms it gives up after ms
--- milliseconds; without, it raises when nothing in flight could make pred() true. This is the
--- default of M.block; a host with its own loop replaces M.block (mcp.nvim waits with vim.wait
--- so that Neovim keeps running) and may fall back to this one.
---@param pred fun(): any
---@param ms number|nil
function M.loop_block(pred, ms)
  if ms ~= nil then
    local deadline = core.now_ms() + ms
    local guard = core.timer(ms, noop)
    while not pred() and core.now_ms() < deadline do
      M.run_ready()
      -- A task run just now may have made pred() true: do not sleep until the guard then.
      if pred() then break end
      core.step(has_ready() and 0 or -1)
    end
    guard:cancel()
    return
  end
  -- Most waits end after one round, taken before the loop: a loop here would be an inner loop of
  -- every caller's, which LuaJIT's trace compiler does not follow.
  if pred() or block_round(pred) then return end
  while not block_round(pred) do end
end

--- The blocking wait used by await (outside tasks) and wait_until: fn(pred, ms|nil). Replaceable.
M.block = M.loop_block

--- Set by a host whose M.block may suspend a coroutine that is not a task instead of blocking
--- (mcp.nvim with coroutines = "yield"): fn() -> true when M.block, called where fn is called,
--- would suspend the running coroutine. nil (the default): every wait outside a task blocks.
---@type (fun(): boolean)|nil
M.block_suspends = nil

-- The waiter of every wait that blocks the OS thread (M.waiter).
local BLOCKING = setmetatable({}, { __tostring = function() return "mcp.sched: a blocking wait" end })

--- Who waits when code running here waits: the task (its waits suspend it); a coroutine that is
--- not a task but that the host's wait suspends (M.block_suspends); else one value, the same for
--- every caller whose wait blocks the OS thread: the main thread, a plain coroutine outside any
--- task (or resumed by one), a loop or host callback. Such waits nest: one started while another
--- is under way runs inside that one's wait (a callback the loop, vim.wait or a task ran
--- meanwhile), and the outer one cannot return before it, so they are one waiter.
---@return thread|table
function M.waiter()
  local task = M.current()
  if task ~= nil then return task end
  local co, ismain = coroutine.running()
  if co ~= nil and not ismain and M.block_suspends ~= nil and M.block_suspends() then return co end
  return BLOCKING
end

--- Wait for start(cb) to call cb(...) and return its arguments. In a task this suspends the task;
--- elsewhere it runs the loop until cb fires. cb may be called synchronously.
function M.await(start)
  local co = M.current()
  if co ~= nil then
    local fired = false
    start(function(...)
      if fired then return end
      push_ready(co, ...) -- (before fired: a wake-up that could not be queued is not taken as made)
      fired = true
    end)
    return coroutine.yield()
  end
  local done, res = false, nil
  start(function(...)
    if done then return end
    done = true
    res = pack(...)
  end)
  if not done then M.block(function() return done end) end
  -- Handlers queued by the same read (progress, notifications) run before the caller goes on,
  -- as they would for a task, which is resumed after them.
  M.run_ready()
  return unpack(res, 1, res.n)
end

-- Waiters of await_call outside tasks: a completion function whose (at most 9) arguments are kept
-- in upvalues, a predicate for M.block, and take() to read them back. A waiter goes back to
-- `spare` once its completion ran and was read, so a blocking call allocates nothing for it.
local spare, nspare = {}, 0

local function new_waiter()
  local done, r1, r2, r3, r4, r5, r6, r7, r8, r9 = false, nil, nil, nil, nil, nil, nil, nil, nil, nil
  local w = {}
  w.cb = function(a, b, c, d, e, f, g, h, i)
    if done then return end
    done = true
    r1, r2, r3, r4, r5, r6, r7, r8, r9 = a, b, c, d, e, f, g, h, i
  end
  w.done = function() return done end
  w.take = function()
    local a, b, c, d, e, f, g, h, i = r1, r2, r3, r4, r5, r6, r7, r8, r9
    done, r1, r2, r3, r4, r5, r6, r7, r8, r9 = false, nil, nil, nil, nil, nil, nil, nil, nil, nil
    return a, b, c, d, e, f, g, h, i
  end
  return w
end

-- await_call inside a task: the completion closes over co here, not in await_call (a function
-- whose locals a closure captures ends in UCLO, which LuaJIT 2.1's trace compiler cannot compile,
-- so every blocking call would leave compiled code).
local function await_call_in_task(co, start, a1, a2, a3, a4, a5, a6, a7, a8, a9)
  local fired = false
  start(function(...)
    if fired then return end
    push_ready(co, ...) -- (as in await)
    fired = true
  end, a1, a2, a3, a4, a5, a6, a7, a8, a9)
  return coroutine.yield()
end

--- await for a start function that takes its state as arguments: start(cb, a1, ..., a9) is
--- called with the (at most 9) extra arguments, always nine (nil past the ones given), so the
--- caller needs no closure per call. Returns
--- the first 9 arguments cb was called with (always 9 values outside a task; inside a task, cb's
--- arguments as await does). (Fixed parameters, not `...`: LuaJIT compiles no vararg call here.)
---@param start fun(cb: function, ...)
---@return any, any, any, any, any, any, any, any, any
function M.await_call(start, a1, a2, a3, a4, a5, a6, a7, a8, a9)
  local co = M.current()
  if co ~= nil then return await_call_in_task(co, start, a1, a2, a3, a4, a5, a6, a7, a8, a9) end
  local w
  if nspare > 0 then
    w = spare[nspare]
    spare[nspare] = nil
    nspare = nspare - 1
  else
    w = new_waiter()
  end
  local done = w.done
  start(w.cb, a1, a2, a3, a4, a5, a6, a7, a8, a9)
  if not done() then M.block(done) end
  -- as in await: handlers queued by the same read run before the caller goes on
  if qhead <= qtail then M.run_ready() end
  local r1, r2, r3, r4, r5, r6, r7, r8, r9 = w.take()
  -- only a waiter whose completion ran is reused (one left by an error above is dropped)
  spare[nspare + 1] = w -- (stored before it is counted: no hole that the next call would take)
  nspare = nspare + 1
  return r1, r2, r3, r4, r5, r6, r7, r8, r9
end

--- Sleep ms milliseconds without blocking other tasks (blocks the caller outside a task).
---@param ms number
function M.sleep(ms)
  M.await(function(cb) core.timer(ms, cb) end)
end

--- Should a close() finish in the background instead of waiting? True inside a task and when a
--- host drives the loop (M.block replaced, as mcp.nvim does): waiting there would stall the
--- host's frame, while the loop reaps the server and ends the DELETE on its next steps.
---@return boolean
function M.in_host_loop()
  return M.current() ~= nil or M.block ~= M.loop_block
end

--- Outside a task: run the loop until pred() holds or ms elapse; returns pred(). Event-driven:
--- each step sleeps until an fd or timer of the loop fires. Inside a task it does not wait.
function M.wait_until(pred, ms)
  if M.current() then return pred() end
  M.block(pred, ms)
  return pred()
end

--- Run until every task has finished and every server being stopped is reaped. Raises what the
--- task error hook raised (with the default hook, task failures are only reported), and raises
--- when the tasks left wait for nothing in flight (a weak timer, as the legacy SSE client's
--- background tries wait on once their first `max_reconnects` failed, is not waited for). An
--- error that escapes a loop callback (out of memory while one is reported) ends the run raised;
--- the loop stays usable and the next mcp.run() goes on with the tasks left.
function M.run()
  while true do
    M.run_ready()
    raise_held()
    if live == 0 and not has_ready() and core.stopping() == 0 then return end
    local n, alive = core.step(has_ready() and 0 or -1)
    if n == 0 and not alive and not has_ready() and core.stopping() == 0 then
      M.run_ready()
      raise_held()
      if live > 0 then
        error("mcp.run: " .. live .. " task(s) wait for something that is not in flight", 2)
      end
      return
    end
  end
end

--- Number of tasks not finished.
function M.live()
  return live
end

--- Host integration: the pollable fd, the timeout to sleep at most, and step(0).
M.loop = {
  fd = core.fd,
  --- ms until the loop needs a step (0 when tasks are ready), -1 when nothing is armed
  timeout = function()
    if has_ready() then return 0 end
    return core.timeout()
  end,
  --- Run one step of the loop: wait at most timeout_ms (default 0) for an fd or a timer, then
  --- resume the tasks that are ready. An error that escapes a loop callback (out of memory while
  --- one is reported) is raised from the step, which ends there; the next step goes on.
  ---@param timeout_ms number|nil
  step = function(timeout_ms) return M.step(timeout_ms or 0) end,
  --- Bound the work of one step to ms (default 2; 0: unbounded); returns the previous bound.
  ---@param ms number
  ---@return number
  set_budget = function(ms)
    if type(ms) ~= "number" or ms < 0 or ms ~= ms then
      error("mcp.loop.set_budget: ms must be a number >= 0", 2)
    end
    return M.set_budget(ms)
  end,
  --- Apply the process-wide settings that keep a PUC Lua host's frames near the budget when large
  --- results are swept: Lua 5.4's collector incremental with 2^step_size-byte steps (default 10),
  --- glibc's malloc without fastbins (docs/GAMELOOPS.md). The host's choice; returns what was done.
  ---@param opts {collector: boolean|nil, malloc: boolean|nil, step_size: integer|nil}|nil
  ---@return {collector: string, malloc: string}
  tune_for_frames = function(opts)
    local done = require("mcp.frame_tuning").apply(opts) -- not a tail call: errors name the caller
    return done
  end,
  --- Something is waiting: a watch, a timer, a ready or suspended task (not a weak watch or
  --- timer: an idle kept-alive connection, the legacy SSE client's background tries past
  --- max_reconnects).
  ---@return boolean
  alive = function() return core.alive() or has_ready() or live > 0 end,
}

return M
