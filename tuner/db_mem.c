/* SQLite's allocations through weft's allocation family (runtime/mem.h), so the test hook that
 * fails the Nth allocation reaches SQLite too (as SQLITE_CONFIG_MALLOC is meant to be used).
 *
 * Each block carries its size in a 16-byte header (SQLite asks for it through xSize, and the
 * header keeps the 8-byte alignment SQLite needs). The configuration is process-wide and must
 * come before SQLite's first use; it is opt-in (a library must not change the allocator of an
 * application's own SQLite behind its back): test programs and applications that own their
 * process's SQLite call weft_db_route_sqlite_allocations() first thing.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "runtime/mem.h"
#include "tuner/db_private.h"

enum { HDR = 16 };

/* Set while SQLite's allocator calls into weft's (weft_db_in_sqlite_allocation). */
static _Thread_local int in_sqlite;

bool weft_db_in_sqlite_allocation(void) { return in_sqlite != 0; }

static void *mem_malloc(int n)
{
    if (n <= 0) return NULL;
    in_sqlite = 1;
    unsigned char *p = weft_malloc((size_t)n + HDR);
    in_sqlite = 0;
    if (!p) return NULL;
    memcpy(p, &(size_t){(size_t)n}, sizeof(size_t));
    return p + HDR;
}

static void mem_free(void *p)
{
    if (p) free((unsigned char *)p - HDR);
}

static int mem_size(void *p)
{
    if (!p) return 0;
    size_t n;
    memcpy(&n, (unsigned char *)p - HDR, sizeof n);
    return (int)n;
}

static void *mem_realloc(void *p, int n)
{
    if (!p) return mem_malloc(n);
    if (n <= 0) return NULL; /* SQLite never asks this (it calls xFree): refuse rather than free */
    in_sqlite = 1;
    unsigned char *q = weft_realloc((unsigned char *)p - HDR, (size_t)n + HDR);
    in_sqlite = 0;
    if (!q) return NULL; /* p stays valid, as SQLite expects */
    memcpy(q, &(size_t){(size_t)n}, sizeof(size_t));
    return q + HDR;
}

static int mem_roundup(int n) { return (n + 7) & ~7; }
static int mem_init(void *ud) { (void)ud; return SQLITE_OK; }
static void mem_shutdown(void *ud) { (void)ud; }

weft_status weft_db_route_sqlite_allocations(void)
{
    static const sqlite3_mem_methods methods = {mem_malloc, mem_free,    mem_realloc, mem_size,
                                                mem_roundup, mem_init, mem_shutdown, NULL};
    int rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods);
    if (rc != SQLITE_OK)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "routing SQLite's allocations through weft: SQLite is already in use in this process "
                         "(SQLite code %d); call this before any database is opened", rc);
    return WEFT_OK;
}
