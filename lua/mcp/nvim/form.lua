--- mcp.nvim.form: an elicitation as one form in a floating buffer. Each field is a line
--- `name: value` (the default filled in, choices listed above it); `:w` submits, `q` cancels,
--- `:Decline` declines. Every field is checked (mcp.elicitation.parse_answer); a wrong one is
--- marked in the buffer and the form stays open with the other answers kept. URL mode, and
--- Neovim without floating windows, go to mcp.elicitation.nvim's vim.ui handler.
local elicitation = require("mcp.elicitation")
local sched = require("mcp.sched")

local M = {}

local HEADER = "# :w submits, q cancels, :Decline declines"

local function hint(f)
  local parts = {}
  if f.required then parts[#parts + 1] = "required" end
  if f.type then parts[#parts + 1] = tostring(f.type) end
  if f.choices then
    local labels = {}
    for i, c in ipairs(f.choices) do labels[i] = tostring(c.value) end
    parts[#parts + 1] = (f.multiple and "some of: " or "one of: ") .. table.concat(labels, ", ")
  end
  if f.description then parts[#parts + 1] = f.description end
  return "# " .. (f.title or f.name) .. " (" .. table.concat(parts, "; ") .. ")"
end

local function value_text(v)
  if v == nil then return "" end
  if type(v) == "table" then
    local out = {}
    for i, x in ipairs(v) do out[i] = tostring(x) end
    return table.concat(out, ", ")
  end
  return tostring(v)
end

--- The form's lines for a request: the message, then per field a hint line and `name: value`.
---@param message string
---@param fields table[] mcp.elicitation.fields()
---@return string[]
function M.lines(message, fields)
  local lines = {}
  for l in (tostring(message) .. "\n"):gmatch("(.-)\r?\n") do lines[#lines + 1] = "# " .. l end
  lines[#lines + 1] = HEADER
  for _, f in ipairs(fields) do
    lines[#lines + 1] = hint(f)
    lines[#lines + 1] = f.name .. ": " .. value_text(f.default)
  end
  return lines
end

--- Read the answers from the form's lines: content, or nil and {name = message} for the wrong ones.
---@param lines string[]
---@param fields table[]
---@return table|nil content, table|nil errors
function M.parse(lines, fields)
  local text = {}
  for _, l in ipairs(lines) do
    local name, v = l:match("^([^#:%s][^:]*):%s?(.*)$")
    if name then text[name] = v end
  end
  local content, errs = {}, nil
  for _, f in ipairs(fields) do
    local t = text[f.name] or ""
    if t:match("^%s*$") then
      if f.required then errs = errs or {}; errs[f.name] = "required" end
    else
      local v, err = elicitation.parse_answer(f, t)
      if v == nil then errs = errs or {}; errs[f.name] = err else content[f.name] = v end
    end
  end
  if errs then return nil, errs end
  return content
end

local NS = vim.api.nvim_create_namespace("mcp_form")

local function mark(buf, errs)
  vim.api.nvim_buf_clear_namespace(buf, NS, 0, -1)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local name = l:match("^([^#:%s][^:]*):")
    if name and errs[name] then
      vim.api.nvim_buf_set_extmark(buf, NS, i - 1, 0,
        { virt_text = { { "  ! " .. errs[name], "ErrorMsg" } }, virt_text_pos = "eol" })
    end
  end
end

--- Open the form; done(result) gets mcp.elicitation.accept(content), decline() or cancel().
---@param req table an elicitation request (message, requested_schema)
---@param done fun(result: table)
---@return integer buf
function M.open(req, done)
  local fields = elicitation.fields(req.requested_schema)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "mcp://elicitation/" .. buf)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  local message = (req.message or "") .. (req.server and ("\n(asked by the server " .. tostring(req.server) .. ")") or "")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(message, fields))
  vim.bo[buf].modified = false
  local width = math.min(100, vim.o.columns - 4)
  local height = math.min(vim.api.nvim_buf_line_count(buf), vim.o.lines - 4)
  local win = vim.api.nvim_open_win(buf, true, { relative = "editor", width = width, height = height,
    row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2),
    style = "minimal", border = "rounded" })
  local finished = false
  local function finish(result)
    if finished then return end
    finished = true
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_close(win, true) end
    done(result)
  end
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = function()
    local content, errs = M.parse(vim.api.nvim_buf_get_lines(buf, 0, -1, false), fields)
    if not content then
      mark(buf, errs)
      return vim.notify("MCP: fix the marked fields", vim.log.levels.WARN)
    end
    vim.bo[buf].modified = false
    finish(elicitation.accept(content))
  end })
  vim.api.nvim_create_autocmd("BufWipeout", { buffer = buf, callback = function() finish(elicitation.cancel()) end })
  vim.keymap.set("n", "q", function() finish(elicitation.cancel()) end, { buffer = buf, nowait = true })
  vim.api.nvim_buf_create_user_command(buf, "Decline", function() finish(elicitation.decline()) end, {})
  return buf
end

--- An elicitation handler: the form for form mode, mcp.elicitation.nvim's handler for URL mode
--- (and where floating windows are missing).
---@param opts table|nil passed to the vim.ui handler
---@return fun(req: table): table
function M.handler(opts)
  local fallback = require("mcp.elicitation.nvim").handler(opts)
  return function(req)
    if req.mode == "url" or vim.api.nvim_open_win == nil then return fallback(req) end
    return sched.await(function(cb)
      vim.schedule(function() M.open(req, cb) end)
    end)
  end
end

return M
