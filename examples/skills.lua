-- Skills (SEP-2640) as an agent host uses them: build the catalog from skills/list (no file is
-- read), load one skill when the model asks for it (SKILL.md is read and verified: size, SHA-256,
-- frontmatter), then read a supporting file on demand (verified too).
--
--   lua5.4 examples/skills.lua                       # against spec/fixtures/skills_server.lua
--   lua5.4 examples/skills.lua node my-server.js     # any stdio server with the extension
--
-- From a checkout, after `make`: LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/5.4/?.so;;'
local mcp = require("mcp")

local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local command, args = arg[1]
if command then
  args = { select(2, (table.unpack or unpack)(arg)) }
else
  command, args = os.getenv("MCP_DEMO_LUA") or "lua5.4", { here .. "/../spec/fixtures/skills_server.lua" }
end

local function check(result, err)
  if result == nil then
    io.stderr:write("skills: ", tostring(err), "\n")
    os.exit(1)
  end
  return result
end

local client = check(mcp.create_stdio_client(command, args, { client_name = "lua-mcp-skills", stderr = "discard" }))
if not mcp.skills.supported(client) then
  print("this server does not serve skills")
  client:close()
  return
end

-- 1. The catalog: names and descriptions for the model's context, from the listing alone.
local entries = check(client:list_skills())
print("# catalog")
for _, s in ipairs(mcp.skills.for_agent(entries, { server = "demo" })) do
  print(("- %s: %s"):format(s.name, s.description))
end

-- 2. The model asks for the first skill: load it (reads SKILL.md only, verified).
local skill, err = client:load_skill(entries[1])
if not skill then
  -- a tampered, resized or mislabelled SKILL.md ends here, and none of it is used
  print("refused: " .. tostring(err))
  client:close()
  os.exit(1)
end
print("\n# read_skill " .. skill.name)
io.write(mcp.skills.for_agent({ skill }, { server = "demo" })[1].prompt)

-- 3. The skill points at a supporting file: read it when it is needed (verified against the entry).
local files = skill:files()
if #files > 0 then
  local file = check(skill:read(files[1].path))
  print(("\n# %s (%d bytes, %s)"):format(file.path, file.size, tostring(file.mimeType)))
  io.write(file.text or "(binary)\n")
end

client:close()
