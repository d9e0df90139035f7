--- A token store in the OS keyring, through its command-line tool run with an argument vector
--- (core.run_program: no shell) and the secret never in an argument (argv is visible in `ps`):
---   * "secret-tool" (the freedesktop Secret Service: GNOME Keyring, KWallet, KeePassXC): the
---     secret on its stdin; attributes `service` (opts.service, default "lua-mcp") and `key`.
---     lookup exits 1 saying nothing for "no such item" and for an item left locked (unlock
---     prompt dismissed or not shown) alike, so "not stored" is taken only when `secret-tool
---     search` (which never unlocks) lists no item either; else the load is nil, err.
---   * "security" (the macOS keychain): a generic password with service opts.service and account
---     the hashed key; written through `security -i` with the command on stdin and the secret in
---     hex (`-X`), then read back, since whether `security -i` reports a failed command in its
---     exit status is not known. The secret is the record's JSON in printable ASCII (its other
---     characters as \u escapes): `-w` prints any other password in hex, which a value of hex
---     digits cannot be told from. find-generic-password's status 44 (errSecItemNotFound) is "not
---     stored"; any other failure (a locked keychain, no user to ask) makes the load nil, err, and
---     a save or delete fail without touching anything (the head of a record kept in pieces says
---     how many there are: not knowing, it would leave old pieces behind). Tested against a
---     recording fake (spec/keyring_security_spec.lua), not a real keychain: no macOS machine is
---     available to the project.
--- The backend is "security" on Darwin (`uname -s`), else "secret-tool"; opts.backend overrides.
---
--- In a task (mcp.spawn, a connect in a task), and anywhere under a host adapter that drives the
--- loop (mcp.nvim), the tool runs on a helper thread (core.run_program_async): the task (or the
--- adapter's wait) waits, the host's loop and frame go on. In a plain script outside a task it
--- runs on the calling thread (core.run_program), blocking, as before. The store
--- runs one operation at a time (a load, save or delete waits for the one before it); one started
--- on a thread that already runs or waits for one of the store's (a callback run by the host's wait
--- meanwhile) would wait for itself, so it fails with nil, err (kind "busy"), or a load is answered
--- from memory when the key is there. Every caller whose wait blocks the OS thread (the main
--- thread, a plain coroutine that is not a task, a callback) is that one thread: its wait is nested
--- in any other's under way (sched.waiter). The store keeps
--- each record it read or wrote in memory for its life: the tool runs once per key, not at every
--- connect. Another process's later change is seen by a new store object (or after close()).
---
---   local store = assert(mcp.auth.keyring_store())   -- nil, err when no keyring is running
---   mcp.auth.interactive_provider({ server_url = url, store = store })
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")
local sched = require("mcp.sched")

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore 143
local function pack(...) return { n = select("#", ...), ... } end

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- "\uXXXX" (a surrogate pair past U+FFFF) for a code point.
local function u_escape(cp)
  if cp < 0x10000 then return ("\\u%04x"):format(cp) end
  cp = cp - 0x10000
  return ("\\u%04x\\u%04x"):format(0xD800 + math.floor(cp / 0x400), 0xDC00 + cp % 0x400)
end

