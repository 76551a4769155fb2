/* The lowering pipeline, in order:
 *
 *   TE + steps --nest--> loop IR --partition--> --auto_unroll--> loop IR --verify--> target
 *
 *   nest         inlining, bound inference, loop materialization, guards, flat indexing
 *                and index simplification (lower/nest.c, bound.c, simplify.c)
 *   partition    guard-free full tiles, guarded remainder: loops unswitched on the bound of
 *                each imperfect-split guard (lower/partition.c)
 *   auto_unroll  pragma auto_unroll -> UNROLLED loops (lower/unroll.c)
 *   verify       structural checks (lower/verify.c)
 *
 * WEFT_DUMP=all (or a pass name) prints the loop IR after each pass to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "lower/lower_internal.h"

typedef weft_status (*pass_fn)(weft_arena *a, weft_loop_func *f);

static weft_status pass_verify(weft_arena *a, weft_loop_func *f) { return weft_lower_verify(f); }

static const struct {
    const char *name;
    pass_fn run;
} passes[] = {
    {"partition", weft_lower_partition},
    {"auto_unroll", weft_lower_auto_unroll},
    {"verify", pass_verify},
};

static void dump(const char *pass, const weft_loop_func *f)
{
    const char *want = getenv("WEFT_DUMP");
    if (!want || (strcmp(want, "all") && !strstr(want, pass))) return;
    char *s = weft_ir_func_str(f);
    fprintf(stderr, "=== loop IR after %s ===\n%s\n", pass, s ? s : "(out of memory)");
    free(s);
}

weft_status weft_lower(const weft_schedule *s, weft_arena *a, weft_loop_func **out)
{
    weft_loop_func *f = NULL;
    weft_status rc = weft_lower_nest(s, a, &f);
    if (rc != WEFT_OK) return rc;
    dump("nest", f);
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        rc = passes[i].run(a, f);
        if (rc != WEFT_OK) return rc;
        dump(passes[i].name, f);
    }
    *out = f;
    return WEFT_OK;
}
