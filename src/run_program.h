/* Run a program without a shell, its stdin given, its output captured: core.run_program waits
 * for it on the calling thread, core.run_program_async on a helper thread (run_job.h), reporting
 * the end to a function from inside core.step. For short helpers such as secret-tool. */
#ifndef MCP_RUN_PROGRAM_H
#define MCP_RUN_PROGRAM_H

#include "lua_api.h"

/* Adds run_program and run_program_async to the table on top; `box` is the loop box's index. */
void mcp_run_program_lua_open(lua_State *L, int box);

#endif
