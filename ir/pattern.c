/* Classifies a compute tensor by how its body reads other tensors; the default schedules
 * pick a template per pattern. The rule, over every TLOAD in the body (index expressions
 * included, so a gather counts):
 *
 *   no reduction axes:
 *     ELEMWISE   when each read's indices are integer constants or the tensor's own axis
 *                variables, with the axes appearing in increasing axis order and at most once.
 *                This admits broadcast (bias[j] or mx[i] read from [i,j]) and fixed slices
 *                (X[0, i]), but not transposes (X[j, i]), diagonals (X[i, i]) or arithmetic.
 *     INJECTIVE  otherwise (padding with clamped indices, strided/shifted reads, transposes).
 *   reduction axes:
 *     OUT_REDUCTION_REUSE  when some read's indices use at least one reduction axis and miss
 *                at least one output axis: that read streams along the reduction and its data
 *                is reused across the missed output axis, so tiling the output pays (matmul's
 *                A[i,k] misses j; conv's Wt[f,rc,ry,rx] misses n, y, x).
 *     REDUCTION  otherwise (row sums, softmax's max: X[i,k] uses every output axis). Reads that
 *                use no reduction axis (layer_norm's mean[i]) are per-output-point constants
 *                and do not count as reuse.
 * A placeholder has no body and classifies as ELEMWISE.
 */
#include "ir/pattern.h"

const char *const weft_op_pattern_names[WEFT_PATTERN_COUNT] = {
    "elemwise", "injective", "reduction", "out_reduction_reuse",
};

typedef struct pattern_scan {
    const weft_tensor *t;
    bool all_plain; /* every read so far indexes with ordered axes / constants */
    bool reuse;     /* some read uses a reduction axis but misses an output axis */
} pattern_scan;

/* Position of v among t's output axes, or -1. */
static int axis_position(const weft_tensor *t, const weft_expr *v)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->axis[d].var == v) return d;
    return -1;
}

static bool read_is_plain(const weft_tensor *t, const weft_expr *load)
{
    int last = -1;
    for (int i = 0; i < weft_expr_tload_n(load); i++) {
        const weft_expr *idx = weft_expr_tload_idx(load, i);
        if (idx->kind == WEFT_EXPR_INT) continue;
        int d = idx->kind == WEFT_EXPR_VAR ? axis_position(t, idx) : -1;
        if (d <= last) return false; /* not an axis, repeated or out of order */
        last = d;
    }
    return true;
}

static bool read_has_reuse(const weft_tensor *t, const weft_expr *load)
{
    bool uses_reduce = false, misses_axis = false;
    for (int r = 0; r < t->n_reduce && !uses_reduce; r++)
        uses_reduce = weft_expr_uses_var(load, t->reduce_axis[r].var);
    for (int d = 0; d < t->ndim && !misses_axis; d++)
        misses_axis = !weft_expr_uses_var(load, t->axis[d].var);
    return uses_reduce && misses_axis;
}

static void scan(pattern_scan *s, const weft_expr *e)
{
    if (!e) return;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR:
    case WEFT_EXPR_LOAD: return;
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: scan(s, weft_expr_operand(e)); return;
    case WEFT_EXPR_SELECT:
        scan(s, weft_expr_sel_cond(e));
        scan(s, weft_expr_sel_true(e));
        scan(s, weft_expr_sel_false(e));
        return;
    case WEFT_EXPR_CALL:
        for (int i = 0; i < weft_expr_call_n(e); i++) scan(s, weft_expr_call_arg(e, i));
        return;
    case WEFT_EXPR_TLOAD:
        s->all_plain = s->all_plain && read_is_plain(s->t, e);
        s->reuse = s->reuse || read_has_reuse(s->t, e);
        for (int i = 0; i < weft_expr_tload_n(e); i++) scan(s, weft_expr_tload_idx(e, i));
        return;
    default:
        scan(s, weft_expr_a(e));
        scan(s, weft_expr_b(e));
        return;
    }
}

weft_op_pattern weft_tensor_pattern(const weft_tensor *t)
{
    if (t->is_placeholder || !t->body) return WEFT_PATTERN_ELEMWISE;
    pattern_scan s = {.t = t, .all_plain = true, .reuse = false};
    scan(&s, t->body);
    if (t->n_reduce == 0) return s.all_plain ? WEFT_PATTERN_ELEMWISE : WEFT_PATTERN_INJECTIVE;
    return s.reuse ? WEFT_PATTERN_OUT_REDUCTION_REUSE : WEFT_PATTERN_REDUCTION;
}
