-- The C structure rules of src/ (issue 24), run by `make lint`:
--
--   lua5.4 scripts/check-structure.lua EXCEPTIONS OBJDIR SOURCE...
--
-- SOURCE: the C files of the module (each X.c built as OBJDIR/X.o) and headers.
-- 1. No C function is longer than 80 lines, counted from the line of its opening brace to the
--    line of its closing brace, both included (clang-format's Linux style puts both alone on a
--    line at column 0, which is how a definition is found here).
-- 2. No link cycle between C files: file A uses file B when A's object file has an undefined
--    symbol that B's object file defines (`nm -P`); every strongly connected set of two or more
--    files is a cycle and is reported with the symbols that close it.
--
-- EXCEPTIONS lists what is known and waits on other work, one per line, `#` starts a comment:
--   function <source> <name>     a function allowed over the limit
--   cycle <source> <source> ...  a cycle allowed with exactly these files
-- An exception that no longer matches anything is an error too, so the list stays exact.

local MAX_LINES = 80

local exceptions_path, objdir = arg[1], arg[2]
if not exceptions_path or not objdir then
  io.stderr:write("usage: lua5.4 scripts/check-structure.lua EXCEPTIONS OBJDIR SOURCE...\n")
  os.exit(2)
end
local sources = {}
for i = 3, #arg do sources[#sources + 1] = arg[i] end