-- JSON text (json.encode's: valid UTF-8, control characters escaped) in printable ASCII only: each
-- other character (DEL, and everything past ASCII, only ever inside strings) as a \u escape, which
-- json.decode reads back as the same text.
local function ascii_json(text)
  return ((text:gsub("\127", "\\u007f"):gsub("[\192-\247][\128-\191]*", function(c)
    local n = #c
    local cp = c:byte(1) % (n == 2 and 0x20 or n == 3 and 0x10 or 0x08)
    for i = 2, n do cp = cp * 0x40 + c:byte(i) % 0x40 end
    return u_escape(cp)
  end)))
end

local function trim(s) return (s:gsub("%s+$", "")) end

-- security -i reads a command line into a 4096-byte buffer (MAX_LINE_LEN in Apple's published
-- SecurityTool/security.c; the newline and a NUL included); a longer line would be cut, so a
-- record is saved in pieces of SECURITY_PIECE bytes (hex doubles them), one line each.
local SECURITY_MAX_LINE = 4096
local SECURITY_PIECE = 1920 -- (SECURITY_MAX_LINE - 256) / 2: the command around the hex fits

---@class mcp.auth.KeyringStore
local Keyring = {}
Keyring.__index = Keyring

-- A run on a helper thread; its handle is kept in holder._handle (close() cancels it).
local function start_run(cb, argv, input, timeout_ms, holder)
  local h, err = core.run_program_async(argv, input, timeout_ms, cb)
  if h == nil then return cb(nil, err) end
  if holder then holder._handle = h end
end

-- argv run as core.run_program runs it: in a task, or where a host drives the loop (mcp.nvim:
-- its blocking wait keeps Neovim running), on a helper thread while the task or the host's wait
-- goes on; elsewhere (a plain script) on this thread, blocking.
local function run_program(argv, input, timeout_ms, holder)
  if not sched.in_host_loop() then return core.run_program(argv, input, timeout_ms) end
  local r, err = sched.await_call(start_run, argv, input, timeout_ms, holder)
  if holder and holder._handle then holder._handle = nil end
  return r, err
end

function Keyring:_run(args, input)
  local argv = { self.tool }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return run_program(argv, input, self.timeout_ms, self)
end

-- The per-key name in the keyring: a hash, so the key (a URL) is never an argument.
local function account(key) return hex(core.sha256(key)):sub(1, 32) end

-- Each backend: probe() -> nil | error text; read(key) -> the stored text | nil, true (not
-- stored, for sure) | nil, false, error text; write(key, text) -> nil | error text; remove(key) -> nil
-- (gone: deleted, or not there) | error text (the tool failed: the record may still be there).
local backends = {}

-- Why a run that exited non-zero failed: its stderr, else its status.
local function failure(self, r)
  return r.stderr:find("%S") and trim(r.stderr) or (self.tool .. " exited with status " .. r.status)
end

-- `secret-tool lookup` exits 1 saying nothing both when no item matches and when the matching item
-- stayed locked (libsecret's lookup asks the Secret Service to unlock it; a prompt dismissed, or
-- one that cannot be shown, unlocks nothing, and lookup then finds "no value", not an error: read
-- in libsecret's secret-methods.c and tool/secret-tool.c, and seen against GNOME Keyring with
-- secret-tool 0.20.5). `secret-tool search` (libsecret >= 0.14) never unlocks and lists a
-- matching item, locked or not, on stdout: nothing listed and nothing said is "not stored" for sure.
-- (KeePassXC answers a search of a locked database with no items: that case still reads as none.)
-- So the first load of a key not stored runs the tool twice. Search first would not save a run:
-- lookup is the only command that unlocks (prompts), and search's secret cannot be read back
-- reliably (it writes the secret with write(2) between lines it prints through stdio, buffered on
-- a pipe: tool/secret-tool.c), so a stored key would then take two runs instead.
local function secret_tool_absent(self, key)
  local r, err = self:_run({ "search", "service", self.service, "key", account(key) })
  if r == nil then return nil, false, err end
  if r.status == 0 and not r.stdout:find("%S") and not r.stderr:find("%S") then return nil, true end
  -- (search prints a secret it could read on stdout: never quoted here)
  if r.status == 0 and r.stdout:find("%S") then
    return nil, false, "the keyring holds an item for this key but did not give its secret (a locked collection; "
      .. "its unlock prompt dismissed or not shown)"
  end
  return nil, false, self.tool .. " lookup exited 1 saying nothing, and search could not tell whether the item "
    .. "exists: " .. failure(self, r)
end

backends["secret-tool"] = {
  probe = function(self)
    -- A lookup of nothing: a running keyring answers "not found" (status 1) and says nothing.
    local r, err = self:_run({ "lookup", "service", self.service, "key", "lua-mcp-probe" })
    if r ~= nil and r.status == 127 then return self.tool .. " is not installed (Debian: libsecret-tools)" end
    if r ~= nil and r.stderr:find("%S") then return trim(r.stderr) end
    return err
  end,
  read = function(self, key)
    local r, err = self:_run({ "lookup", "service", self.service, "key", account(key) })
    if r == nil then return nil, false, err end
    if r.status == 0 then return trim(r.stdout) end
    if r.status == 1 and not r.stderr:find("%S") then return secret_tool_absent(self, key) end
    return nil, false, failure(self, r)
  end,
  write = function(self, key, text)
    local r, err = self:_run({ "store", "--label=lua-mcp OAuth: " .. key, "service", self.service, "key",
      account(key) }, text)
    if r ~= nil and r.status ~= 0 then return trim(r.stderr) end
    return err
  end,
  remove = function(self, key)
    local r, err = self:_run({ "clear", "service", self.service, "key", account(key) })
    if r == nil then return err end
    if r.status == 0 then return nil end
    -- clear exits 1 saying nothing when no item matched (secret-tool 0.20.5): gone for sure only
    -- when search lists none either (as for a lookup)
    if r.status == 1 and not r.stderr:find("%S") then
      local _, none, serr = secret_tool_absent(self, key)
      if none then return nil end
      return "clear exited 1 saying nothing, and the item may still be there: " .. tostring(serr)
    end
    return failure(self, r)
  end,
}

-- security's exit status for "the item could not be found" (errSecItemNotFound).
local SECURITY_NOT_FOUND = 44

-- The password of one item; nil, true (no such item: status 44); or nil, false, why the keychain
-- could not be read (any other failure: locked, no user to ask, a run that failed).
local function security_find(self, acct)
  local r, err = self:_run({ "find-generic-password", "-s", self.service, "-a", acct, "-w" })
  if r == nil then return nil, false, err end
  if r.status == SECURITY_NOT_FOUND then return nil, true end
  if r.status ~= 0 then return nil, false, failure(self, r) end
  -- (what the store writes is printable ASCII, which -w prints as it is: see ascii_json's use)
  return trim(r.stdout)
end

-- How many pieces the record saved under key is kept in (0: one item, or none); nil, why when its
-- head cannot be read (a failure other than "not found"): then nobody knows where its pieces are,
-- and a write or delete that went on would leave them behind.
local function security_parts(self, key, doing)
  local head, none, err = security_find(self, account(key))
  if head == nil and not none then
    return nil, "the record saved before cannot be read, so its pieces are not known (nothing " .. doing .. "): "
      .. tostring(err)
  end
  return head and tonumber(head:match("^parts:(%d+)$")) or 0
end

-- Delete one item: nil when it is gone (deleted, or not found: status 44); else why not.
local function security_delete(self, acct)
  local r, err = self:_run({ "delete-generic-password", "-s", self.service, "-a", acct })
  if r == nil then return err end
  if r.status ~= 0 and r.status ~= SECURITY_NOT_FOUND then
    return "delete-generic-password failed (the record may still be there): " .. failure(self, r)
  end
end

-- service (checked in new), account and hex need no quoting in security's command line.
local function security_add_line(self, acct, text)
  local line = ("add-generic-password -U -s %s -a %s -X %s\n"):format(self.service, acct, hex(text))
  if #line >= SECURITY_MAX_LINE then -- only a service name of hundreds of bytes gets here
    return nil, ("a command for security -i of %d bytes (at most %d): the service name is too long"):format(#line,
      SECURITY_MAX_LINE - 1)
  end
  return line
end

backends.security = {
  probe = function(self)
    local r, err = self:_run({ "find-generic-password", "-s", self.service, "-a", "lua-mcp-probe" })
    if r ~= nil and r.status == 127 then return self.tool .. " is not installed (macOS: /usr/bin/security)" end
    if r ~= nil and r.status ~= 0 and r.status ~= SECURITY_NOT_FOUND then
      return failure(self, r)
    end
    return err
  end,
  read = function(self, key)
    local head, none, err = security_find(self, account(key))
    local n = head and tonumber(head:match("^parts:(%d+)$"))
    if n == nil then return head, none, err end
    local pieces = {}
    for i = 1, n do
      -- a piece not found: the record is incomplete (a delete under way removes the pieces first),
      -- so nothing is stored that could be read, and a save may replace it
      pieces[i], none, err = security_find(self, account(key) .. "-" .. i)
      if pieces[i] == nil then return nil, none, err end
    end
    return table.concat(pieces)
  end,
  write = function(self, key, text)
    -- find-generic-password -w prints a password with any byte that isprint rejects (C locale:
    -- outside 0x20-0x7e) in hex instead, each byte through a signed char (0xc3 as "ffffffc3"), with
    -- nothing to say it did (do_password_item_printing in Apple's keychain_find.c): a value of hex
    -- digits (a piece of a long token) could not be told from it. Only printable ASCII is written.
    text = ascii_json(text)
    local acct = account(key)
    local old, perr = security_parts(self, key, "written")
    if old == nil then return perr end
    -- a record longer than one line holds is kept in pieces (account-1 .. account-n) under a head
    -- "parts:n" (never JSON); each piece is its own add-generic-password line
    local items, n = {}, 0
    if #text > SECURITY_PIECE then
      for i = 1, #text, SECURITY_PIECE do
        n = n + 1
        items[n] = { acct .. "-" .. n, text:sub(i, i + SECURITY_PIECE - 1) }
      end
      items[n + 1] = { acct, "parts:" .. n }
    else
      items[1] = { acct, text }
    end
    local lines = {}
    for i, it in ipairs(items) do
      local line, lerr = security_add_line(self, it[1], it[2])
      if not line then return lerr end
      lines[i] = line
    end
    local r, err = self:_run({ "-i" }, table.concat(lines))
    if err then return err end
    if r.status ~= 0 then
      return failure(self, r)
    end
    local back, _, rerr = backends.security.read(self, key)
    if back ~= text then
      local why = r.stderr:find("%S") and ": " .. trim(r.stderr) or ""
      if rerr then why = why .. " (reading it back: " .. rerr .. ")" end
      return "the keychain does not hold the record after add-generic-password" .. why
    end
    for i = n + 1, old do self:_run({ "delete-generic-password", "-s", self.service, "-a", acct .. "-" .. i }) end
  end,
  remove = function(self, key)
    local acct = account(key)
    local n, perr = security_parts(self, key, "deleted")
    if n == nil then return perr end
    -- the pieces first, the head last: a delete cut short leaves a record that reads as incomplete
    for i = 1, n do
      local err = security_delete(self, acct .. "-" .. i)
      if err then return err end
    end
    return security_delete(self, acct)
  end,
}

-- Who runs an operation: the task; a plain coroutine whose waits the host suspends (mcp.nvim's
-- coroutines = "yield"); else one waiter for every caller whose wait blocks the OS thread (the
-- main thread, a plain coroutine outside tasks or resumed by one, a callback): an operation such
-- a caller starts while another such one runs or waits is nested in that one's wait
-- (sched.waiter).
local function runner() return sched.waiter() end

local function nested_error(self)
  return errors.new(nil, "mcp.auth: " .. tostring(self) .. ": an operation started while another operation of this "
    .. "store waits on the same thread (from a callback, or a plain coroutine, that the host's wait or the loop ran "
    .. "meanwhile); it would wait for itself, so it fails: call it after that operation returns, or from a task (mcp.spawn)", nil,
    { kind = "busy" })
end

-- Wait for the store's turn. A wait that raises (a host's wait interrupted) gives its place up:
-- the turn handed to it meanwhile goes on to the next operation (the store is never left busy).
local function wait_turn(self)
  local mine
  local ok, err = sched.pcall(sched.await, function(cb)
    mine = cb
    self._waiting[#self._waiting + 1] = cb
  end)
  if ok then return end
  for i, cb in ipairs(self._waiting) do
    if cb == mine then
      table.remove(self._waiting, i)
      error(err, 0)
    end
  end
  local nxt = table.remove(self._waiting, 1) -- the turn was handed to it: hand it on
  if nxt then nxt() else self._busy = false end
  error(err, 0)
end

-- One operation of the store at a time: fn(self, ...) runs once the ones before it are done
-- (a task waits on the loop; a caller outside a task runs the loop meanwhile), so a load never
-- overtakes a save (nor a save another) and a second load of a key finds the first one's record.
-- Returns true, fn's results; or false, err (kind "busy") for an operation started on a thread
-- that already runs or waits for one of this store's: a callback the host's wait (or the loop)
-- ran meanwhile, which would wait for the operation it is nested in, and that one for it.
local function exclusive(self, fn, ...)
  local me = runner()
  if self._active[me] then return false, nested_error(self) end
  self._active[me] = true
  if self._busy then
    local ok, err = sched.pcall(wait_turn, self)
    if not ok then
      self._active[me] = nil
      error(err, 0)
    end
  else
    self._busy = true
  end
  local res = pack(sched.pcall(fn, self, ...))
  self._active[me] = nil
  local nxt = table.remove(self._waiting, 1)
  if nxt then nxt() else self._busy = false end -- (handed on: still busy)
  if not res[1] then error(res[2], 0) end
  return true, unpack(res, 2, res.n)
end

-- The text saved under key: from memory, else read (and kept when the keyring answered: a text,
-- or false for "not stored"; a failed read is not kept, the next load asks again). nil, error
-- text when the backend said why it could not read.
local function read(self, key)
  local text = self._memory[key]
  if text ~= nil then return text or nil end
  local none, err
  text, none, err = self._backend.read(self, key)
  if text ~= nil or none then
    self._memory[key] = text or false
    return text
  end
  return nil, err
end

local function write(self, key, text)
  local err = self._backend.write(self, key, text)
  -- kept only once the keyring has it; after a failure nobody knows what it holds
  self._memory[key] = err == nil and text or nil
  return err
end

-- The memory is forgotten whether or not the delete succeeded: after a failure (the tool failed,
-- perhaps part-way) only the keyring knows what is left, and the next load asks it.
local function remove(self, key)
  self._memory[key] = nil
  return self._backend.remove(self, key)
end

--- The record saved under key, or nil (none); nil, err (kind "unavailable") when the keyring
--- cannot be read or cannot say for sure that nothing is stored (secret-tool: a locked item;
--- security: any failure other than "not found";
--- the error is not kept, the next load asks again); nil, err (kind "busy") when called while
--- another operation of this store waits on the same thread (a callback run during its wait)
--- and the key is not in memory. The first load of a key runs the
--- tool; later ones (and loads after a save) are answered from memory.
---@param key string
---@return table|nil record, mcp.Error|nil err
function Keyring:load(key)
  local text, err
  if self._active[runner()] and self._memory[key] ~= nil then
    text = self._memory[key] or nil -- nested, but there is nothing to wait for
  else
    local ok
    ok, text, err = exclusive(self, read, key)
    if not ok then return nil, text end
  end
  if text == nil and err ~= nil then
    return nil, errors.new(nil, "mcp.auth: " .. tostring(self) .. " cannot read the record: " .. tostring(err), nil,
      { kind = "unavailable" })
  end
  if text == nil or text == "" then return nil end
  local doc = json.decode(text)
  if type(doc) ~= "table" or doc.key ~= key or type(doc.record) ~= "table" then return nil end
  return doc.record
end

--- Save a record: true; raises when the keyring refuses (a store that cannot save is an error
--- the login must not hide); nil, err (kind "busy") when called while another operation of this
--- store waits on the same thread (a callback run during its wait), which it would wait for.
---@param key string
---@param rec table
---@return boolean|nil ok, mcp.Error|nil err
function Keyring:save(key, rec)
  local ok, err = exclusive(self, write, key, json.encode({ key = key, record = rec }))
  if not ok then return nil, err end
  if err then error("mcp.auth: the keyring store cannot save: " .. tostring(err), 2) end
  return true
end

--- Forget the record saved under key (in the keyring and in memory): true (also when nothing was
--- stored); nil, err (kind "busy") as for save; nil, err (kind "unavailable") when the keyring
--- cannot say what to delete (security: the head of a record, which says how many pieces it has,
--- cannot be read; nothing is deleted) or the delete fails (secret-tool clear, or security
--- delete-generic-password, fails other than "no such item"): the record may still be there. On
--- failure the memory is forgotten too, so the next load asks the keyring what is left.
---@param key string
---@return boolean|nil ok, mcp.Error|nil err
function Keyring:delete(key)
  local ok, err = exclusive(self, remove, key)
  if not ok then return nil, err end
  if err then
    return nil, errors.new(nil, "mcp.auth: " .. tostring(self) .. " cannot delete the record: " .. tostring(err), nil,
      { kind = "unavailable" })
  end
  return true
end

--- End a run of the tool in flight (it is killed and reaped; the operation waiting for it fails
--- as when the keyring cannot be read) and forget every record kept in memory: the next load of
--- a key runs the tool again. The store stays usable.
function Keyring:close()
  self._memory = {}
  local h = self._handle
  self._handle = nil
  if h ~= nil and h:running() then h:cancel() end
end

function Keyring:__tostring() return "mcp.auth.keyring_store(" .. self.service .. ")" end

-- The backend for this OS: "security" on Darwin, else "secret-tool".
local function default_backend()
  local r = run_program({ "uname", "-s" }, nil, 5000)
  if r ~= nil and r.status == 0 and trim(r.stdout) == "Darwin" then return "security" end
  return "secret-tool"
end

--- A store in the OS keyring. opts: backend ("secret-tool": the Secret Service; "security": the
--- macOS keychain; default "security" on Darwin, else "secret-tool"), service ("lua-mcp"; for
--- "security" a letter or digit, then letters, digits and . _ - @ : /), tool (the program, default the backend's
--- name), timeout_ms (10000). Returns nil, err (kind "unavailable") when the tool is missing or
--- no keyring answers (no D-Bus session, no Secret Service, a locked or missing collection or
--- keychain). The "security" backend is tested against a recording fake, not a real keychain.
--- In a task (or under mcp.nvim) the tool runs on a helper thread while the loop goes on; the
--- store keeps each record it read or wrote in memory for its life (store:close() forgets them
--- and kills a run in flight).
---@param opts table|nil
---@return mcp.auth.KeyringStore|nil store, mcp.Error|nil err
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("mcp.auth.keyring_store: opts must be a table", 2) end
  local name = opts.backend or default_backend()
  local backend = backends[name]
  if backend == nil then
    error("mcp.auth.keyring_store: backend must be \"secret-tool\" or \"security\"", 2)
  end
  local self = setmetatable({ service = opts.service or "lua-mcp", tool = opts.tool or name, backend = name,
    _backend = backend, timeout_ms = opts.timeout_ms or 10000, _memory = {}, _waiting = {}, _busy = false,
    _active = {} }, Keyring)
  if type(self.service) ~= "string" or self.service == "" then
    error("mcp.auth.keyring_store: service must be a non-empty string", 2)
  end
  -- security -i splits its command line itself: a service it would split or unquote is refused.
  if name == "security" and not self.service:match("^%w[%w%._@:/%-]*$") then
    error("mcp.auth.keyring_store: a service for the security backend is a letter or digit, then letters, "
      .. "digits and . _ - @ : /", 2)
  end
  local err = backend.probe(self)
  if err then
    return nil, errors.new(nil, "mcp.auth.keyring_store: no keyring is available: " .. tostring(err), nil,
      { kind = "unavailable" })
  end
  return self
end

return M
