-- Generate the Neovim help file doc/lua-mcp.txt from docs/API.md (never edited by hand).
--
--   lua5.4 scripts/vimdoc.lua docs/API.md doc/lua-mcp.txt          write it (make doc)
--   lua5.4 scripts/vimdoc.lua docs/API.md doc/lua-mcp.txt --check  exit 1 when it is stale (make check-doc)
--
-- Markdown to help: `##` headings become sections with a `*lua-mcp-<anchor>*` tag (the anchor
-- GitHub gives the heading, so `[x](#anchor)` links become `|lua-mcp-anchor|`), `###` headings
-- become `Heading ~` subsections with their tag, fenced code becomes a `>` ... `<` block, table
-- separator rows become rules (a `|---|` would read as a help link), `**bold**` loses its stars
-- and `[text](url)` becomes `text (url)`; a line that is an HTML comment (`<!-- api: ... -->`)
-- is left out. Everything else is kept line for line.
local src, dst, mode = arg[1], arg[2], arg[3]
if not src or not dst then
  io.stderr:write("usage: vimdoc.lua docs/API.md doc/lua-mcp.txt [--check]\n")
  os.exit(2)
end

local WIDTH = 78

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- GitHub's heading anchor: lower case, punctuation dropped (hyphens kept), spaces to hyphens.
local function anchor(text)
  local s = text:lower():gsub("`", "")
  s = s:gsub("[^%w%- ]", ""):gsub(" ", "-")
  return s
end

local function tag(a) return "*lua-mcp-" .. a .. "*" end

-- "left" and "right" on one line of WIDTH columns, or right-aligned on the next line.
local function align(left, right)
  local pad = WIDTH - #left - #right
  if pad >= 1 then return left .. (" "):rep(pad) .. right end
  return left .. "\n" .. (" "):rep(math.max(0, WIDTH - #right)) .. right
end

local function inline(line)
  line = line:gsub("%*%*(.-)%*%*", "%1")
  line = line:gsub("%[([^%]]+)%]%(#([%w%-]+)%)", "%1 |lua-mcp-%2|")
  line = line:gsub("%[([^%]]+)%]%((https?://[^%)]+)%)", "%1 (%2)")
  return line
end

local text = assert(read(src), "cannot read " .. src)
local out = {}
local function emit(s) out[#out + 1] = s end

local title = text:match("^#%s+([^\n]+)") or "lua-mcp"
emit(align("*lua-mcp.txt*", title))
emit("")
emit(align("", "*lua-mcp*"))
emit("Generated from docs/API.md by scripts/vimdoc.lua (make doc). Do not edit;")
emit("edit docs/API.md and run `make doc`.")
emit("")
emit("CONTENTS" .. (" "):rep(WIDTH - #"CONTENTS" - #"*lua-mcp-contents*") .. "*lua-mcp-contents*")
emit("")
for h in text:gmatch("\n##%s+([^\n]+)") do
  if not h:match("^#") then
    local name = h:gsub("`", "")
    emit(align("  " .. name, "|lua-mcp-" .. anchor(h) .. "|"))
  end
end
emit("")

local in_code = false
local first = true
for line in (text .. "\n"):gmatch("([^\n]*)\n") do
  if first then
    first = false -- the "# title" line is the file's header
  elseif in_code then
    if line:match("^```") then
      emit("<")
      in_code = false
    else
      emit(line == "" and "" or ("    " .. line))
    end
  elseif line:match("^<!%-%-.*%-%->%s*$") then
    -- an HTML comment line (the markers of scripts/apidoc.lua's generated blocks): not shown
  elseif line:match("^```") then
    emit(">")
    in_code = true
  elseif line:match("^##%s") and not line:match("^###") then
    local h = line:match("^##%s+(.-)%s*$")
    emit(("="):rep(WIDTH))
    emit(align(h:gsub("`", ""):upper(), tag(anchor(h))))
  elseif line:match("^###%s") then
    local h = line:match("^###%s+(.-)%s*$")
    emit(align("", tag(anchor(h))))
    emit((h:gsub("`", "")) .. " ~")
  elseif line:match("^|[%s%-:|]+|%s*$") then
    emit(("-"):rep(WIDTH))
  else
    emit(inline(line))
  end
end
while out[#out] == "" do out[#out] = nil end
emit("")
emit(" vim:tw=78:ts=8:ft=help:norl:")
local doc = table.concat(out, "\n") .. "\n"

if mode == "--check" then
  if read(dst) ~= doc then
    io.stderr:write(dst .. " is stale: run `make doc` and commit it\n")
    os.exit(1)
  end
  print("check-doc: ok")
else
  local f = assert(io.open(dst, "wb"))
  f:write(doc)
  f:close()
  print("doc: wrote " .. dst)
end
