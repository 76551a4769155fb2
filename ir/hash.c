/* Structural hash and equality of tensor-expression kernels (rules in ir/hash.h).
 *
 * One walker serves both: it visits two kernels in lockstep and feeds each fact as a pair of
 * 64-bit words (the fact in a, the fact in b) to `put`. Hashing walks a kernel against itself
 * and mixes the words; equality walks two kernels and stops at the first pair that differs.
 * Every structural decision (number of children, which union member) is taken only after the
 * words that determine it compared equal, so the lockstep never reads past a mismatch, and the
 * two operations cannot disagree about what counts.
 *
 * Mixing is an xxHash64-style round per word and the xxHash64 avalanche at the end.
 */
#include "ir/hash.h"

#include <stdio.h>
#include <string.h>

#include "ir/stmt.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

/* Tags that keep facts of different kinds from aliasing in the word stream. */
enum { TAG_FUNC = 1, TAG_INPUT, TAG_OUTPUT, TAG_TENSOR, TAG_REDUCE, TAG_EXPR, TAG_VAR_AXIS, TAG_VAR_REDUCE, TAG_VAR_FREE };

typedef struct walker {
    bool hashing; /* else comparing */
    bool same;    /* comparing: no difference found yet */
    uint64_t h;
    const weft_te_func *fa, *fb;
    const weft_tensor *ta, *tb; /* tensors whose bodies are being walked */
} walker;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Feeds one fact; returns false once the kernels are known to differ. */
static bool put(walker *w, uint64_t x, uint64_t y)
{
    if (w->hashing) {
        uint64_t k = rotl(x * P2, 31) * P1;
        w->h = rotl(w->h ^ k, 27) * P1 + P4;
        return true;
    }
    if (x != y) w->same = false;
    return w->same;
}

static uint64_t dtype_word(weft_dtype t) { return (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16; }

static uint64_t float_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Position of t in f's topological order, or -1 (a tensor outside the kernel). */
static int64_t tensor_pos(const weft_te_func *f, const weft_tensor *t)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (f->tensors[i] == t) return i;
    return -1;
}

/* A variable as (binding kind, index) in the tensor whose body is walked. Variables bound by
 * nobody (invalid in a TE body) all look alike: only their dtype counts. */
static uint64_t var_word(const weft_tensor *t, const weft_expr *v)
{
    if (t && !t->is_placeholder) {
        for (int d = 0; d < t->ndim; d++)
            if (t->axis[d].var == v) return (uint64_t)TAG_VAR_AXIS << 32 | (uint64_t)d;
        for (int r = 0; r < t->n_reduce; r++)
            if (t->reduce_axis[r].var == v) return (uint64_t)TAG_VAR_REDUCE << 32 | (uint64_t)r;
    }
    return (uint64_t)TAG_VAR_FREE << 32;
}

static bool walk_expr(walker *w, const weft_expr *a, const weft_expr *b)
{
    if (!put(w, a != NULL, b != NULL)) return false;
    if (!a) return true;
    if (!put(w, (uint64_t)TAG_EXPR << 32 | a->kind, (uint64_t)TAG_EXPR << 32 | b->kind)) return false;
    if (!put(w, dtype_word(a->dtype), dtype_word(b->dtype))) return false;
    switch ((weft_expr_kind)a->kind) {
    case WEFT_EXPR_INT: return put(w, (uint64_t)a->u.imm_int, (uint64_t)b->u.imm_int);
    case WEFT_EXPR_FLOAT: return put(w, float_bits(a->u.imm_float), float_bits(b->u.imm_float));
    case WEFT_EXPR_VAR: return put(w, var_word(w->ta, a), var_word(w->tb, b));
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: return walk_expr(w, a->u.un.a, b->u.un.a);
    case WEFT_EXPR_SELECT:
        return walk_expr(w, a->u.sel.c, b->u.sel.c) && walk_expr(w, a->u.sel.t, b->u.sel.t) &&
               walk_expr(w, a->u.sel.f, b->u.sel.f);
    case WEFT_EXPR_CALL:
        if (!put(w, (uint64_t)a->u.call.fn, (uint64_t)b->u.call.fn)) return false;
        if (!put(w, (uint64_t)a->u.call.n, (uint64_t)b->u.call.n)) return false;
        for (int i = 0; i < a->u.call.n; i++)
            if (!walk_expr(w, a->u.call.args[i], b->u.call.args[i])) return false;
        return true;
    case WEFT_EXPR_TLOAD:
        if (!put(w, (uint64_t)tensor_pos(w->fa, a->u.tload.tensor), (uint64_t)tensor_pos(w->fb, b->u.tload.tensor)))
            return false;
        if (!put(w, (uint64_t)a->u.tload.n, (uint64_t)b->u.tload.n)) return false;
        for (int i = 0; i < a->u.tload.n; i++)
            if (!walk_expr(w, a->u.tload.idx[i], b->u.tload.idx[i])) return false;
        return true;
    case WEFT_EXPR_LOAD: {
        /* Loop IR inside a TE body is unusual; key the buffer by its type, size and slot. */
        const weft_buffer *ba = a->u.load.buf, *bb = b->u.load.buf;
        return put(w, dtype_word(ba->dtype), dtype_word(bb->dtype)) && put(w, (uint64_t)ba->size, (uint64_t)bb->size) &&
               put(w, (uint64_t)ba->param_index, (uint64_t)bb->param_index) &&
               walk_expr(w, a->u.load.index, b->u.load.index);
    }
    default:
        return walk_expr(w, a->u.bin.a, b->u.bin.a) && walk_expr(w, a->u.bin.b, b->u.bin.b);
    }
}