local problems = {}
local function problem(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end

-- Exceptions ------------------------------------------------------------------------------------

local allowed_funcs, allowed_cycles = {}, {}
do
  local fh = assert(io.open(exceptions_path, "r"))
  local n = 0
  for line in fh:lines() do
    n = n + 1
    local body = line:gsub("#.*$", "")
    local words = {}
    for w in body:gmatch("%S+") do words[#words + 1] = w end
    if words[1] == "function" and #words == 3 then
      allowed_funcs[words[2] .. " " .. words[3]] = { line = n, used = false }
    elseif words[1] == "cycle" and #words >= 3 then
      local files = { table.unpack(words, 2) }
      table.sort(files)
      allowed_cycles[table.concat(files, " ")] = { line = n, used = false }
    elseif #words > 0 then
      problem("%s:%d: not an exception: %s", exceptions_path, n, line)
    end
  end
  fh:close()
end

-- Rule 1: function length -----------------------------------------------------------------------

-- The name of the function whose header is in `text`: the first identifier before a `(`,
-- attributes left out.
local function function_name(text)
  text = text:gsub("/%*.-%*/", " "):gsub("__attribute__%s*%b()", " ")
  return text:match("([%a_][%w_]*)%s*%(") or "?"
end

local function check_lengths(path)
  local fh = assert(io.open(path, "r"))
  local header, start, name = {}, nil, nil
  local n = 0
  for line in fh:lines() do
    n = n + 1
    if start then
      if line == "{" then
        problem("%s:%d: a '{' at column 0 inside function %s (from line %d)", path, n, name, start)
      elseif line:match("^}") then
        local len = n - start + 1
        local key = path .. " " .. name
        if len > MAX_LINES then
          local ok = allowed_funcs[key]
          if ok then
            ok.used = true
          else
            problem("%s:%d: function %s is %d lines (at most %d)", path, start, name, len, MAX_LINES)
          end
        end
        start, header = nil, {}
      end
    elseif line == "{" then
      start, name = n, function_name(table.concat(header, " "))
    elseif line == "" or line:match("^#") or line:match("[;}]%s*$") or line:match("%*/%s*$") then
      header = {}
    else
      header[#header + 1] = line
    end
  end
  fh:close()
  if start then problem("%s:%d: function %s has no closing '}' at column 0", path, start, name) end
end

for _, path in ipairs(sources) do check_lengths(path) end

-- Rule 2: link cycles ---------------------------------------------------------------------------

local function lines_of(cmd)
  local t = {}
  local p = assert(io.popen(cmd))
  for l in p:lines() do t[#t + 1] = l end
  local ok = p:close()
  if not ok then
    io.stderr:write("check-structure: failed: " .. cmd .. "\n")
    os.exit(2)
  end
  return t
end

local defined, undefined, files = {}, {}, {}
for _, file in ipairs(sources) do
  if file:match("%.c$") then files[#files + 1] = file end
end
for _, file in ipairs(files) do
  local obj = objdir .. "/" .. file:gsub("%.c$", ".o")
  local fh = io.open(obj, "rb")
  if not fh then
    io.stderr:write("check-structure: " .. obj .. " is missing (build first)\n")
    os.exit(2)
  end
  fh:close()
  undefined[file] = {}
  -- nm -P: "name type [value size]"; global definitions are the upper-case types but U.
  for _, l in ipairs(lines_of("nm -P '" .. obj .. "'")) do
    local sym, kind = l:match("^(%S+) (%a)")
    if kind == "U" then
      undefined[file][#undefined[file] + 1] = sym
    elseif kind and kind:match("%u") then
      defined[sym] = file
    end
  end
end

local uses = {} -- uses[a][b] = { symbol, ... }
for _, a in ipairs(files) do
  uses[a] = {}
  for _, sym in ipairs(undefined[a]) do
    local b = defined[sym]
    if b and b ~= a then
      uses[a][b] = uses[a][b] or {}
      table.insert(uses[a][b], sym)
    end
  end
end

-- Tarjan's strongly connected components.
local index, low, on_stack, stack, counter, components = {}, {}, {}, {}, 0, {}
local function connect(v)
  counter = counter + 1
  index[v], low[v] = counter, counter
  stack[#stack + 1], on_stack[v] = v, true
  local targets = {}
  for w in pairs(uses[v]) do targets[#targets + 1] = w end
  table.sort(targets)
  for _, w in ipairs(targets) do
    if not index[w] then
      connect(w)
      low[v] = math.min(low[v], low[w])
    elseif on_stack[w] then
      low[v] = math.min(low[v], index[w])
    end
  end
  if low[v] == index[v] then
    local comp = {}
    repeat
      local w = table.remove(stack)
      on_stack[w] = nil
      comp[#comp + 1] = w
    until w == v
    if #comp > 1 then
      table.sort(comp)
      components[#components + 1] = comp
    end
  end
end
for _, f in ipairs(files) do
  if not index[f] then connect(f) end
end

for _, comp in ipairs(components) do
  local key = table.concat(comp, " ")
  local ok = allowed_cycles[key]
  if ok then
    ok.used = true
  else
    local member, edges = {}, {}
    for _, f in ipairs(comp) do member[f] = true end
    for _, a in ipairs(comp) do
      for _, b in ipairs(comp) do
        local syms = uses[a][b]
        if syms and member[b] then
          table.sort(syms)
          edges[#edges + 1] = string.format("    %s -> %s (%s)", a, b, table.concat(syms, ", "))
        end
      end
    end
    problem("link cycle between %s:\n%s", key, table.concat(edges, "\n"))
  end
end

-- Stale exceptions --------------------------------------------------------------------------------

for key, e in pairs(allowed_funcs) do
  if not e.used then
    problem("%s:%d: function %s is not over %d lines (or is gone): remove the line", exceptions_path, e.line,
      key, MAX_LINES)
  end
end
for key, e in pairs(allowed_cycles) do
  if not e.used then
    problem("%s:%d: cycle %s is gone: remove the line", exceptions_path, e.line, key)
  end
end

if #problems > 0 then
  table.sort(problems)
  for _, p in ipairs(problems) do io.stderr:write("structure: " .. p .. "\n") end
  os.exit(1)
end
print(string.format("lint: structure ok (%d C sources and headers: functions at most %d lines, no link cycle)",
  #sources, MAX_LINES))
