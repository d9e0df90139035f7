/* A long Lua string made over several slices (bigstr.h). */
#include "bigstr.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compat.h"
#include "gc_hold.h"

#define PAGE 4096 /* one write every PAGE bytes reaches every page: none is smaller */
/* Room past len + 1 for the string's header: the allocation Lua makes for it is between. */
#define HEADER_ROOM 256
#define MAP_MIN ((size_t)1024 * 1024) /* smaller scratch is malloc'd */
/* Shorter strings pay their own debt (gc_hold.h): restarting the collector forgets its credit
 * too. */
#define PAUSE_MIN ((size_t)1024 * 1024)
/* Shorter strings are made the usual way: their pages are few (and Lua may have them already). */
#define BLOCK_MIN ((size_t)4096)

enum { PH_TAKE, PH_TOUCH, PH_READY };

void mcp_bigstr_init(mcp_bigstr *b, size_t len)
{
    memset(b, 0, sizeof *b);
    b->len = len;
    b->phase = PH_TAKE;
}

/* The block, from the state's allocator as a string's would be (not yet written). */
static void take(lua_State *L, mcp_bigstr *b)
{
#if LUA_VERSION_NUM >= 502
    size_t tag = LUA_TSTRING; /* a new object of this type (5.2+'s lua_Alloc contract) */
#else
    size_t tag = 0;
#endif
    b->f = lua_getallocf(L, &b->ud);
    if (b->len >= BLOCK_MIN && b->len <= (size_t)-1 - HEADER_ROOM - 1) {
        b->size = b->len + 1 + HEADER_ROOM;
        b->block = b->f(b->ud, NULL, tag, b->size); /* NULL: made the usual way */
    }
}

/* Write the next `bytes` of the block, once a page: its pages are then mapped, and the copy
 * into it faults no more. */
static int touch(mcp_bigstr *b, size_t bytes)
{
    volatile char *p = b->block;
    size_t i = b->touched, stop = bytes < b->size - i ? i + bytes : b->size;
    for (; i < stop; i += PAGE)
        p[i] = 0;
    b->touched = i;
    if (i < b->size)
        return 0;
    p[b->size - 1] = 0;
    return 1;
}

int mcp_bigstr_prepare(lua_State *L, mcp_bigstr *b, size_t bytes)
{
    switch (b->phase) {
    case PH_TAKE:
        take(L, b);
        b->phase = b->block != NULL ? PH_TOUCH : PH_READY;
        return 0;
    case PH_TOUCH:
        if (touch(b, bytes < PAGE ? PAGE : bytes))
            b->phase = PH_READY;
        return 0;
    default: return 1;
    }
}

/* The hand-over: the state's allocator for one lua_pushlstring. */
typedef struct handover {
    lua_Alloc f;
    void *ud;
    char *block;
    size_t size, len;
} handover;

static void *handover_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    handover *h = ud;
    if (ptr == NULL && h->block != NULL && nsize > h->len && nsize <= h->size) {
        void *p = h->f(h->ud, h->block, h->size, nsize); /* a shrink, in place */
        if (p != NULL) {
            h->block = NULL;
            return p;
        }
    }
    return h->f(h->ud, ptr, osize, nsize);
}

static int push_in_block(lua_State *L)
{
    const handover *h = lua_touserdata(L, 1);
    lua_pushlstring(L, lua_touserdata(L, 2), h->len);
    return 1;
}

/* A long string is made with the collector held off (gc_hold.h), in the block when there is one:
 * the state's allocator is the hand-over's for that call, and the state's own again before an
 * error is raised. */
void mcp_bigstr_push(lua_State *L, mcp_bigstr *b, const char *s)
{
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    int in_block = b->block != NULL && f == b->f && ud == b->ud, rc;
    handover h;
    luaL_checkstack(L, 4, "JSON decode");
    h.f = f, h.ud = ud, h.block = NULL, h.size = 0, h.len = b->len;
    if (in_block) {
        h.block = b->block, h.size = b->size;
        b->block = NULL; /* the hand-over's now */
        lua_setallocf(L, handover_alloc, &h);
    } else {
        mcp_bigstr_free(b); /* no block, or not this allocator's */
    }
    lua_pushlightuserdata(L, &h);
    lua_pushlightuserdata(L, (void *)s);
    rc = mcp_gc_hold_pcall(L, push_in_block, 2, 1, b->len >= PAUSE_MIN);
    if (in_block)
        lua_setallocf(L, f, ud);
    if (h.block != NULL) /* not asked for (a short string Lua already had) */
        f(ud, h.block, h.size, 0);
    if (rc != 0)
        lua_error(L);
}

void mcp_bigstr_free(mcp_bigstr *b)
{
    if (b->block != NULL)
        b->f(b->ud, b->block, b->size, 0);
    b->block = NULL;
}

char *mcp_bigstr_map(size_t n, size_t *mapped)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p;
    if (n < MAP_MIN || n > (size_t)-1 - page)
        return NULL;
    *mapped = (n + page - 1) / page * page;
    p = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int mcp_bigstr_unmap(char *p, size_t *mapped, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = bytes < page ? page : bytes / page * page;
    if (n > *mapped)
        n = *mapped;
    munmap(p + *mapped - n, n);
    *mapped -= n;
    return *mapped == 0;
}
