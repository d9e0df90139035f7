--- The Neovim elicitation handler: vim.ui.select for booleans, choices and the URL consent,
--- vim.ui.input for the rest (so dressing.nvim, snacks.nvim or telescope-ui-select restyle it).
---
---   client:on_elicitation_request(mcp.elicitation.nvim_handler())
---
--- Handlers run in an mcp task; each prompt suspends the task and resumes it from the
--- vim.ui callback, so Neovim stays responsive. The host must drive lua-mcp's loop (poll
--- mcp.loop.fd(), call mcp.loop.step(0)), as for any waiting call in Neovim. <Esc> at any prompt
--- cancels the request. Fields come in the server's property order, and an answer that does not
--- fit its field's schema (parse_answer, check_answer) is asked again at once. opts.open_url(url) opens the URL in URL mode (default vim.ui.open when it
--- exists); opts.vim replaces the global vim (tests).
local elicitation = require("mcp.elicitation")
local sched = require("mcp.sched")

local M = {}

-- An asker's answer when the user pressed <Esc>: the whole request is cancelled.
local CANCEL = {}

-- vim.ui must be called from the main loop, never from a fast (libuv) callback: schedule it,
-- and resume our task from another scheduled callback.
local function ui_of(vim)
  local ui = {}
  function ui.input(prompt, default)
    return sched.await(function(cb)
      vim.schedule(function()
        vim.ui.input({ prompt = prompt, default = default }, function(v)
          cb(v)
          vim.schedule(sched.run_ready)
        end)
      end)
    end)
  end
  function ui.select(items, prompt, format)
    return sched.await(function(cb)
      vim.schedule(function()
        vim.ui.select(items, { prompt = prompt, format_item = format }, function(item, idx)
          cb(item, idx)
          vim.schedule(sched.run_ready)
        end)
      end)
    end)
  end
  function ui.warn(msg)
    vim.notify("MCP: " .. msg, vim.log and vim.log.levels and vim.log.levels.WARN or nil)
  end
  return ui
end

local function choice_label(c) return c.label end

-- Each asker returns the field's value, nil to leave it out, or CANCEL.
local function ask_boolean(ui, f, label)
  local items = { "Yes", "No" }
  if not f.required then items[3] = "(skip)" end
  local _, idx = ui.select(items, label)
  if idx == nil then return CANCEL end
  if idx == 1 then return true elseif idx == 2 then return false end
  return nil
end

local function ask_choice(ui, f, label)
  local items = {}
  for i, c in ipairs(f.choices) do items[i] = c end
  if not f.required then items[#items + 1] = { label = "(skip)" } end
  local item = ui.select(items, label, choice_label)
  if item == nil then return CANCEL end
  return item.value
end

-- One round of picks until "(done)" or max_items: the picked values, or CANCEL.
local function pick_round(ui, f, label)
  local picked = require("mcp.json").array()
  local left = {}
  for i, c in ipairs(f.choices) do left[i] = c end
  while #left > 0 and (f.max_items == nil or #picked < f.max_items) do
    local items = { { label = "(done)" } }
    for _, c in ipairs(left) do items[#items + 1] = c end
    local item, idx = ui.select(items, label .. " (" .. #picked .. " chosen)", choice_label)
    if item == nil then return CANCEL end
    if idx == 1 then break end
    picked[#picked + 1] = item.value
    table.remove(left, idx - 1)
  end
  return picked
end

-- Pick until "(done)"; a selection the field's schema refuses (minItems, ...) is asked again.
local function ask_choices(ui, f, label)
  while true do
    local picked = pick_round(ui, f, label)
    if picked == CANCEL then return CANCEL end
    if #picked == 0 and not f.required then return nil end
    local ok, err = elicitation.check_answer(f, picked)
    if ok then return picked end
    ui.warn(err)
  end
end

-- Free text, parsed for the field's type; an answer that does not parse is asked again.
local function ask_text(ui, f, label)
  while true do
    local default = f.default ~= nil and tostring(f.default) or nil
    local text = ui.input(label .. ": ", default)
    if text == nil then return CANCEL end
    if text == "" and not f.required then return nil end
    local v, err = elicitation.parse_answer(f, text)
    if v ~= nil then return v end
    ui.warn(err)
  end
end

local function ask_field(ui, f)
  local label = (f.title or f.name) .. (f.description and (" - " .. f.description) or "")
  if f.type == "boolean" and not f.choices then return ask_boolean(ui, f, label) end
  if f.choices and not f.multiple then return ask_choice(ui, f, label) end
  if f.choices then return ask_choices(ui, f, label) end
  return ask_text(ui, f, label)
end

-- "[server] " before a prompt: the user sees which server asks.
local function from(req)
  return req.server and ("[" .. tostring(req.server) .. "] ") or ""
end

-- URL mode: consent to open the URL.
local function url_mode(ui, req, opts, vim)
  local _, idx = ui.select({ "Open the URL and continue", "Decline", "Cancel" },
    from(req) .. tostring(req.message) .. " (" .. tostring(req.url) .. ", host " .. tostring(req.url_host)
      .. (req.url_punycode and ", an internationalized name: it may imitate another host" or "") .. ")")
  if idx == 1 then
    -- vim.ui.open hands any scheme to the system's opener: only http(s) goes to the browser
    local web = type(req.url) == "string" and req.url:lower():match("^https?://") ~= nil
    local open = opts.open_url or (web and vim.ui.open and function(u) vim.ui.open(u) end)
    local ok, r = false, nil
    if open then ok, r = pcall(open, req.url) end
    if not ok or r == false then ui.warn("open it in your browser: " .. tostring(req.url)) end
    return elicitation.accept()
  end
  return idx == 2 and elicitation.decline() or elicitation.cancel()
end

--- Build a Neovim handler.
---@param opts table|nil open_url, vim
---@return fun(req: table): table
function M.handler(opts)
  opts = opts or {}
  return function(req)
    local vim = opts.vim or _G.vim
    if vim == nil or vim.ui == nil then error("mcp.elicitation.nvim_handler: not running inside Neovim", 0) end
    local ui = ui_of(vim)
    if req.mode == "url" then return url_mode(ui, req, opts, vim) end
    local _, first = ui.select({ "Answer", "Decline", "Cancel" }, from(req) .. tostring(req.message))
    if first == 2 then return elicitation.decline() end
    if first ~= 1 then return elicitation.cancel() end
    local content = {}
    for _, f in ipairs(elicitation.fields(req.requested_schema)) do
      local v = ask_field(ui, f)
      if v == CANCEL then return elicitation.cancel() end
      if v ~= nil then content[f.name] = v end
    end
    return elicitation.accept(content)
  end
end

return M
