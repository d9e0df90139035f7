/* The collector's pace while a large message is decoded over several budgeted steps
 * (session.c's job): its work comes in small pieces and inside the step's budget.
 *
 * Lua's collector pays for an allocation in the same call, in a step proportional to its debt
 * and never smaller than its step size: with 5.4's defaults, a step sweeps about 50,000 objects
 * (ms, more when a table grew by a MB without a check), landing wherever the decoder allocates.
 * During a run of the decoder its steps are made finer (a smaller step multiplier); what that
 * put off is owed and paid after the run in explicit fine steps while the deadline allows, the
 * rest before the next run decodes anything. The collector thus does the work it would have done
 * (its memory stays bounded), in pieces of ~0.1 ms. The host's settings are restored after each
 * run and payment (also when the run raised). Nothing changes when the host stopped the
 * collector, nor in 5.4's generational mode beyond the payment's minor collections. */
#ifndef MCP_GCPACE_H
#define MCP_GCPACE_H

#include <stdint.h>

#include "lua_api.h"

typedef struct mcp_gcpace {
    int stepmul; /* the host's, while it is lowered (-1: not lowered) */
    double kb;   /* the heap when it was last noted */
    double owed; /* fine steps owed to the collector */
} mcp_gcpace;

/* Before a run: finer steps, the heap noted. */
void mcp_gcpace_begin(lua_State *L, mcp_gcpace *g);
/* Pay the fine steps owed (for what was allocated since the heap was noted, and before) until
 * deadline_us (mcp_now_us; 0: all of them); the heap noted again. May raise (a finalizer, 5.1). */
void mcp_gcpace_pay(lua_State *L, mcp_gcpace *g, uint64_t deadline_us);
/* After a run, also when it raised: the host's multiplier back. */
void mcp_gcpace_end(lua_State *L, mcp_gcpace *g);

#endif
