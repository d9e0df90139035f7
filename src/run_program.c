/* core.run_program(argv, input, timeout_ms) -> {status = exit status (or 128 + signal), stdout =,
 * stderr =} | nil, message. argv[1] is looked up in PATH; no shell is involved, so no argument is
 * ever interpreted. The program gets the same hygiene as a stdio server (every descriptor above
 * 2 close-on-exec, signals at their defaults, started without copying the host: spawn.h),
 * `input` on its stdin, and is waited for, blocking, at most timeout_ms (default 10000; then it
 * is killed and nil, "... timed out" returned). Output beyond 1 MiB per stream is dropped. A
 * program that cannot be executed (not found in PATH, not executable) gives status 127, as a
 * shell reports it. Out of descriptors (EMFILE), the soft fd limit is raised toward the hard one
 * and the run's pipes made again, as for a server's start (fdlimit.h); the program gets the
 * host's limit back. At the hard limit: nil, "cannot run X: out of file descriptors (soft limit
 * N, hard M)", nothing left open.
 *
 * core.run_program_async(argv, input, timeout_ms, fn) -> handle | nil, message: the same run on
 * a helper thread (run_job.h), so the calling thread goes on; fn gets what run_program would
 * return, once, from inside core.step (the handle is kept alive until then). handle:cancel()
 * kills the program (reaped at once) and calls fn(nil, "... was cancelled") now; handle:running().
 * A handle collected with the Lua state while its program runs kills and reaps it without
 * calling fn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "argv_lua.h"
#include "class_lua.h"
#include "compat.h"
#include "core_loop.h"
#include "fdlimit.h"
#include "run_job.h"
#include "run_program.h"
#include "term_escape_lua.h"
#include "transports/spawn.h"

extern char **environ;

#define RUN_MT "mcp.run_program"
#define RUN_IO_MT "mcp.run_io"

typedef struct lua_run {
    mcp_loop *loop;
    mcp_run_job *job; /* NULL once the run is over */
    mcp_watch w;      /* on the job's pipe */
    char *name;       /* argv[1], for the messages */
    int fn_ref;
    int self_ref;        /* anchors the handle while the program runs */
    int e, step, status; /* once the run is over: mcp_run_job_finish's outcome */
    mcp_run_io out;      /* and its output, the handle's until its strings are made */
    int called;          /* fn was called */
} lua_run;

typedef struct run_box {
    lua_run *r;
} run_box;

/* nil, "cannot run name: why" for the start's errno e (out of descriptors: naming the limits). */
static int push_start_error(lua_State *L, const char *name, int e)
{
    char why[160];
    mcp_fdlimit_describe(e, why, sizeof why);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot run %s: %s", name, why);
    return 2;
}

/* What run_program returns for a run: e (with step) the start's errno, else status
 * (mcp_run_finish's) and the output in io. */
static int push_outcome(lua_State *L, const char *name, int e, int step, int status,
                        const mcp_run_io *io)
{
    if (e != 0 && step != MCP_SPAWN_STEP_EXEC)
        return push_start_error(L, name, e);
    if (e != 0) /* not found, not executable: as a shell reports it */
        status = 127 << 8;
    if (status == MCP_RUN_TIMED_OUT || status == MCP_RUN_CANCELLED) {
        lua_pushnil(L);
        lua_pushfstring(L, status == MCP_RUN_TIMED_OUT ? "%s timed out" : "%s was cancelled", name);
        return 2;
    }
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    lua_setfield(L, -2, "status");
    lua_pushlstring(L, io->buf[1] ? io->buf[1] : "", io->len[1]);
    lua_setfield(L, -2, "stdout");
    lua_pushlstring(L, io->buf[2] ? io->buf[2] : "", io->len[2]);
    lua_setfield(L, -2, "stderr");
    return 1;
}

/* The run's pipes (mcp_run_open), the fd limit raised while they find the descriptors exhausted,
 * and the limit its program gets (the host's: fdlimit.h) in *nofile. 0, or an errno. */
static int open_run(mcp_loop *loop, mcp_run_io *io, struct rlimit *nofile, int *has_nofile)
{
    int e;
    while ((e = mcp_run_open(io)) != 0 && loop != NULL && mcp_fdlimit_retry(loop, e))
        ;
    *has_nofile = e == 0 && loop != NULL && mcp_fdlimit_for_child(loop, nofile);
    return e;
}

static int l_io_gc(lua_State *L)
{
    mcp_run_free(luaL_checkudata(L, 1, RUN_IO_MT));
    return 0;
}

