--- The terminal elicitation handler: asks each field on the tty, in the server's property order,
--- showing defaults and numbered choices; an answer that does not fit its field's schema (format,
--- minimum/maximum, minLength/maxLength, pattern, enum, ...) is refused with the reason and that
--- field is asked again at once. Reading blocks the program while the user types (fine for a CLI
--- or a script).
---
---   client:on_elicitation_request(mcp.elicitation.terminal_handler())
---
--- opts.input: a file (or a function returning the next line, nil at the end) to read answers from,
--- default /dev/tty (io.stdin when there is no tty); opts.output: a file to write prompts to,
--- default /dev/tty (io.stderr). opts.max_rounds: how often an invalid form is asked again (2).
--- URL mode (register with { url = true }): shows the URL and its host and asks; on yes it calls
--- opts.open_url(url) when given (e.g. mcp.elicitation.open_url, the system's opener), and only then.
--- At any prompt ":decline" declines and ":cancel" (or the end of input) cancels.
local elicitation = require("mcp.elicitation")
local term = require("mcp.util.term")

-- Everything shown comes from the server: its controls are escaped (mcp.util.term).
local esc, esc1 = term.escape_text, term.escape

local M = {}

local function open_tty(mode, fallback)
  local f = io.open("/dev/tty", mode)
  return f or fallback
end

local function show(v)
  local ok, s = pcall(require("mcp.json").encode, v)
  return ok and s or tostring(v)
end

-- Open the URL only now, on the user's yes (never prefetched); without an opener (or when it
-- fails) tell the user to open it.
local function open(req, out, opts)
  local opened = false
  if opts.open_url then
    local ok, r = pcall(opts.open_url, req.url)
    opened = ok and r ~= false
  end
  if not opened then out:write("Open it in your browser: " .. esc1(req.url) .. "\n") end
end

-- URL mode: show the URL and its host, ask for consent.
local function url_mode(req, ask, out, opts)
  out:write("The server asks you to open this URL: " .. esc1(req.url) .. "\n")
  out:write("  host: " .. esc1(req.url_host or "(none)")
    .. (req.url_punycode and "  (WARNING: an internationalized name, it may imitate another host)" or "") .. "\n")
  while true do
    local a, stop = ask("Open it and continue? [y]es, [n]o, [c]ancel: ")
    if a == nil then return stop == "decline" and elicitation.decline() or elicitation.cancel() end
    a = a:lower():gsub("%s", "")
    if a == "y" or a == "yes" then
      open(req, out, opts)
      return elicitation.accept()
    end
    if a == "n" or a == "no" then return elicitation.decline() end
    if a == "c" or a == "cancel" then return elicitation.cancel() end
  end
end

--- Build a terminal handler.
---@param opts table|nil input, output, max_rounds, open_url
---@return fun(req: table): table
function M.handler(opts)
  opts = opts or {}
  return function(req)
    local input = opts.input or open_tty("r", io.stdin)
    local out = opts.output or open_tty("w", io.stderr)
    local function readline()
      if type(input) == "function" then return input() end
      return input:read("*l")
    end
    local function ask(prompt)
      out:write(prompt)
      out:flush()
      local line = readline()
      if line == nil then return nil, "cancel" end
      local cmd = line:match("^%s*:(%a+)%s*$")
      if cmd == "cancel" or cmd == "decline" then return nil, cmd end
      return line
    end
    out:write("\n" .. (req.server and ("The server " .. esc1(req.server) .. " asks:\n") or "") .. esc(req.message) .. "\n")
    if req.mode == "url" then return url_mode(req, ask, out, opts) end
    local fields = elicitation.fields(req.requested_schema)
    local content = {}
    local function ask_field(f)
      local label = esc1(f.title or f.name)
      if f.description then out:write("  " .. esc(f.description) .. "\n") end
      if f.choices then
        for i, c in ipairs(f.choices) do out:write(("    %d) %s\n"):format(i, esc1(c.label))) end
      end
      local hint = {}
      if f.multiple then hint[#hint + 1] = "numbers separated by commas" end
      if f.type == "boolean" then hint[#hint + 1] = "y/n" end
      if f.format then hint[#hint + 1] = esc1(f.format) end
      if f.default ~= nil then hint[#hint + 1] = "default " .. esc1(show(f.default)) end
      if not f.required then hint[#hint + 1] = "optional" end
      local prompt = label .. (#hint > 0 and (" (" .. table.concat(hint, ", ") .. ")") or "") .. ": "
      while true do
        local line, stop = ask(prompt)
        if line == nil then return stop end
        if line:match("^%s*$") then
          if f.default ~= nil or not f.required then
            content[f.name] = nil
            return nil
          end
          out:write("  this field is required\n")
        else
          local v, err = elicitation.parse_answer(f, line)
          if v ~= nil then
            content[f.name] = v
            return nil
          end
          out:write("  " .. esc(err) .. "\n")
        end
      end
    end
    local todo = fields
    for _ = 0, opts.max_rounds or 2 do
      for _, f in ipairs(todo) do
        local stop = ask_field(f)
        if stop == "decline" then return elicitation.decline() end
        if stop == "cancel" then return elicitation.cancel() end
      end
      if type(req.requested_schema) ~= "table" then break end
      local list = require("mcp.schema").errors(req.requested_schema, elicitation.apply_defaults(req.requested_schema, content))
      if #list == 0 then break end
      local again, seen = {}, {}
      for _, e in ipairs(list) do
        out:write("  " .. esc(require("mcp.schema").describe(e)) .. "\n")
        local name = e.path:match("^/([^/]+)")
        for _, f in ipairs(fields) do
          if f.name == name and not seen[name] then
            again[#again + 1] = f
            seen[name] = true
          end
        end
      end
      if #again == 0 then break end
      todo = again
    end
    return elicitation.accept(content)
  end
end

return M
