/* The allocation family every weft folder uses instead of malloc/calloc/realloc/strdup, and a
 * test hook that makes any of them fail (as Lua's lua_Alloc and SQLite's SQLITE_CONFIG_MALLOC
 * make allocation failure testable).
 *
 * weft_malloc, weft_calloc, weft_realloc, weft_strdup and weft_strndup behave as their libc
 * namesakes (a block from them is released with free(); weft_realloc(p, n) that fails leaves p
 * as it was), except that before each allocation they ask the installed hook whether to fail;
 * weft_rt_alloc (runtime.h) and the arena (ir/arena.c) go through them too. So a test installs
 * a hook that fails the Nth call and checks that every path ends with a clean error (see
 * tests/reliability/test_alloc_sweep.c). With no hook installed (the default) the cost is one
 * relaxed atomic load per allocation.
 *
 * Out of scope of the hook: allocations made inside LLVM, SQLite, XGBoost, libc (getline,
 * vasprintf) and protobuf-c's own bookkeeping; weft's handling of their failures is checked
 * where they report them. */
#ifndef WEFT_RUNTIME_MEM_H
#define WEFT_RUNTIME_MEM_H
#include <stdbool.h>
#include <stddef.h>

void *weft_malloc(size_t n);
void *weft_calloc(size_t count, size_t size);
void *weft_realloc(void *p, size_t n);
char *weft_strdup(const char *s);
char *weft_strndup(const char *s, size_t n);

/* Returns true to make the allocation of n bytes fail. Called from any thread (the thread pool
 * calls weft_rt_alloc from its workers) and in forked measurement workers; it must be
 * thread-safe. NULL uninstalls. Test use only: install it while no other thread allocates. */
typedef bool (*weft_alloc_fail_fn)(void *ud, size_t n);
void weft_alloc_set_fail_hook(weft_alloc_fail_fn fn, void *ud);

/* How many weft_rt_alloc calls have returned NULL in this process (monotonic). Generated code
 * skips the body of a local buffer whose weft_rt_alloc failed; the target's run compares this
 * count before and after a kernel and reports WEFT_ERR_NOMEM when it moved (a failure in a
 * kernel running at the same time on another thread may be reported by both runs: an error, never
 * a silently wrong result). */
unsigned long weft_rt_alloc_failures(void);

#endif