/* A blocking run's io in a userdata (pushed) that owns it: its descriptors and output are freed
 * by its __gc when making the result raises (out of memory), else once the result is made. */
static mcp_run_io *new_io(lua_State *L, const char *input, size_t len)
{
    mcp_run_io *io = mcp_newuserdata(L, sizeof *io);
    mcp_run_init(io, input, len);
    luaL_getmetatable(L, RUN_IO_MT);
    lua_setmetatable(L, -2);
    return io;
}

static int l_run_program(lua_State *L)
{
    const char *argv[MCP_ARGV_MAX + 1];
    const char *input;
    size_t len;
    int timeout_ms, e, step = MCP_SPAWN_STEP_CLONE, status = 0, n, has_nofile;
    mcp_run_io *io;
    struct rlimit nofile;
    lua_settop(L, 3); /* (argv's strings go above the arguments) */
    mcp_argv_check(L, argv);
    input = luaL_optlstring(L, 2, "", &len);
    timeout_ms = (int)luaL_optinteger(L, 3, 10000);
    io = new_io(L, input, len);
    e = open_run(mcp_upvalue_loop_if_any(L), io, &nofile, &has_nofile);
    if (e == 0)
        e = mcp_run_start(io, (char *const *)argv, environ, has_nofile ? &nofile : NULL, &step);
    if (e == 0)
        status = mcp_run_finish(io, timeout_ms, -1);
    n = push_outcome(L, argv[0], e, step, status, io);
    mcp_run_free(io); /* (now, not when the box is collected) */
    return n;
}

/* The run is over (done, or cancelled): the thread joined, the watch stopped, the outcome and
 * the output kept in r (the handle's: freed by its __gc if nothing else does). */
static void end_run(lua_run *r)
{
    mcp_watch_stop(r->loop, &r->w);
    r->e = mcp_run_job_finish(r->job, &r->status, &r->step, &r->out);
    r->job = NULL;
}

/* deliver(fn, r): fn(what run_program would return). The values are made here, inside the
 * caller's protected call: running out of memory raises before fn is called (r->called). */
static int l_deliver(lua_State *L)
{
    lua_run *r = lua_touserdata(L, 2);
    int n;
    lua_settop(L, 1);
    n = push_outcome(L, r->name, r->e, r->step, r->status, &r->out);
    mcp_run_free(&r->out);
    r->called = 1;
    if (lua_pcall(L, n, 0, 0) != 0)
        return lua_error(L); /* fn's error, for the caller's protected call */
    return 0;
}

/* End the run (when it is not over yet), drop fn's and the handle's anchors, and call fn once,
 * protected, with the outcome; when its values cannot be made (out of memory), with nil and that
 * error. 0, or the status of fn's error, which is left on the stack. */
static int conclude(lua_State *L, lua_run *r)
{
    int st;
    if (r->job != NULL)
        end_run(r);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, r->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, r->self_ref);
    r->fn_ref = r->self_ref = LUA_NOREF;
    lua_pushcfunction(L, l_deliver);
    lua_pushvalue(L, -2);
    lua_pushlightuserdata(L, r);
    st = lua_pcall(L, 2, 0, 0);
    mcp_run_free(&r->out);
    if (st != 0 && !r->called) { /* fn, the error: fn(nil, the error) */
        lua_pushnil(L);
        lua_insert(L, -2);
        return lua_pcall(L, 2, 0, 0);
    }
    lua_remove(L, st != 0 ? -2 : -1); /* fn */
    return st;
}

/* End the run without calling fn (a start that failed late, a handle collected while its program
 * runs): the program killed and reaped, the anchors dropped, the output freed. */
static void drop_run(lua_State *L, lua_run *r)
{
    if (r->job != NULL) {
        mcp_run_job_cancel(r->job);
        end_run(r);
    }
    luaL_unref(L, LUA_REGISTRYINDEX, r->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, r->self_ref);
    r->fn_ref = r->self_ref = LUA_NOREF;
    mcp_run_free(&r->out);
}

static void on_done(mcp_loop *loop, mcp_watch *w, unsigned events)
{
    lua_run *r = w->data;
    lua_State *L = mcp_loop_lua(loop);
    (void)events;
    if (L == NULL || r->job == NULL)
        return;
    if (conclude(L, r) != 0) {
        mcp_term_report_lua(L, "mcp: run_program_async callback failed: ");
        lua_pop(L, 1);
    }
}

