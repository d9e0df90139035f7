--- Neovim host adapter: drives lua-mcp from Neovim's own event loop.
---
---   require("mcp").setup_nvim()        -- or require("mcp.nvim").setup(opts)
---
--- After setup:
--- * a `vim.uv` (`vim.loop` before Neovim 0.10) poll handle watches the core's fd (`mcp.loop.fd()`),
---   a uv timer is re-armed from the core's next timer after every step, and a prepare handle picks
---   up work created between steps (mcp.spawn from a command, a new request's timeout);
--- * loop callbacks only step the core (C callbacks queue results, no user code runs there); tasks
---   and handlers (progress, notifications, elicitation, on_error, ...) then run from a
---   `vim.schedule` callback, where every Neovim API may be used;
--- * inside a task (`mcp.spawn(fn)`) a waiting call suspends the task;
--- * outside a task (a command, a keymap, a plain coroutine) a waiting call waits with `vim.wait`,
---   which keeps Neovim's loop, UI and timers running until the answer (or the request's timeout)
---   arrives; an interrupt that vim.wait reports (<C-c>; Neovim 0.7 does not report it) raises an
---   error. From a fast callback (a luv callback, where vim.wait is not allowed) it falls back to
---   stepping the core, which blocks Neovim for that call: use mcp.spawn there;
--- * with `coroutines = "yield"`, a call from a bare coroutine that is not a task suspends that
---   coroutine (it yields nothing to whoever resumed it and is resumed from a vim.schedule callback
---   when the answer is in); leave the default "wait" for coroutines owned by async libraries
---   (plenary.async, nvim-nio), which give their own meaning to a yield;
--- * `vim.NIL` encodes as JSON null; decoded null is `mcp.null` (the light userdata NULL, equal to
---   cjson.null and understood by vim.json.encode), not vim.NIL.
local M = {}

local function file_exists(path)
  local fh = io.open(path, "rb")
  if fh then fh:close() end
  return fh ~= nil
end

-- The checkout this file sits in (…/lua/mcp/nvim.lua), or nil when installed elsewhere.
local function source_root()
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) ~= "@" then return nil end
  return src:sub(2):match("^(.*)/lua/mcp/nvim%.lua$")
end

