#include "pending.h"

#include <stdlib.h>

static size_t slot_of(int64_t id, size_t cap)
{
    /* Fibonacci hashing spreads sequential ids; cap is a power of two. */
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

void mcp_pending_map_init(mcp_pending_map *m)
{
    m->slots = NULL;
    m->cap = m->count = 0;
}

void mcp_pending_map_free(mcp_pending_map *m)
{
    free(m->slots);
    mcp_pending_map_init(m);
}

static void insert(mcp_pending **slots, size_t cap, mcp_pending *p)
{
    size_t i = slot_of(p->id, cap);
    while (slots[i] != NULL)
        i = (i + 1) & (cap - 1);
    slots[i] = p;
}

static int grow(mcp_pending_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64, i;
    mcp_pending **ns = calloc(ncap, sizeof *ns);
    if (ns == NULL)
        return -1;
    for (i = 0; i < m->cap; i++)
        if (m->slots[i] != NULL)
            insert(ns, ncap, m->slots[i]);
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int mcp_pending_put(mcp_pending_map *m, mcp_pending *p)
{
    /* Keep the load under 1/2 so probe runs stay short. */
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    insert(m->slots, m->cap, p);
    m->count++;
    return 0;
}

static size_t find(const mcp_pending_map *m, int64_t id)
{
    size_t i;
    if (m->cap == 0)
        return (size_t)-1;
    for (i = slot_of(id, m->cap); m->slots[i] != NULL; i = (i + 1) & (m->cap - 1))
        if (m->slots[i]->id == id)
            return i;
    return (size_t)-1;
}

mcp_pending *mcp_pending_get(const mcp_pending_map *m, int64_t id)
{
    size_t i = find(m, id);
    return i == (size_t)-1 ? NULL : m->slots[i];
}

mcp_pending *mcp_pending_take(mcp_pending_map *m, int64_t id)
{
    size_t i = find(m, id), j, mask = m->cap - 1;
    mcp_pending *p;
    if (i == (size_t)-1)
        return NULL;
    p = m->slots[i];
    m->slots[i] = NULL;
    m->count--;
    /* Backward shift: pull later members of the probe run into the hole. */
    for (j = (i + 1) & mask; m->slots[j] != NULL; j = (j + 1) & mask) {
        size_t home = slot_of(m->slots[j]->id, m->cap);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            m->slots[j] = NULL;
            i = j;
        }
    }
    return p;
}

mcp_pending *mcp_pending_first(const mcp_pending_map *m)
{
    size_t i;
    if (m->count == 0)
        return NULL;
    for (i = 0; i < m->cap; i++)
        if (m->slots[i] != NULL)
            return m->slots[i];
    return NULL;
}
