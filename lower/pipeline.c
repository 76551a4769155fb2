/* The lowering pipeline: TE + schedule steps -> loop IR for one target, as a table of passes
 * run in order. Each pass has a one-line contract here (the full one heads its file) and can
 * be printed after it runs: WEFT_DUMP=PASS[,PASS...] or WEFT_DUMP=all prints to stderr.
 *
 *   inline       stages computed inline expanded into their readers' bodies   (inline.c)
 *   region       buffers; regions of attached stages (bound inference); every
 *                stage's iterator extents, loop variables and values           (region.c, bound.c)
 *   nest         loop nests in schedule order, attached stages at their leaf,
 *                reduction inits, one store per stage reading TLOADs           (nest.c)
 *   guards       IFs around stores for imperfect splits and partial regions    (guards.c)
 *   flatten      TLOADs -> flat LOADs of buffers, region mins subtracted       (flatten.c)
 *   simplify     indices and conditions canonicalized under the loop ranges;
 *                IFs the ranges prove true dropped                             (simplify.c)
 *   partition    guard-free full tiles, guarded remainder (loop unswitching)   (partition.c)
 *   auto_unroll  pragma auto_unroll -> UNROLLED loops                          (unroll.c)
 *   prefetch     CPU: pragma prefetch -> next-iteration prefetches spread over
 *                the loops that reuse the current iteration's data             (prefetch.c)
 *   barriers     GPU: barriers around shared-memory producers in a block       (gpu.c)
 *   launch       GPU: every top-level nest launchable within the caps          (gpu.c)
 *   verify       the loop-IR rules of ir/verify.h, and the target's caps       (ir/verify.c)
 *
 * inline and region print what they computed per stage; the others print the loop IR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "lower/lower_internal.h"

typedef weft_status (*pass_fn)(weft_lower_ctx *c);
typedef void (*dump_fn)(const weft_lower_ctx *c, weft_strbuf *sb);

static weft_status pass_partition(weft_lower_ctx *c) { return weft_lower_partition(c->a, c->lf); }
static weft_status pass_auto_unroll(weft_lower_ctx *c) { return weft_lower_auto_unroll(c->a, c->lf); }
static weft_status pass_prefetch(weft_lower_ctx *c) { return weft_lower_prefetch(c); }
static weft_status pass_barriers(weft_lower_ctx *c) { return weft_lower_barriers(c->a, c->lf, c->caps); }
static weft_status pass_launch(weft_lower_ctx *c) { return weft_lower_launch_check(c->lf, c->caps); }
static weft_status pass_verify(weft_lower_ctx *c) { return weft_ir_verify(c->lf, c->caps); }

static const char *attach_str(const weft_schedule *s, const weft_stage *st, char *buf, size_t n)
{
    if (st->attach == WEFT_ATTACH_ROOT) return "root";
    if (st->attach == WEFT_ATTACH_INLINE) return "inline";
    snprintf(buf, n, "at %s.%s", s->stages[st->at_stage].name, s->stages[st->at_stage].iters[st->at_iter].name);
    return buf;
}

static void dump_inline(const weft_lower_ctx *c, weft_strbuf *sb)
{
    char at[160];
    for (int i = 0; i < c->s->n_stages; i++) {
        const weft_stage *st = &c->s->stages[i];
        weft_strbuf_printf(sb, "stage %s (%s): ", st->name, attach_str(c->s, st, at, sizeof at));
        weft_ir_print_expr(sb, c->stage[i].body);
        weft_strbuf_printf(sb, "\n");
    }
}

static void dump_region(const weft_lower_ctx *c, weft_strbuf *sb)
{
    char at[160];
    for (int i = 0; i < c->s->n_stages; i++) {
        const weft_stage *st = &c->s->stages[i];
        const weft_lower_stage *si = &c->stage[i];
        if (!si->placed) continue;
        weft_strbuf_printf(sb, "stage %s (%s): buffer %s %s, region", st->name, attach_str(c->s, st, at, sizeof at),
                           si->buf->name, weft_scope_names[si->buf->scope]);
        for (int d = 0; d < st->ref->ndim; d++) {
            weft_strbuf_printf(sb, "%s[", d ? " x " : " ");
            weft_ir_print_expr(sb, si->lo[d]);
            weft_strbuf_printf(sb, " +%lld]", (long long)si->ext[d]);
        }
        weft_strbuf_printf(sb, "\n  loops:");
        for (int l = 0; l < st->n_leaves; l++)
            weft_strbuf_printf(sb, " %s:%lld%s", st->iters[st->leaves[l]].name, (long long)si->iter_ext[st->leaves[l]],
                               si->leaf_var[l] ? "" : "(none)");
        weft_strbuf_printf(sb, "\n  axes:");
        for (int d = 0; d < st->op->ndim + st->op->n_reduce; d++) {
            weft_strbuf_printf(sb, d ? ", " : " ");
            weft_ir_print_expr(sb, si->axis_val[d]);
        }
        weft_strbuf_printf(sb, "\n");
    }
}

static void dump_ir(const weft_lower_ctx *c, weft_strbuf *sb)
{
    char *s = weft_ir_func_str(c->lf);
    weft_strbuf_puts(sb, s ? s : "(out of memory)\n");
    free(s);
}

static const struct {
    const char *name;
    pass_fn run;
    dump_fn dump;
} passes[] = {
    {"inline", weft_lower_inline, dump_inline},
    {"region", weft_lower_region, dump_region},
    {"nest", weft_lower_nest, dump_ir},
    {"guards", weft_lower_guards, dump_ir},
    {"flatten", weft_lower_flatten, dump_ir},
    {"simplify", weft_lower_simplify, dump_ir},
    {"partition", pass_partition, dump_ir},
    {"auto_unroll", pass_auto_unroll, dump_ir},
    {"prefetch", pass_prefetch, dump_ir},
    {"barriers", pass_barriers, dump_ir},
    {"launch", pass_launch, dump_ir},
    {"verify", pass_verify, dump_ir},
};
enum { N_PASSES = sizeof passes / sizeof passes[0] };

int weft_lower_n_passes(void) { return N_PASSES; }
const char *weft_lower_pass_name(int i) { return i >= 0 && i < N_PASSES ? passes[i].name : NULL; }

/* Whether the comma-separated list `want` names pass (or is "all"). */
static bool wanted(const char *want, const char *pass)
{
    size_t n = strlen(pass);
    for (const char *p = want; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if ((len == 3 && !strncmp(p, "all", 3)) || (len == n && !strncmp(p, pass, n))) return true;
        p += len + (end != NULL);
    }
    return false;
}