--- The build directory matching the running Lua ABI: "luajit" under LuaJIT, "5.1" under PUC
--- Lua 5.1, nil otherwise (Neovim's Lua is always one of those two; a 5.x build never loads).
---@return string|nil
function M.abi()
  if rawget(_G, "jit") ~= nil then return "luajit" end
  if _VERSION == "Lua 5.1" then return "5.1" end
  return nil
end

--- Make `mcp.core` loadable when neither the runtimepath (`lua/mcp/core.so`, placed by `make nvim`)
--- nor package.cpath has it: use `<checkout>/build/<abi>/mcp/core.so` of the checkout this file
--- is in, for this Lua's ABI only. Returns the directory added to package.cpath, if any.
---@return string|nil
function M.find_core()
  if package.loaded["mcp.core"] ~= nil then return nil end
  local vim = rawget(_G, "vim")
  if vim and vim.api and #vim.api.nvim_get_runtime_file("lua/mcp/core.so", false) > 0 then return nil end
  if package.searchpath and package.searchpath("mcp.core", package.cpath) then return nil end
  local root, abi = source_root(), M.abi()
  if root == nil or abi == nil then return nil end
  local dir = root .. "/build/" .. abi
  if not file_exists(dir .. "/mcp/core.so") then return nil end
  package.cpath = dir .. "/?.so;" .. package.cpath
  return dir
end

local state = nil -- set while the adapter runs

local function default_report(msg)
  local vim = _G.vim
  vim.notify("mcp: " .. tostring(msg), vim.log.levels.ERROR)
end

--- Start driving lua-mcp from Neovim's loop (idempotent; a second call updates the options).
---@param opts? { coroutines?: "wait"|"yield", interval?: integer, on_error?: fun(msg: string), poll_ms?: integer }
---  coroutines: how a waiting call behaves in a coroutine that is not an mcp task (default "wait");
---  interval: vim.wait's condition re-check period in ms (default 50; events wake it anyway);
---  on_error: receives failures of tasks and of the loop (default: vim.notify at ERROR level);
---  poll_ms: step period where the core has no pollable fd (non-epoll builds; default 10).
---@return table the adapter (this module)
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("mcp.nvim.setup: opts must be a table", 2) end
  local vim = rawget(_G, "vim")
  if vim == nil or vim.api == nil then error("mcp.nvim.setup: not running inside Neovim", 2) end
  if opts.coroutines ~= nil and opts.coroutines ~= "wait" and opts.coroutines ~= "yield" then
    error('mcp.nvim.setup: coroutines must be "wait" or "yield"', 2)
  end
  local cfg = {
    coroutines = opts.coroutines or "wait",
    interval = opts.interval or 50,
    on_error = opts.on_error or default_report,
    poll_ms = opts.poll_ms or 10,
  }
  if state then
    state.cfg = cfg
    return M
  end

  M.find_core()
  local core = require("mcp.core")
  local sched = require("mcp.sched")
  local json = require("mcp.json")
  local uv = vim.uv or vim.loop
  local yieldable = coroutine.isyieldable
  local WAIT_MAX = 0x7fffffff

  local st = { cfg = cfg, waiting = setmetatable({}, { __mode = "k" }) }
  state = st
  local waiting = st.waiting
  local flush_scheduled = false
  local armed_at = nil -- the core-clock time the uv timer fires at
  local fd = core.fd()
  local dispatch, flush

  -- From a fast callback: report through vim.schedule; from the main loop: at once.
  local function report(msg)
    if vim.in_fast_event() then
      vim.schedule(function() st.cfg.on_error(msg) end)
    else
      st.cfg.on_error(msg)
    end
  end

  local function schedule_flush()
    if flush_scheduled or state ~= st then return end
    flush_scheduled = true
    vim.schedule(flush)
  end

  -- Re-arm the uv timer for the core's next timer (or poll_ms without a pollable fd).
  local function arm_timer()
    if state ~= st then return end
    local t = core.timeout()
    if fd == nil and core.alive() and (t < 0 or t > st.cfg.poll_ms) then t = st.cfg.poll_ms end
    if t < 0 then
      if armed_at ~= nil then st.timer:stop(); armed_at = nil end
      return
    end
    t = math.ceil(t)
    local due = core.now_ms() + t
    if armed_at ~= due then
      uv.update_time()
      st.timer:stop()
      st.timer:start(t, 0, function() armed_at = nil; dispatch() end)
      armed_at = due
    end
  end

  local function after_step()
    arm_timer()
    if sched.has_ready() or next(waiting) ~= nil then schedule_flush() end
  end

  -- Loop callbacks (fast context): step the core once; no user code runs here. A large message
  -- is decoded within the step budget, the rest on the next dispatch (core.timeout() is then 0).
  dispatch = function()
    if state ~= st then return end
    local budget = sched.get_budget()
    local ok, err = pcall(core.step, 0, budget > 0 and budget or nil)
    if not ok then report(err) end
    after_step()
  end

  local function resume_waiting()
    local ready = {}
    for co, cond in pairs(waiting) do ready[#ready + 1] = { co, cond } end
    for i = 1, #ready do
      local co, cond = ready[i][1], ready[i][2]
      if waiting[co] == cond and coroutine.status(co) == "suspended" and cond() then
        waiting[co] = nil
        local ok, err = coroutine.resume(co)
        if not ok then report(debug.traceback(co, tostring(err))) end
      end
    end
  end

  -- Main loop (vim.schedule): run the tasks and handlers that are ready, resume coroutines whose
  -- call has its answer, then re-arm.
  flush = function()
    flush_scheduled = false
    if state ~= st then return end
    -- task failures go to the task error hook (report, installed below); bounded by the step
    -- budget (mcp.loop.set_budget), what is left is flushed on the next scheduled callback
    sched.run_ready_budget()
    resume_waiting()
    arm_timer()
    if sched.has_ready() then schedule_flush() end
  end

  local function wait_block(pred, ms)
    after_step() -- start() may have armed a timer or readied a task
    local deadline = ms and core.now_ms() + ms
    local function cond()
      return pred() or (deadline ~= nil and core.now_ms() >= deadline)
    end
    while true do
      local left = deadline and math.max(0, math.ceil(deadline - core.now_ms())) or WAIT_MAX
      local ok, code = vim.wait(left, cond, st.cfg.interval)
      if ok or deadline ~= nil then return end
      if code == -2 then error("mcp: interrupted while waiting for an answer", 0) end
    end
  end

  local function yield_block(co, pred, ms)
    local deadline = ms and core.now_ms() + ms
    local function cond()
      return pred() or (deadline ~= nil and core.now_ms() >= deadline)
    end
    if cond() then return end
    local t
    if deadline then
      t = uv.new_timer()
      t:start(math.ceil(ms), 0, function() t:close(); t = nil; schedule_flush() end)
    end
    waiting[co] = cond
    after_step()
    repeat coroutine.yield() until cond()
    waiting[co] = nil
    if t then t:stop(); t:close() end
  end

  -- The coroutine a wait here suspends (coroutines = "yield": a plain coroutine that can yield,
  -- outside a fast callback), else nil: the wait blocks (vim.wait, or the core's step).
  local function suspended_here()
    if st.cfg.coroutines ~= "yield" or not yieldable or vim.in_fast_event() then return nil end
    local co, ismain = coroutine.running()
    if co ~= nil and not ismain and yieldable() then return co end
    return nil
  end

  -- sched.block: how code outside a task waits.
  st.block = function(pred, ms)
    if vim.in_fast_event() then return sched.loop_block(pred, ms) end
    local co = suspended_here()
    if co ~= nil then return yield_block(co, pred, ms) end
    return wait_block(pred, ms)
  end
  -- sched.block_suspends: whether st.block would suspend the running coroutine (sched.waiter)
  st.block_suspends = function() return suspended_here() ~= nil end

  st.timer = uv.new_timer()
  st.prepare = uv.new_prepare()
  -- Before Neovim's loop sleeps: a timer or a ready task created by code outside our callbacks
  -- (a command that spawns a task or sends a request) gets its step. Waiting coroutines are
  -- looked at only after a step (or their deadline), so an idle loop stays idle.
  st.prepare:start(function()
    if state ~= st then return end
    arm_timer()
    if sched.has_ready() then schedule_flush() end
  end)
  if fd ~= nil then
    st.poll = uv.new_poll(fd)
    st.poll:start("r", function(err)
      if err then report("polling the mcp loop fd failed: " .. tostring(err)) end
      dispatch()
    end)
  end
  st.previous_block = sched.block
  sched.block = st.block
  st.previous_block_suspends = sched.block_suspends
  sched.block_suspends = st.block_suspends
  json.set_null_alias(vim.NIL)
  -- Task failures go to on_error (unless the host installs its own hook after setup).
  st.task_hook = function(_, traceback) report(traceback) end
  st.previous_task_hook = sched.on_task_error(st.task_hook)
  after_step()
  return M
end

--- A copy of a decoded value for Neovim's own converters (vim.fn.*, vim.json.encode, vim.api):
--- `mcp.null` becomes `vim.NIL` (Neovim 0.7's vim.json.encode writes invalid JSON for the light
--- userdata NULL and vim.fn refuses it) and an empty object becomes `vim.empty_dict()`.
---@param v any
---@return any
function M.to_vim(v)
  local vim = _G.vim
  local core = require("mcp.core")
  if v == core.null then return vim.NIL end
  if type(v) ~= "table" then return v end
  local is_array = getmetatable(v) == core.array_mt
  if next(v) == nil then
    if is_array then return {} end
    return vim.empty_dict()
  end
  local out = {}
  for k, x in pairs(v) do out[k] = M.to_vim(x) end
  return out
end

local progress_count = 0

--- One notification for the progress of a call, updated in place and closed at the end, instead of
--- one popup per notifications/progress. Each update passes the same `id` (snacks.nvim, fidget,
--- noice) and `replace` = the record the previous vim.notify returned (nvim-notify), with
--- `timeout = false` and `hide_from_history = true`; `finish` shows the last message with the
--- notifier's own timeout and keeps it in the history. Plain Neovim echoes each update on the
--- message line. Call from the main loop or an mcp task (as handlers run under mcp.nvim).
---
---   local p = require("mcp.nvim").progress("search")
---   local res, err = client:call_tool("search", args, { on_progress = p.on_progress })
---   p.finish(res and "done" or tostring(err), res and vim.log.levels.INFO or vim.log.levels.ERROR)
---@param title string shown before each update ("title: 3/10 message")
---@param opts table|nil level (default INFO), vim (replaces the global vim: tests)
---@return {on_progress: fun(params: table), update: fun(message: string, level: integer|nil), finish: fun(message: string|nil, level: integer|nil)}
function M.progress(title, opts)
  if type(title) ~= "string" then error("mcp.nvim.progress: title must be a string", 2) end
  opts = opts or {}
  local vim = opts.vim or _G.vim
  progress_count = progress_count + 1
  local id = "mcp-progress-" .. progress_count
  local level = opts.level or (vim.log and vim.log.levels and vim.log.levels.INFO)
  local record, finished = nil, false
  local function show(msg, lvl, final)
    local o = { id = id, title = title, replace = record, hide_from_history = not final }
    if not final then o.timeout = false end
    local r = vim.notify(msg, lvl or level, o)
    if type(r) == "table" then record = r end
  end
  local p = {}
  function p.on_progress(params)
    if finished or type(params) ~= "table" then return end
    local json = require("mcp.json")
    local text = title .. ": " .. (type(params.progress) == "number" and json.encode(params.progress) or "?")
    if type(params.total) == "number" then text = text .. "/" .. json.encode(params.total) end
    if type(params.message) == "string" and params.message ~= "" then text = text .. " " .. params.message end
    show(text, nil, false)
  end
  --- A step of something that is not a call with progress (a login): the message replaces the
  --- notification's text.
  function p.update(message, lvl)
    if finished then return end
    show(title .. ": " .. tostring(message), lvl, false)
  end
  function p.finish(message, lvl)
    if finished then return end
    finished = true
    show(title .. ": " .. (message or "done"), lvl, true)
  end
  return p
end

--- Whether the adapter is driving lua-mcp.
---@return boolean
function M.is_active()
  return state ~= nil
end

--- Stop driving lua-mcp from Neovim's loop: close the handles, restore the blocking wait and the
--- null alias. Clients stay open (a blocking call then steps the core itself).
function M.stop()
  local st = state
  if st == nil then return end
  state = nil
  local sched = require("mcp.sched")
  if sched.block == st.block then sched.block = st.previous_block end
  if sched.block_suspends == st.block_suspends then sched.block_suspends = st.previous_block_suspends end
  local hook = sched.on_task_error(st.previous_task_hook)
  if hook ~= st.task_hook then sched.on_task_error(hook) end -- the host replaced ours: keep theirs
  require("mcp.json").set_null_alias(nil)
  for _, h in ipairs({ st.poll, st.timer, st.prepare }) do
    if h and not h:is_closing() then h:close() end
  end
end

return M
