--- The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): list a server's skills,
--- load one lazily and verified, read its supporting files on demand, and hand the result to an
--- agent host. `local skills = require("mcp.skills")` (also `mcp.skills`); the client methods
--- `list_skills`, `get_skill` and `load_skill` call into this module.
---
--- Nothing is read ahead of need: listing reads no file, `load` reads `SKILL.md` only, and
--- `skill:read(path)` reads one file when asked. Every file read for a skill whose entry lists its
--- `resources` is checked against that entry (byte length against `size` when given, SHA-256
--- against `digest`) before anything uses it; a `SKILL.md` must also carry YAML frontmatter equal,
--- field by field, to the entry's `frontmatter`. Any discrepancy returns `nil, err` (kind
--- `"verification"`) and none of the content.
---
--- `resources/directory/read` (the extension's optional method, gated on the server's
--- `directoryRead: true`) lists a directory's direct children: `read_directory` for any directory
--- resource, `skill:read_directory(path)` for one of a loaded skill's directories, checked against
--- the entry the skill was loaded from (a child the entry does not list is reported, never offered).
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")
local schema = require("mcp.schema")
local frontmatter = require("mcp.skills.frontmatter")

local M = {}

M.EXTENSION = "io.modelcontextprotocol/skills"
M.frontmatter = frontmatter
--- The mimeType of a directory resource (SEP-2640 Directory Listing).
M.DIRECTORY_MIME_TYPE = "inode/directory"

local NULL = json.null
local DIRECTORY_READ = "resources/directory/read"

local function verification_error(message, data)
  return errors.new(nil, message, data, { kind = "verification" })
end

local function protocol_error(message, data, method)
  return errors.new(nil, message, data, { kind = "protocol", method = method })
end

local function show(v)
  local ok, s = pcall(json.encode, v)
  if not ok then s = tostring(v) end
  if #s > 80 then s = s:sub(1, 77) .. "..." end
  return s
end

local function hex(bytes)
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

--- The SHA-256 of bytes as the extension writes it: `sha256:` and 64 lowercase hex digits.
---@param bytes string
---@return string
function M.digest(bytes)
  if type(bytes) ~= "string" then error("mcp.skills.digest: bytes must be a string", 2) end
  return "sha256:" .. hex(core.sha256(bytes))
end

--- Whether the connected server advertises the skills extension in its capabilities.
---@param client mcp.Client
---@return boolean
function M.supported(client)
  local ext = client:server_capabilities().extensions
  if type(ext) ~= "table" then return false end
  local v = ext[M.EXTENSION]
  return v ~= nil and v ~= NULL and v ~= false
end

local function check_supported(client, method)
  if not client:is_connected() then
    return nil, errors.new(nil, "the client is not connected", nil, { kind = "closed", method = method })
  end
  if not M.supported(client) then
    return nil, protocol_error("the server does not advertise the " .. M.EXTENSION .. " extension", nil, method)
  end
  return true
end

local function check_opts(opts, where)
  if opts ~= nil and type(opts) ~= "table" then error("mcp." .. where .. ": opts must be a table", 3) end
  return opts or {}
end

-- ---- listing -------------------------------------------------------------------------------------