static void dump_stderr(void *ud, const char *pass, const char *text)
{
    fprintf(stderr, "=== %s after %s ===\n%s", (const char *)ud, pass, text);
}

weft_status weft_lower_traced(const weft_schedule *s, const weft_target_caps *caps, weft_arena *a, weft_loop_func **out,
                              weft_lower_trace_fn trace, void *ud)
{
    *out = NULL;
    weft_status rc = weft_sched_check(s);
    if (rc != WEFT_OK) return rc;
    const weft_te_func *f = s->func;
    weft_lower_ctx *c = weft_arena_alloc(a, sizeof *c);
    weft_lower_stage *stage = weft_arena_alloc(a, sizeof *stage * (size_t)(s->n_stages ? s->n_stages : 1));
    const weft_buffer **params = weft_arena_alloc(a, sizeof *params * (size_t)(f->n_inputs + f->n_outputs + 1));
    if (!c || !stage || !params) return weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory", f->name);
    memset(c, 0, sizeof *c);
    memset(stage, 0, sizeof *stage * (size_t)(s->n_stages ? s->n_stages : 1));
    memset(params, 0, sizeof *params * (size_t)(f->n_inputs + f->n_outputs + 1));
    c->a = a;
    c->s = s;
    c->f = f;
    c->caps = caps;
    c->stage = stage;
    c->params = params;
    const char *want = getenv("WEFT_DUMP");
    for (int i = 0; i < N_PASSES; i++) {
        rc = passes[i].run(c);
        if (rc == WEFT_OK && c->err != WEFT_OK) rc = c->err;
        if (rc != WEFT_OK) return rc;
        bool to_stderr = want && wanted(want, passes[i].name);
        if (!trace && !to_stderr) continue;
        weft_strbuf sb = {0};
        passes[i].dump(c, &sb);
        char *text = sb.failed ? NULL : weft_strbuf_take(&sb);
        weft_strbuf_free(&sb);
        const char *shown = text ? text : "(out of memory)\n";
        if (to_stderr) dump_stderr((void *)f->name, passes[i].name, shown);
        if (trace) trace(ud, passes[i].name, shown);
        free(text);
    }
    *out = c->lf;
    return WEFT_OK;
}

weft_status weft_lower(const weft_schedule *s, const weft_target_caps *caps, weft_arena *a, weft_loop_func **out)
{
    return weft_lower_traced(s, caps, a, out, NULL, NULL);
}
