/* Chunked bump allocator (DESIGN #1): one arena owns every IR node of a kernel; freeing the
 * arena frees them all. Allocation failure is sticky: after the first failed chunk every later
 * allocation returns NULL, so constructors can be chained and checked once with
 * weft_arena_failed(). Memory is zeroed and aligned to max_align_t. */
#ifndef WEFT_IR_ARENA_H
#define WEFT_IR_ARENA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct weft_arena weft_arena;

/* Caller owns the arena: weft_arena_destroy (accepts NULL). NULL on out-of-memory. */
weft_arena *weft_arena_create(void);
void weft_arena_destroy(weft_arena *a);
/* Zeroed block of n bytes, valid until the arena is destroyed; NULL after a failure. */
void *weft_arena_alloc(weft_arena *a, size_t n);
/* Copy of s (NULL gives NULL) in the arena. */
char *weft_arena_strdup(weft_arena *a, const char *s);
/* printf into the arena. */
char *weft_arena_printf(weft_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool weft_arena_failed(const weft_arena *a);
/* A fresh id per call, unique within this arena (variable identities for printing/hashing). */
uint32_t weft_arena_next_id(weft_arena *a);
/* Bytes handed out so far (for tests and reports). */
size_t weft_arena_used(const weft_arena *a);

#endif
