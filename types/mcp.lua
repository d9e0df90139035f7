---@meta
-- LuaCATS declarations for what lua-mcp defines dynamically (generated methods, the C core).

---@class mcp.Client
local Client = {}

---@param cursor string|nil
---@param opts table|nil
---@return table|nil page {tools=, nextCursor=}, mcp.Error|nil err
function Client:list_tools_with_cursor(cursor, opts) end
---@param opts table|nil
---@return table[]|nil tools, mcp.Error|nil err
function Client:list_all_tools(opts) end
---@param cursor string|nil
---@param opts table|nil
---@return table|nil page {resources=, nextCursor=}, mcp.Error|nil err
function Client:list_resources_with_cursor(cursor, opts) end
---@param opts table|nil
---@return table[]|nil resources, mcp.Error|nil err
function Client:list_all_resources(opts) end
---@param cursor string|nil
---@param opts table|nil
---@return table|nil page {resourceTemplates=, nextCursor=}, mcp.Error|nil err
function Client:list_resource_templates_with_cursor(cursor, opts) end
---@param opts table|nil
---@return table[]|nil templates, mcp.Error|nil err
function Client:list_all_resource_templates(opts) end
---@param cursor string|nil
---@param opts table|nil
---@return table|nil page {prompts=, nextCursor=}, mcp.Error|nil err
function Client:list_prompts_with_cursor(cursor, opts) end
---@param opts table|nil
---@return table[]|nil prompts, mcp.Error|nil err
function Client:list_all_prompts(opts) end
---@param fn fun(params: table) @notifications/tools/list_changed
function Client:on_tools_list_changed(fn) end
---@param fn fun(params: table)
function Client:on_resources_list_changed(fn) end
---@param fn fun(params: table)
function Client:on_prompts_list_changed(fn) end
---@param fn fun(params: table) @params.uri
function Client:on_resource_updated(fn) end
---@param fn fun(params: table) @params.level, params.logger, params.data
function Client:on_log_message(fn) end
---@param fn fun(params: table) @params.requestId, params.reason
function Client:on_cancelled(fn) end
---@param fn fun(params: table) @every notifications/progress
function Client:on_progress(fn) end

---@class mcp.core
---@field null lightuserdata
---@field array_mt table
---@field object_mt table
---@field built_for string
local core = {}
---@param timeout_ms number|nil negative: wait until something happens
---@return integer events, boolean alive
function core.step(timeout_ms) end
---@return integer|nil
function core.fd() end
---@return number ms until the next timer, -1 when none
function core.timeout() end
---@return integer unreaped server processes
function core.children() end
---@param ms number
---@param fn function
---@return userdata timer with :cancel()
function core.timer(ms, fn) end
---@param cfg table command, args, env (complete, "K=V"), cwd, stderr, max_message_size, max_write_queue
---@return userdata
function core.stdio_transport(cfg) end
---@param transport userdata
---@param handler fun(kind: string, ...)
---@return userdata session
function core.session(transport, handler) end
---@param v any
---@return string
function core.json_encode(v) end
---@param s string
---@return any value, string|nil err
function core.json_decode(s) end
