/* Run a program without a shell and wait for it, its stdin given, its output captured
 * (core.run_program): for short helpers such as secret-tool. */
#ifndef MCP_RUN_PROGRAM_H
#define MCP_RUN_PROGRAM_H

#include "compat.h"

/* run_program({prog, args...}, input, timeout_ms) -> {status=, stdout=, stderr=} | nil, message */
int mcp_run_program(lua_State *L);

#endif