/* The run's state, with the handle (pushed) that owns it. */
static lua_run *new_run(lua_State *L, const char *name)
{
    mcp_loop *loop = mcp_upvalue_loop(L);
    run_box *box = mcp_newuserdata(L, sizeof *box);
    lua_run *r;
    box->r = NULL;
    luaL_getmetatable(L, RUN_MT);
    lua_setmetatable(L, -2);
    r = calloc(1, sizeof *r);
    if (r == NULL) {
        luaL_error(L, "mcp: out of memory");
        return NULL;
    }
    r->fn_ref = r->self_ref = LUA_NOREF;
    mcp_run_init(&r->out, NULL, 0);
    r->loop = loop;
    mcp_loop_ref(loop);
    box->r = r; /* the handle's now: its __gc frees it */
    r->name = strdup(name);
    if (r->name == NULL)
        luaL_error(L, "mcp: out of memory");
    return r;
}

/* The job (run_job.h), its pipes made on this thread: out of descriptors, the fd limit is raised
 * and they are made again (fdlimit.h). NULL with errno (*no_thread: its helper thread could not be
 * created). */
static mcp_run_job *start_job(mcp_loop *loop, const char **argv, const char *input, size_t len,
                              int timeout_ms, int *no_thread)
{
    struct rlimit nofile;
    mcp_run_job *j;
    do
        j = mcp_run_job_start((char *const *)argv, input, len, timeout_ms,
                              mcp_fdlimit_for_child(loop, &nofile) ? &nofile : NULL, no_thread);
    while (j == NULL && !*no_thread && mcp_fdlimit_retry(loop, errno));
    return j;
}

/* nil, "cannot run name: cannot start a helper thread: why" (pthread_create's errno e). */
static int push_thread_error(lua_State *L, const char *name, int e)
{
    lua_pushnil(L);
    lua_pushfstring(L, "cannot run %s: cannot start a helper thread: %s", name, strerror(e));
    return 2;
}

static int l_run_program_async(lua_State *L)
{
    const char *argv[MCP_ARGV_MAX + 1];
    const char *input;
    size_t len;
    int timeout_ms, e, no_thread;
    lua_run *r;
    lua_settop(L, 4); /* (argv's strings go above the arguments) */
    mcp_argv_check(L, argv);
    input = luaL_optlstring(L, 2, "", &len);
    timeout_ms = (int)luaL_optinteger(L, 3, 10000);
    luaL_checktype(L, 4, LUA_TFUNCTION);
    r = new_run(L, argv[0]);
    r->job = start_job(r->loop, argv, input, len, timeout_ms, &no_thread);
    if (r->job == NULL) {
        e = errno;
        return no_thread ? push_thread_error(L, argv[0], e) : push_start_error(L, argv[0], e);
    }
    mcp_watch_init(&r->w, mcp_run_job_fd(r->job), on_done, r);
    lua_pushvalue(L, 4);
    r->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -1);
    r->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (mcp_watch_set(r->loop, &r->w, MCP_EV_READ) != 0) {
        e = errno;
        drop_run(L, r);
        return push_start_error(L, argv[0], e);
    }
    return 1;
}

static run_box *check_box(lua_State *L) { return luaL_checkudata(L, 1, RUN_MT); }

static int l_cancel(lua_State *L)
{
    lua_run *r = check_box(L)->r;
    if (r == NULL || r->job == NULL)
        return 0;
    mcp_run_job_cancel(r->job);
    if (conclude(L, r) != 0)
        return lua_error(L); /* fn's error is the caller's */
    return 0;
}

static int l_running(lua_State *L)
{
    lua_run *r = check_box(L)->r;
    lua_pushboolean(L, r != NULL && r->job != NULL);
    return 1;
}

static int l_gc(lua_State *L)
{
    run_box *box = check_box(L);
    lua_run *r = box->r;
    if (r == NULL)
        return 0;
    /* (a running handle is collected only when the Lua state is closing, or when its start
     * raised after the job began: out of memory) */
    drop_run(L, r);
    mcp_loop_unref(r->loop);
    free(r->name);
    free(r);
    box->r = NULL;
    return 0;
}

void mcp_run_program_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {{"cancel", l_cancel}, {"running", l_running}, {NULL, NULL}};
    static const luaL_Reg none[] = {{NULL, NULL}};
    mcp_class_metatable(L, RUN_MT, methods, l_gc);
    lua_pop(L, 1);
    mcp_class_metatable(L, RUN_IO_MT, none, l_io_gc);
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "run_program", l_run_program);
    mcp_set_loop_function(L, box, "run_program_async", l_run_program_async);
}