/* Type, shape and (for compute tensors) axes, reduction and body of one tensor. */
static bool walk_tensor(walker *w, const weft_tensor *a, const weft_tensor *b)
{
    if (!put(w, (uint64_t)TAG_TENSOR << 32 | a->is_placeholder, (uint64_t)TAG_TENSOR << 32 | b->is_placeholder))
        return false;
    if (!put(w, dtype_word(a->dtype), dtype_word(b->dtype))) return false;
    if (!put(w, (uint64_t)a->ndim, (uint64_t)b->ndim)) return false;
    for (int d = 0; d < a->ndim && d < WEFT_MAX_DIMS; d++)
        if (!put(w, (uint64_t)a->shape[d], (uint64_t)b->shape[d])) return false;
    if (a->is_placeholder) return true;
    for (int d = 0; d < a->ndim && d < WEFT_MAX_DIMS; d++)
        if (!put(w, (uint64_t)a->axis[d].extent, (uint64_t)b->axis[d].extent)) return false;
    if (!put(w, (uint64_t)TAG_REDUCE << 32 | (uint64_t)a->reduce, (uint64_t)TAG_REDUCE << 32 | (uint64_t)b->reduce))
        return false;
    if (!put(w, (uint64_t)a->n_reduce, (uint64_t)b->n_reduce)) return false;
    for (int r = 0; r < a->n_reduce && r < WEFT_MAX_DIMS; r++)
        if (!put(w, (uint64_t)a->reduce_axis[r].extent, (uint64_t)b->reduce_axis[r].extent)) return false;
    w->ta = a;
    w->tb = b;
    bool ok = walk_expr(w, a->body, b->body);
    w->ta = w->tb = NULL;
    return ok;
}

/* Inputs and outputs by position in the topological order; an input the outputs never read
 * is not in that order, so it also contributes its own type and shape. */
static bool walk_params(walker *w, uint64_t tag, int n, const weft_tensor **pa, const weft_tensor **pb)
{
    for (int i = 0; i < n; i++) {
        int64_t ia = tensor_pos(w->fa, pa[i]), ib = tensor_pos(w->fb, pb[i]);
        if (!put(w, tag << 32 | (uint64_t)i, tag << 32 | (uint64_t)i)) return false;
        if (!put(w, (uint64_t)ia, (uint64_t)ib)) return false;
        if (ia < 0 && !walk_tensor(w, pa[i], pb[i])) return false;
    }
    return true;
}

static bool walk_func(walker *w)
{
    const weft_te_func *a = w->fa, *b = w->fb;
    if (!put(w, (uint64_t)TAG_FUNC << 32 | (uint64_t)a->n_tensors, (uint64_t)TAG_FUNC << 32 | (uint64_t)b->n_tensors))
        return false;
    if (!put(w, (uint64_t)a->n_inputs, (uint64_t)b->n_inputs)) return false;
    if (!put(w, (uint64_t)a->n_outputs, (uint64_t)b->n_outputs)) return false;
    for (int i = 0; i < a->n_tensors; i++)
        if (!walk_tensor(w, a->tensors[i], b->tensors[i])) return false;
    return walk_params(w, TAG_INPUT, a->n_inputs, a->inputs, b->inputs) &&
           walk_params(w, TAG_OUTPUT, a->n_outputs, a->outputs, b->outputs);
}

uint64_t weft_te_func_hash(const weft_te_func *f)
{
    walker w = {.hashing = true, .same = true, .h = P5, .fa = f, .fb = f};
    walk_func(&w);
    uint64_t h = w.h;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

bool weft_te_func_equal(const weft_te_func *a, const weft_te_func *b)
{
    if (a == b) return true;
    if (!a || !b) return false;
    walker w = {.hashing = false, .same = true, .fa = a, .fb = b};
    return walk_func(&w) && w.same;
}

void weft_te_func_hash_hex(const weft_te_func *f, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)weft_te_func_hash(f));
}