--- Every skill entry of the server (`skills/list`, all pages), as the server sent them:
--- `{uri, frontmatter, resources}`. Reads no file.
---@param client mcp.Client
---@param opts table|nil per-call options (timeout_ms, cancel, max_pages: default the client's)
---@return table[]|nil entries, mcp.Error|nil err
function M.list(client, opts)
  opts = check_opts(opts, "list_skills")
  local ok, err = check_supported(client, "skills/list")
  if not ok then return nil, err end
  return client:_all_pages("skills/list", "skills", function(cursor)
    local res, rerr = client:request("skills/list", cursor and { cursor = cursor } or nil, opts)
    if res == nil then return nil, rerr end
    if type(res) ~= "table" or type(res.skills) ~= "table" then
      return nil, protocol_error("invalid skills/list result: missing 'skills'", res, "skills/list")
    end
    return res
  end, opts, 4, "mcp.list_skills")
end

--- The entry of one skill by the URI of its SKILL.md (`skills/get`), listed or not.
---@param client mcp.Client
---@param uri string
---@param opts table|nil per-call options (timeout_ms, cancel)
---@return table|nil entry, mcp.Error|nil err
function M.get(client, uri, opts)
  if type(uri) ~= "string" then error("mcp.get_skill: uri must be a string", 2) end
  opts = check_opts(opts, "get_skill")
  local ok, err = check_supported(client, "skills/get")
  if not ok then return nil, err end
  local res
  res, err = client:request("skills/get", { uri = uri }, opts)
  if res == nil then return nil, err end
  if type(res) ~= "table" or type(res.skill) ~= "table" then
    return nil, protocol_error("invalid skills/get result: missing 'skill'", res, "skills/get")
  end
  return res.skill
end

-- ---- directory listing ---------------------------------------------------------------------------

--- Whether the server declares `directoryRead: true` in its skills extension settings, which
--- `resources/directory/read` requires (clients must not call it otherwise).
---@param client mcp.Client
---@return boolean
function M.directory_read_supported(client)
  local ext = client:server_capabilities().extensions
  local v = type(ext) == "table" and ext[M.EXTENSION] or nil
  return type(v) == "table" and v.directoryRead == true
end

-- A JSON array as decoded (or a plain Lua sequence), not an object.
local function is_list(v)
  if type(v) ~= "table" then return false end
  if json.is_array(v) then return true end
  return getmetatable(v) ~= core.object_mt and (next(v) == nil or v[1] ~= nil)
end

local function directory_page(client, uri, cursor, opts)
  local params = { uri = uri }
  if cursor ~= nil and cursor ~= "" then params.cursor = cursor end
  local res, err = client:request(DIRECTORY_READ, params, opts)
  if res == nil then return nil, err end
  if type(res) ~= "table" or not is_list(res.resources) then
    return nil, protocol_error("invalid " .. DIRECTORY_READ .. " result: 'resources' must be an array", res,
      DIRECTORY_READ)
  end
  for i, r in ipairs(res.resources) do
    if type(r) ~= "table" or type(r.uri) ~= "string" then
      return nil, protocol_error(("invalid %s result: resources[%d] is not a resource with a uri"):format(
        DIRECTORY_READ, i), res, DIRECTORY_READ)
    end
  end
  return res
end

local function check_directory_read(client, uri, opts, where)
  if type(uri) ~= "string" then error("mcp." .. where .. ": uri must be a string", 3) end
  opts = check_opts(opts, where)
  local ok, err = check_supported(client, DIRECTORY_READ)
  if not ok then return nil, err end
  if not M.directory_read_supported(client) then
    return nil, protocol_error("the server does not declare directoryRead in its " .. M.EXTENSION ..
      " extension settings, so " .. DIRECTORY_READ .. " is not available", nil, DIRECTORY_READ)
  end
  return opts
end

--- One page of a directory's direct children (`resources/directory/read`): the server's result,
--- `{resources = {Resource, ...}, nextCursor = ...}`. Subdirectories have mimeType
--- `"inode/directory"`.
---@param client mcp.Client
---@param uri string the directory's URI (no trailing slash, e.g. "skill://pdf-processing/templates")
---@param cursor string|nil a nextCursor of the previous page
---@param opts table|nil per-call options (timeout_ms, cancel)
---@return table|nil result, mcp.Error|nil err
function M.read_directory_with_cursor(client, uri, cursor, opts)
  if cursor ~= nil and type(cursor) ~= "string" then error("mcp.read_directory_with_cursor: cursor must be a string", 2) end
  local o, err = check_directory_read(client, uri, opts, "read_directory_with_cursor")
  if not o then return nil, err end
  return directory_page(client, uri, cursor, o)
end

--- Every direct child of a directory over all pages (`resources/directory/read`), as one array of
--- Resource objects as the server sent them; subdirectories have mimeType `"inode/directory"`.
--- Not recursive. `opts.max_pages` (default the client's) bounds the pages followed.
---@param client mcp.Client
---@param uri string the directory's URI (no trailing slash)
---@param opts table|nil per-call options (timeout_ms, cancel, max_pages)
---@return table[]|nil resources, mcp.Error|nil err
function M.read_directory(client, uri, opts)
  local o, err = check_directory_read(client, uri, opts, "read_directory")
  if not o then return nil, err end
  return client:_all_pages(DIRECTORY_READ, "resources", function(cursor)
    return directory_page(client, uri, cursor, o)
  end, o, 4, "mcp.read_directory")
end

-- ---- verification --------------------------------------------------------------------------------

--- Check bytes against one `resources` record: size (when the record has one) and digest.
---@param bytes string
---@param record table {uri, digest, size?}
---@return boolean|nil ok, mcp.Error|nil err
function M.verify(bytes, record)
  if type(bytes) ~= "string" then error("mcp.skills.verify: bytes must be a string", 2) end
  if type(record) ~= "table" then error("mcp.skills.verify: record must be a table", 2) end
  local uri = tostring(record.uri)
  local digest, size = record.digest, record.size
  if digest == nil or digest == NULL then
    return nil, verification_error(uri .. ": the skill's resources give no digest for it", { uri = record.uri })
  end
  if type(digest) ~= "string" or not digest:match("^sha256:" .. ("%x"):rep(64) .. "$") then
    return nil, verification_error(uri .. ": malformed digest " .. show(digest) .. " (expected sha256:<64 hex>)",
      { uri = record.uri, digest = digest })
  end
  if size ~= nil and size ~= NULL then
    if type(size) ~= "number" or size < 0 or size ~= math.floor(size) then
      return nil, verification_error(uri .. ": malformed size " .. show(size), { uri = record.uri, size = size })
    end
    if #bytes ~= size then
      return nil, verification_error(("%s: %d bytes read, the skill's resources say %d"):format(uri, #bytes, size),
        { uri = record.uri, size = size, actual_size = #bytes })
    end
  end
  local actual = M.digest(bytes)
  if actual ~= digest:lower() then
    return nil, verification_error(("%s: digest mismatch (read %s, the skill's resources say %s)"):format(uri, actual, digest),
      { uri = record.uri, digest = digest, actual_digest = actual })
  end
  return true
end

--- Compare frontmatter parsed from a SKILL.md with an entry's, field by field (JSON equality; an
--- absent field equals null). Returns true, or nil and the first differing field's description.
---@param file_fm table
---@param entry_fm table
---@return boolean|nil same, string|nil field, string|nil description
function M.compare_frontmatter(file_fm, entry_fm)
  local keys, seen = {}, {}
  for k in pairs(file_fm) do
    if not seen[k] then keys[#keys + 1], seen[k] = k, true end
  end
  for k in pairs(entry_fm) do
    if not seen[k] then keys[#keys + 1], seen[k] = k, true end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local a, b = file_fm[k], entry_fm[k]
    if not schema.equal(a, b) then
      return nil, k, ("SKILL.md has %s, the entry has %s"):format(a == nil and "no such field" or show(a),
        b == nil and "no such field" or show(b))
    end
  end
  return true
end

--- resources/read one file; returns its bytes, the content item, or nil, err.
local function fetch(client, uri, opts)
  local res, err = client:read_resource(uri, opts)
  if res == nil then return nil, err end
  local items, item = res.contents, nil
  for _, c in ipairs(items) do
    if type(c) == "table" and c.uri == uri then
      item = c
      break
    end
  end
  if item == nil and #items == 1 and type(items[1]) == "table" then item = items[1] end
  if item == nil then
    return nil, protocol_error("resources/read of " .. uri .. " returned no content for it", res, "resources/read")
  end
  if type(item.text) == "string" then return item.text, item end
  if type(item.blob) == "string" then
    local bytes, derr = core.base64_decode(item.blob, "std")
    if not bytes then
      return nil, protocol_error("resources/read of " .. uri .. ": bad base64 blob (" .. tostring(derr) .. ")", nil,
        "resources/read")
    end
    return bytes, item
  end
  return nil, protocol_error("resources/read of " .. uri .. ": the content has neither text nor blob", item,
    "resources/read")
end

local function find_record(resources, uri)
  for _, r in ipairs(resources) do
    if type(r) == "table" and r.uri == uri then return r end
  end
end

-- ---- loaded skills -------------------------------------------------------------------------------

---@class mcp.Skill
---@field uri string the SKILL.md URI
---@field root string the skill's directory URI, ending in "/"
---@field name string frontmatter name
---@field description string frontmatter description
---@field frontmatter table the parsed frontmatter (equal to the entry's)
---@field body string SKILL.md after its frontmatter
---@field text string the whole SKILL.md
---@field entry table the skills/list or skills/get entry it was checked against
---@field verified boolean false when loaded with allow_unverified from an entry without resources
local Skill = {}
Skill.__index = Skill
M.Skill = Skill

--- The skill's files other than SKILL.md, from its entry: `{path, uri, size, digest}` each
--- (path relative to the skill's root). Empty when the entry lists no resources.
---@return table[]
function Skill:files()
  local out = json.array()
  local resources = self.entry.resources
  if type(resources) ~= "table" then return out end
  for _, r in ipairs(resources) do
    if type(r) == "table" and type(r.uri) == "string" and r.uri ~= self.uri then
      local path = r.uri:sub(1, #self.root) == self.root and r.uri:sub(#self.root + 1) or r.uri
      out[#out + 1] = { path = path, uri = r.uri, size = r.size ~= NULL and r.size or nil, digest = r.digest }
    end
  end
  return out
end

-- The segments of a path inside the skill (relative to its root, or an absolute URI inside it),
-- `.` and `..` resolved; {} is the root itself.
local function segments(self, path)
  local rel
  if path:match("^[%a][%w+.-]*:") then
    if path == self.root:sub(1, -2) then return {} end -- the root's directory URI
    if path:sub(1, #self.root) ~= self.root then
      return nil, verification_error(path .. " is outside the skill " .. self.uri, { path = path })
    end
    rel = path:sub(#self.root + 1)
  else
    if path:sub(1, 1) == "/" then
      return nil, verification_error("skill paths are relative to the skill's root: " .. path, { path = path })
    end
    rel = path
  end
  local parts = {}
  for seg in (rel .. "/"):gmatch("([^/]*)/") do
    if seg == ".." then
      if #parts == 0 then
        return nil, verification_error(path .. " leaves the skill's directory", { path = path })
      end
      parts[#parts] = nil
    elseif seg ~= "." and seg ~= "" then
      parts[#parts + 1] = seg
    end
  end
  return parts
end

--- The URI of a file of this skill: `path` relative to the skill's root ("references/FORMS.md",
--- "./a/../b.md") or an absolute URI inside the root. Paths leaving the root are refused.
---@param path string
---@return string|nil uri, mcp.Error|nil err
function Skill:resolve(path)
  if type(path) ~= "string" then error("mcp.Skill:resolve: path must be a string", 2) end
  local parts, err = segments(self, path)
  if not parts then return nil, err end
  if #parts == 0 then return nil, verification_error("not a file path: " .. path, { path = path }) end
  return self.root .. table.concat(parts, "/")
end

--- Read one file of the skill on demand, verified against the skill's entry: an unlisted file,
--- a size or digest mismatch is a verification failure and returns no content.
--- Returns `{uri, path, mimeType, bytes, text, size, verified}` (`text` when the server sent text).
---@param path string relative to the skill's root, or an absolute URI inside it
---@param opts table|nil per-call options (timeout_ms, cancel)
---@return table|nil file, mcp.Error|nil err
function Skill:read(path, opts)
  if type(path) ~= "string" then error("mcp.Skill:read: path must be a string", 2) end
  opts = check_opts(opts, "Skill:read")
  local uri, err = self:resolve(path)
  if not uri then return nil, err end
  local record
  if self.verified then
    record = find_record(self.entry.resources, uri)
    if not record then
      return nil, verification_error(uri .. " is not listed in the resources of the skill " .. self.uri,
        { uri = uri })
    end
  end
  local bytes, item = fetch(self.client, uri, opts)
  if not bytes then return nil, item end
  if record then
    local ok, verr = M.verify(bytes, record)
    if not ok then return nil, verr end
  end
  return {
    uri = uri,
    path = uri:sub(#self.root + 1),
    mimeType = item.mimeType,
    bytes = bytes,
    text = type(item.text) == "string" and bytes or nil,
    size = #bytes,
    verified = record ~= nil,
  }
end

-- Whether a manifest (a skill's `resources`) lists a file under the directory `uri`.
local function lists_under(manifest, uri)
  local prefix = uri .. "/"
  for _, m in ipairs(manifest) do
    if type(m) == "table" and type(m.uri) == "string" and m.uri:sub(1, #prefix) == prefix then return true end
  end
  return false
end

-- One resource of a directory listing as a child (its `listed` field: whether the manifest, if
-- any, lists it), or nil and a protocol error for a listing that is not of direct children.
local function directory_child(dir, rel, r, manifest, seen)
  local prefix = dir .. "/"
  local name = r.uri:sub(1, #prefix) == prefix and r.uri:sub(#prefix + 1) or ""
  if name == "" or name == "." or name == ".." or name:find("/", 1, true) then
    return nil, protocol_error(("%s of %s listed %s, which is not a direct child of it"):format(DIRECTORY_READ, dir,
      show(r.uri)), r, DIRECTORY_READ)
  end
  if seen[r.uri] then
    return nil, protocol_error(("%s of %s listed %s twice"):format(DIRECTORY_READ, dir, r.uri), r, DIRECTORY_READ)
  end
  seen[r.uri] = true
  local directory = r.mimeType == M.DIRECTORY_MIME_TYPE
  local record, listed = nil, true
  if manifest then
    if directory then
      listed = lists_under(manifest, r.uri)
    else
      record = find_record(manifest, r.uri)
      listed = record ~= nil
    end
  end
  local size = record and record.size
  if size == nil or size == NULL then size = type(r.size) == "number" and r.size or nil end
  return {
    uri = r.uri,
    path = rel == "" and name or (rel .. "/" .. name),
    name = type(r.name) == "string" and r.name or name,
    mimeType = type(r.mimeType) == "string" and r.mimeType or nil,
    directory = directory,
    size = size,
    digest = record and record.digest or nil,
    resource = r,
    listed = listed,
  }
end

-- What the manifest has directly in the directory `dir` and the listing (`seen`) did not give.
local function add_missing(missing, dir, rel, manifest, seen)
  local prefix = dir .. "/"
  for _, m in ipairs(manifest) do
    local rest = type(m) == "table" and type(m.uri) == "string" and m.uri:sub(1, #prefix) == prefix
      and m.uri:sub(#prefix + 1) or ""
    local first = rest:match("^[^/]+")
    if first and not seen[prefix .. first] then
      seen[prefix .. first] = true
      local directory = #first < #rest
      missing[#missing + 1] = {
        uri = prefix .. first,
        path = rel == "" and first or (rel .. "/" .. first),
        name = first,
        directory = directory,
        mimeType = directory and M.DIRECTORY_MIME_TYPE or nil,
      }
    end
  end
end

--- List one directory of the skill now (`resources/directory/read`, all pages; the server must
--- declare `directoryRead`). The listing is a live observation, never an extension of the entry
--- the skill was loaded from: for a verified skill, `children` holds only what that entry lists
--- (files it lists, directories holding such files), `unlisted` the children it does not (reading
--- one is a verification failure; `get_skill` gives the current entry, and a skill whose files
--- changed needs approving again), `missing` what the entry has directly in this directory and the
--- server no longer lists. For a skill loaded unverified every child is in `children`.
--- Returns `{uri, path, children, unlisted, missing, changed}`, each child `{uri, path, name,
--- mimeType, directory, size, digest, resource}` (`resource`: the server's Resource object).
---@param path string|nil relative to the skill's root ("" or nil: the root), or a URI inside it
---@param opts table|nil per-call options (timeout_ms, cancel, max_pages)
---@return table|nil listing, mcp.Error|nil err
function Skill:read_directory(path, opts)
  if path == nil then path = "" end
  if type(path) ~= "string" then error("mcp.Skill:read_directory: path must be a string", 2) end
  opts = check_opts(opts, "Skill:read_directory")
  local parts, err = segments(self, path)
  if not parts then return nil, err end
  local rel = table.concat(parts, "/")
  local dir = #parts == 0 and self.root:sub(1, -2) or self.root .. rel
  local resources
  resources, err = M.read_directory(self.client, dir, opts)
  if not resources then return nil, err end
  local manifest = self.verified and self.entry.resources or nil
  local out = { uri = dir, path = rel, children = json.array(), unlisted = json.array(), missing = json.array() }
  local seen = {}
  for _, r in ipairs(resources) do
    local child, cerr = directory_child(dir, rel, r, manifest, seen)
    if not child then return nil, cerr end
    local list = child.listed and out.children or out.unlisted
    child.listed = nil
    list[#list + 1] = child
  end
  if manifest then add_missing(out.missing, dir, rel, manifest, seen) end
  out.changed = #out.unlisted > 0 or #out.missing > 0
  return out
end

local function check_entry(entry)
  if type(entry.uri) ~= "string" or not entry.uri:match("/SKILL%.md$") then
    return nil, protocol_error("invalid skill entry: 'uri' must be the URI of a SKILL.md", entry)
  end
  if type(entry.frontmatter) ~= "table" or json.is_array(entry.frontmatter) then
    return nil, protocol_error("invalid skill entry " .. entry.uri .. ": 'frontmatter' must be an object", entry)
  end
  return true
end

--- Load a skill: read its SKILL.md now (and nothing else), verify it against the entry (size,
--- digest, frontmatter field by field) and return an mcp.Skill. `uri_or_entry` is an entry from
--- `list`/`get`, or the SKILL.md URI (its entry is then fetched with `skills/get`).
--- opts: timeout_ms, cancel; `allow_unverified = true` also loads skills whose entry publishes no
--- digests (`resources` absent or "dynamic"), which are refused by default.
---@param client mcp.Client
---@param uri_or_entry string|table
---@param opts table|nil
---@return mcp.Skill|nil skill, mcp.Error|nil err
function M.load(client, uri_or_entry, opts)
  opts = check_opts(opts, "load_skill")
  local allow_unverified = opts.allow_unverified
  if allow_unverified ~= nil then -- not a per-call option of the requests below (those are closed sets)
    local call_opts = {}
    for k, v in pairs(opts) do
      if k ~= "allow_unverified" then call_opts[k] = v end
    end
    opts = call_opts
  end
  local entry, err
  if type(uri_or_entry) == "string" then
    entry, err = M.get(client, uri_or_entry, opts)
    if not entry then return nil, err end
    if entry.uri ~= uri_or_entry then
      return nil, protocol_error("skills/get answered for " .. show(entry.uri) .. " instead of " .. uri_or_entry,
        entry, "skills/get")
    end
  elseif type(uri_or_entry) == "table" then
    entry = uri_or_entry
  else
    error("mcp.load_skill: expected a SKILL.md URI or a skill entry", 2)
  end
  local ok
  ok, err = check_entry(entry)
  if not ok then return nil, err end
  local uri = entry.uri
  local resources = entry.resources
  local record
  if type(resources) == "table" and not (next(resources) ~= nil and resources[1] == nil) then
    record = find_record(resources, uri)
    if not record then
      return nil, verification_error(uri .. ": the skill's resources do not list its SKILL.md", { uri = uri })
    end
    -- refuse a record without a usable digest before reading anything
    if record.digest == nil or record.digest == NULL then
      return nil, verification_error(uri .. ": the skill's resources give no digest for it", { uri = uri })
    end
  elseif not allow_unverified then
    return nil, verification_error(uri .. ": the skill publishes no digests (resources " ..
      (resources == nil and "absent" or show(resources)) .. "); pass allow_unverified = true to load it anyway",
      { uri = uri, resources = resources })
  end
  local bytes, item = fetch(client, uri, opts)
  if not bytes then return nil, item end
  if record then
    ok, err = M.verify(bytes, record)
    if not ok then return nil, err end
  end
  local fm, body = frontmatter.split(bytes)
  if not fm then return nil, verification_error(uri .. ": " .. body, { uri = uri }) end
  local same, field, why = M.compare_frontmatter(fm, entry.frontmatter)
  if not same then
    return nil, verification_error(("%s: frontmatter field '%s' differs from the skill's entry: %s")
      :format(uri, tostring(field), why), { uri = uri, field = field })
  end
  if type(fm.name) ~= "string" or fm.name == "" or type(fm.description) ~= "string" or fm.description == "" then
    return nil, verification_error(uri .. ": the frontmatter needs a non-empty name and description", { uri = uri })
  end
  return setmetatable({
    client = client,
    uri = uri,
    root = uri:sub(1, #uri - #"SKILL.md"),
    name = fm.name,
    description = fm.description,
    frontmatter = fm,
    body = body,
    text = bytes,
    mimeType = item.mimeType,
    entry = entry,
    verified = record ~= nil,
  }, Skill)
end

-- ---- for agent hosts -----------------------------------------------------------------------------

-- "skill://acme/billing/refunds/SKILL.md" -> "acme/billing/refunds"
local function skill_path(uri)
  local p = uri:gsub("^[%a][%w+.-]*://", ""):gsub("/SKILL%.md$", "")
  return p
end

--- Render a loaded skill as the text a host returns from its skill-loading tool: the body, where
--- it came from, and the supporting files (to be read with skill:read).
---@param skill mcp.Skill
---@param opts table|nil server = label of the server it came from
---@return string
function M.render(skill, opts)
  opts = opts or {}
  local out = { ("# Skill: %s"):format(skill.name) }
  out[#out + 1] = ("Loaded from %s%s. Relative paths in it resolve against %s."):format(skill.uri,
    opts.server and (" on server " .. opts.server) or "", skill.root)
  out[#out + 1] = ""
  out[#out + 1] = (skill.body:gsub("^\n+", ""):gsub("\n+$", ""))
  local files = skill:files()
  if #files > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "Supporting files (read on demand):"
    for _, f in ipairs(files) do
      out[#out + 1] = "- " .. f.path .. (type(f.size) == "number" and (" (" .. f.size .. " bytes)") or "")
    end
  end
  return table.concat(out, "\n") .. "\n"
end

--- What an agent host needs from skills: a list of `{name, skill_name, description, uri, root,
--- loaded, body, files, prompt, skill}`. `items` may mix entries (from `list`, nothing read: a
--- catalog for the model's context) and loaded skills (`body` and `prompt` set). Names that
--- collide are qualified with their skill path ("acme/billing/refunds"), never dropped.
---@param items table[] entries and/or mcp.Skill objects
---@param opts table|nil server = label of the server they came from (shown in `prompt`)
---@return table[]
function M.for_agent(items, opts)
  if type(items) ~= "table" then error("mcp.skills.for_agent: items must be an array", 2) end
  opts = opts or {}
  local out, count = json.array(), {}
  for i, it in ipairs(items) do
    if type(it) ~= "table" then error("mcp.skills.for_agent: item " .. i .. " is not a skill or an entry", 2) end
    local loaded = getmetatable(it) == Skill
    local fm = it.frontmatter
    local uri = it.uri
    local name = type(fm) == "table" and type(fm.name) == "string" and fm.name or (uri and skill_path(uri):match("[^/]+$"))
    local d = {
      skill_name = name,
      description = type(fm) == "table" and type(fm.description) == "string" and fm.description or "",
      uri = uri,
      root = type(uri) == "string" and uri:gsub("SKILL%.md$", "") or nil,
      loaded = loaded,
      server = opts.server,
    }
    if loaded then
      d.body = it.body
      d.files = it:files()
      d.prompt = M.render(it, opts)
      d.skill = it
    else
      d.files = setmetatable({ entry = it, root = d.root, uri = uri }, Skill):files()
    end
    out[#out + 1] = d
    if name then count[name] = (count[name] or 0) + 1 end
  end
  local qualified = {}
  for _, d in ipairs(out) do
    local n = d.skill_name
    d.name = (n and count[n] == 1) and n or (type(d.uri) == "string" and skill_path(d.uri) or n)
    if d.name ~= n then qualified[d.name] = (qualified[d.name] or 0) + 1 end
  end
  -- the same path under two schemes: the whole URI tells them apart
  for _, d in ipairs(out) do
    if d.name ~= d.skill_name and qualified[d.name] > 1 then d.name = d.uri end
  end
  return out
end

return M
