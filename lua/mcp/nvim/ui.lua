--- mcp.nvim.ui: the plugin's questions and output (vim.ui.select asked and waited for, scratch
--- buffers, JSON shown indented). Shared by mcp.nvim.plugin; usable on its own.
local M = {}

local json = require("mcp.json")

--- Ask with vim.ui.select and wait (pumping Neovim's loop) for the answer. A vim.ui.select that
--- answers later (telescope, dressing, snacks) works too. Returns the chosen item's index or nil.
---@param prompt string
---@param items string[]
---@param timeout_ms integer|nil default: no limit (until answered or cancelled)
---@return integer|nil
function M.choose(prompt, items, timeout_ms)
  local done, answer = false, nil
  vim.ui.select(items, { prompt = prompt }, function(_, idx)
    answer, done = idx, true
  end)
  vim.wait(timeout_ms or 0x7fffffff, function() return done end, 20)
  return answer
end

--- A `trust(entry, source)` hook for mcp.config.load / mcp.hub asking through vim.ui.select:
--- no (the first item), once, yes (remembered for this file's content).
---@return fun(entry: table, source: string|nil): boolean|string
function M.trust_hook()
  return function(entry, source)
    -- what it runs and also its cwd, env (NODE_OPTIONS, LD_PRELOAD...), envFile, headers
    local what = table.concat(require("mcp.config.trust").describe(entry), "; ")
    local prompt = ("%s is not in your own configuration. Server '%s' wants to %s. Start it?"):format(
      tostring(source or "this configuration"), tostring(entry.name), what)
    -- No first: what Enter takes in most pickers (telescope, dressing, snacks) must not trust.
    local i = M.choose(prompt:gsub("[%c]", " "), { "No", "Once", "Yes (remember for this file)" })
    if i == 3 then return true end
    if i == 2 then return "once" end
    return false
  end
end

--- An `approve(call)` hook for mcp.hub asking before a tool runs: allow once, always for this
--- tool (this session), deny.
---@return fun(call: table): string
function M.approve_hook()
  return function(call)
    local args = json.encode(call.arguments or json.object())
    if #args > 200 then args = args:sub(1, 200) .. "…" end
    local hints = ""
    local a = call.annotations or {}
    if a.destructiveHint == true then hints = " (destructive)" elseif a.readOnlyHint == true then hints = " (read-only)" end
    local prompt = ("Run tool %s of server %s%s with %s?"):format(call.tool, call.server, hints, args)
    local i = M.choose(prompt:gsub("[%c]", " "), { "Allow once", "Always allow this tool", "Deny" })
    if i == 1 then return "allow" end
    if i == 2 then return "always" end
    return "deny", "denied in Neovim"
  end
end

--- An `ask(held)` for mcp.tools.pin_store's hooks: each tool held back (its definition changed
--- since it was pinned, or it was never pinned with first_use = "hold") is asked about with
--- vim.ui.select, Deny first. Returns the names the user allowed (they are pinned anew).
---@return fun(held: table[]): string[]
function M.pins_ask()
  return function(held)
    local yes = {}
    for _, h in ipairs(held) do
      local why = h.reason == "new" and "was never approved"
        or h.reason == "changed" and "changed since it was approved (description, input schema or title)"
        or "cannot be checked"
      local prompt = ("Tool %s of server %s %s. Allow its definition as it is now?"):format(
        tostring(h.tool and h.tool.name or h.name), tostring(h.server), why)
      -- Deny first: what Enter takes in most pickers must not let a changed tool through.
      if M.choose(prompt:gsub("[%c]", " "), { "Deny", "Allow (pin the new definition)" }) == 2 then
        yes[#yes + 1] = h.name
      end
    end
    return yes
  end
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end
M.sorted_keys = sorted_keys

--- Indented JSON text of a decoded value (keys sorted), as lines.
---@param v any
---@return string[]
function M.pretty(v)
  local lines, cur = {}, {}
  local function emit(s) cur[#cur + 1] = s end
  local function newline(ind)
    lines[#lines + 1] = table.concat(cur)
    cur = { string.rep("  ", ind) }
  end
  local function walk(x, ind)
    if type(x) ~= "table" then emit(json.encode(x)); return end
    local arr = json.is_array(x) or (#x > 0 and next(x, #x) == nil)
    if next(x) == nil then emit(arr and "[]" or "{}"); return end
    emit(arr and "[" or "{")
    local keys = arr and nil or sorted_keys(x)
    local n = arr and #x or #keys
    for i = 1, n do
      newline(ind + 1)
      if arr then walk(x[i], ind + 1) else
        emit(json.encode(tostring(keys[i])) .. ": ")
        walk(x[keys[i]], ind + 1)
      end
      if i < n then emit(",") end
    end
    newline(ind)
    emit(arr and "]" or "}")
  end
  walk(v, 0)
  lines[#lines + 1] = table.concat(cur)
  return lines
end

--- The lines of a string.
---@param s any
---@return string[]
function M.split_lines(s)
  local out = {}
  for line in (tostring(s) .. "\n"):gmatch("(.-)\r?\n") do out[#out + 1] = line end
  return out
end

--- Show lines in the scratch buffer named `title` (reused), in a split when not visible.
---@param title string
---@param lines string[]
---@return integer bufnr
function M.show(title, lines)
  local buf = vim.fn.bufnr(title)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, title)
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].filetype = "markdown"
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

local function content_lines(lines, items)
  for _, item in ipairs(items or {}) do
    if item.type == "text" then
      for _, l in ipairs(M.split_lines(item.text)) do lines[#lines + 1] = l end
    elseif item.type == "resource" and type(item.resource) == "table" and item.resource.text then
      lines[#lines + 1] = "[resource " .. tostring(item.resource.uri) .. "]"
      for _, l in ipairs(M.split_lines(item.resource.text)) do lines[#lines + 1] = l end
    else
      lines[#lines + 1] = "[" .. tostring(item.type) .. (item.mimeType and (" " .. item.mimeType) or "")
        .. (item.uri and (" " .. item.uri) or "") .. "]"
    end
  end
end
M.content_lines = content_lines

--- Lines for a CallToolResult: the text of its content, then structuredContent as JSON.
---@param tool string
---@param result table
---@return string[]
function M.result_lines(tool, result)
  local lines = { "# " .. tool .. (result.isError and " (the tool reports an error)" or ""), "" }
  content_lines(lines, result.content)
  if result.structuredContent ~= nil then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "structuredContent:"
    lines[#lines + 1] = "```json"
    for _, l in ipairs(M.pretty(result.structuredContent)) do lines[#lines + 1] = l end
    lines[#lines + 1] = "```"
  end
  return lines
end

return M
