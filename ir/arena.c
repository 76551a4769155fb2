/* Chunked bump allocator: chunks start at 64 KiB and double; a request larger than the next
 * chunk gets a chunk of its own size. Invariant: `failed` never goes back to false. */
#include "ir/arena.h"
#include "runtime/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    _Alignas(max_align_t) unsigned char data[];
} chunk;

struct weft_arena {
    chunk *head;
    size_t next_size;
    size_t total_used;
    uint32_t next_id;
    bool failed;
};

weft_arena *weft_arena_create(void)
{
    weft_arena *a = weft_calloc(1, sizeof *a);
    if (a) a->next_size = 64 * 1024;
    return a;
}

void weft_arena_destroy(weft_arena *a)
{
    if (!a) return;
    chunk *c = a->head;
    while (c) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void *weft_arena_alloc(weft_arena *a, size_t n)
{
    if (!a || a->failed) return NULL;
    const size_t align = _Alignof(max_align_t);
    n = (n + align - 1) & ~(align - 1);
    if (n == 0) n = align;
    chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = a->next_size;
        if (size < n) size = n;
        chunk *nc = weft_malloc(sizeof(chunk) + size);
        if (!nc) {
            a->failed = true;
            return NULL;
        }
        nc->size = size;
        nc->used = 0;
        nc->next = a->head;
        a->head = nc;
        if (a->next_size < (size_t)64 << 20) a->next_size *= 2;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->total_used += n;
    memset(p, 0, n);
    return p;
}

char *weft_arena_strdup(weft_arena *a, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = weft_arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

char *weft_arena_printf(weft_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = weft_arena_alloc(a, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

bool weft_arena_failed(const weft_arena *a) { return !a || a->failed; }

uint32_t weft_arena_next_id(weft_arena *a) { return a ? ++a->next_id : 0; }

size_t weft_arena_used(const weft_arena *a) { return a ? a->total_used : 0; }
