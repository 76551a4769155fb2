/* Step text: one line per step, whitespace-separated tokens.
 *
 *   step   := NAME arg*                       NAME from schedule/steps.def
 *   split STAGE ITER F1 [F2 ...]              inner extents, outermost part first: ITER.0 .. ITER.n
 *   split STAGE ITER nparts N                 ITER.0 has extent N
 *   fuse STAGE IT1 IT2 [...]                  adjacent leaves, outermost first -> IT1@IT2@...
 *   reorder STAGE IT1 IT2 [...]               the given leaves take their own slots in this order
 *   parallel|vectorize|unroll STAGE ITER
 *   pragma STAGE ITER auto_unroll N
 *   pragma STAGE ITER prefetch TENSOR         TENSOR's reads of ITER's next iteration are
 *                                             prefetched while this one reuses its data
 *   bind STAGE ITER AXIS                      AXIS: blockIdx.x|y|z, threadIdx.x|y|z
 *   compute_at STAGE CONSUMER ITER
 *   compute_inline STAGE | compute_root STAGE
 *   cache_write STAGE SCOPE                   new stage STAGE.SCOPE computes STAGE
 *   cache_read TENSOR SCOPE READER [...]      new stage TENSOR.SCOPE read by READERs
 *   rfactor STAGE ITER                        new stage STAGE.rf: partial reductions over ITER
 *
 * Printing joins the tokens with single spaces, so print(parse(x)) is x normalized and
 * parse(print(step)) == step; replaying the printed list rebuilds the same schedule.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "runtime/mem.h"
#include "schedule/state.h"

static const struct {
    const char *text;
    int min_args;
    weft_status (*apply)(weft_schedule *, const weft_step *);
} step_table[WEFT_STEP_COUNT] = {
#define X(name, text, min_args, apply) {text, min_args, apply},
#include "schedule/steps.def"
#undef X
};

weft_status weft_sched_parse_step(const char *line, weft_step *out)
{
    memset(out, 0, sizeof *out);
    const char *p = line;
    char tok[WEFT_SCHED_NAME];
    int n_tok = 0;
    out->kind = -1;
    while (*p) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') break;
        size_t len = 0;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p) && *p != '#') p++;
        len = (size_t)(p - start);
        if (len >= sizeof tok)
            return weft_fail(WEFT_ERR_PARSE, "step '%s': token '%.*s...' is longer than %d characters", line, 20,
                             start, WEFT_SCHED_NAME - 1);
        if (memchr(start, ';', len))
            return weft_fail(WEFT_ERR_PARSE, "step '%s': ';' inside a step (it separates steps)", line);
        memcpy(tok, start, len);
        tok[len] = '\0';
        if (n_tok == 0) {
            for (int k = 0; k < WEFT_STEP_COUNT; k++)
                if (!strcmp(step_table[k].text, tok)) out->kind = k;
            if (out->kind < 0)
                return weft_fail(WEFT_ERR_PARSE,
                                 "step '%s': unknown step '%s' (expected split, fuse, reorder, parallel, vectorize, "
                                 "unroll, pragma, compute_at, compute_inline, compute_root, cache_write, cache_read, bind, rfactor)",
                                 line, tok);
        } else {
            if (out->n_args >= WEFT_STEP_MAX_ARGS)
                return weft_fail(WEFT_ERR_PARSE, "step '%s': more than %d arguments", line, WEFT_STEP_MAX_ARGS);
            memcpy(out->args[out->n_args++], tok, len + 1);
        }
        n_tok++;
    }
    if (n_tok == 0) return weft_fail(WEFT_ERR_PARSE, "empty step");
    if (out->n_args < step_table[out->kind].min_args)
        return weft_fail(WEFT_ERR_PARSE, "step '%s': %s needs at least %d arguments, got %d", line,
                         step_table[out->kind].text, step_table[out->kind].min_args, out->n_args);
    return WEFT_OK;
}

void weft_sched_print_step(const weft_step *st, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "%s", step_table[st->kind].text);
    for (int i = 0; i < st->n_args && used < n; i++) used += (size_t)snprintf(buf + used, n - used, " %s", st->args[i]);
}

weft_status weft_sched_apply_step(weft_schedule *s, const weft_step *st)
{
    /* Snapshot so a failing step leaves the schedule exactly as it was. */
    int n = s->n_stages;
    weft_stage *saved = weft_malloc(sizeof *saved * (size_t)(n ? n : 1));
    if (!saved) return weft_fail(WEFT_ERR_NOMEM, "schedule: out of memory");
    memcpy(saved, s->stages, sizeof *saved * (size_t)n);
    weft_status rc = step_table[st->kind].apply(s, st);
    if (rc == WEFT_OK) rc = weft_sched_check(s);
    if (rc != WEFT_OK) {
        char line[1200];
        weft_sched_print_step(st, line, sizeof line);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", weft_last_error());
        weft_fail(rc, "step '%s': %s", line, msg);
        memcpy(s->stages, saved, sizeof *saved * (size_t)n);
        s->n_stages = n;
        free(saved);
        return rc;
    }
    free(saved);
    if (s->n_steps == s->cap_steps) {
        int cap = s->cap_steps ? s->cap_steps * 2 : 16;
        weft_step *v = weft_realloc(s->steps, sizeof *v * (size_t)cap);
        if (!v) return weft_fail(WEFT_ERR_NOMEM, "schedule: out of memory");
        s->steps = v;
        s->cap_steps = cap;
    }
    s->steps[s->n_steps++] = *st;
    return WEFT_OK;
}

weft_status weft_schedule_apply(weft_schedule *s, const char *step_line)
{
    const char *p = step_line;
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') return WEFT_OK;
    weft_step st;
    weft_status rc = weft_sched_parse_step(step_line, &st);
    if (rc != WEFT_OK) return rc;
    return weft_sched_apply_step(s, &st);
}

weft_status weft_schedule_apply_text(weft_schedule *s, const char *text)
{
    const char *p = text;
    int line_no = 0;
    while (*p) {
        const char *e = p;
        while (*e && *e != '\n' && *e != ';') e++;
        line_no++;
        size_t len = (size_t)(e - p);
        char *line = weft_malloc(len + 1);
        if (!line) return weft_fail(WEFT_ERR_NOMEM, "schedule: out of memory");
        memcpy(line, p, len);
        line[len] = '\0';
        weft_status rc = weft_schedule_apply(s, line);
        free(line);
        if (rc != WEFT_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", weft_last_error());
            return weft_fail(rc, "line %d: %s", line_no, msg);
        }
        p = *e ? e + 1 : e;
    }
    return WEFT_OK;
}
