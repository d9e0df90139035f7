-- lua-mcp's Neovim plugin: the commands :Mcp, :McpCall, :McpRead, :McpPrompt, :McpRestart,
-- :McpEnable, :McpDisable, :McpLogin, :McpLogout
-- (see :help lua-mcp-plugin). Servers start on the first command, not at startup (a chat adapter
-- called from init.lua starts them there, as background work that logs in nowhere); call
-- require("mcp.nvim.plugin").setup{...} to set options. vim.g.loaded_lua_mcp = 1 turns it off.
if vim.g.loaded_lua_mcp then return end
vim.g.loaded_lua_mcp = 1
if vim.fn.has("nvim-0.7") == 0 then return end
require("mcp.nvim.plugin").define_commands()
