/* Expressions: one immutable tagged union shared by tensor expressions and loop IR (DESIGN #1).
 *
 * Nodes are allocated in a weft_arena and never change after construction; children are
 * `const weft_expr *`. Constructors fold two immediates and return NULL only when the arena has
 * failed (check weft_arena_failed once). Structural equality is weft_expr_equal; nodes are not
 * hash-consed (a choice for now: the simplifier compares structurally).
 *
 * Semantics: integer DIV truncates (C), FLOORDIV/FLOORMOD round toward -inf (ints only);
 * comparisons and logic produce bool; SELECT evaluates both arms (like LLVM select), so TE
 * authors keep both arms safe to evaluate (ops clamp padded indices). Index arithmetic is int64.
 *
 * kind        -> valid union member
 * INT         -> imm_int
 * FLOAT       -> imm_float (the value as double; float32 values are exact)
 * VAR         -> var {name, id}
 * binary ops  -> bin {a, b}
 * NOT, CAST   -> un {a}
 * SELECT      -> sel {c, t, f}
 * CALL        -> call {fn, n, args[]}
 * TLOAD       -> tload {tensor, n, idx[]}     tensor expressions only: multi-dim read
 * LOAD        -> load {buf, index}            loop IR only: flat element index
 * Read members only through the accessors below; they assert the kind.
 */
#ifndef WEFT_IR_EXPR_H
#define WEFT_IR_EXPR_H
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/dtype.h"

enum {
    WEFT_KF_BINARY = 1 << 0,
    WEFT_KF_ARITH = 1 << 1,
    WEFT_KF_COMPARE = 1 << 2,
    WEFT_KF_LOGIC = 1 << 3,
    WEFT_KF_COMMUTATIVE = 1 << 4,
};

typedef enum weft_expr_kind {
#define X(name, str, arity, flags) WEFT_EXPR_##name,
#include "ir/expr_kinds.def"
#undef X
    WEFT_EXPR_COUNT
} weft_expr_kind;

/* Math intrinsics usable in CALL. */
typedef enum weft_intrin {
    WEFT_INTRIN_EXP, WEFT_INTRIN_LOG, WEFT_INTRIN_SQRT, WEFT_INTRIN_RSQRT, WEFT_INTRIN_TANH,
    WEFT_INTRIN_ERF, WEFT_INTRIN_POW, WEFT_INTRIN_FABS, WEFT_INTRIN_SIGMOID,
    WEFT_INTRIN_FLOOR, WEFT_INTRIN_CEIL, WEFT_INTRIN_ROUND, /* ROUND: to nearest, ties to even */
    WEFT_INTRIN_SIN, WEFT_INTRIN_COS,
    WEFT_INTRIN_COUNT
} weft_intrin;

typedef struct weft_expr weft_expr;
typedef struct weft_tensor weft_tensor; /* ir/tensor.h */
typedef struct weft_buffer weft_buffer; /* ir/stmt.h */

struct weft_expr {
    uint16_t kind; /* weft_expr_kind */
    weft_dtype dtype;
    union {
        int64_t imm_int;
        double imm_float;
        struct { const char *name; uint32_t id; } var;
        struct { const weft_expr *a, *b; } bin;
        struct { const weft_expr *a; } un;
        struct { const weft_expr *c, *t, *f; } sel;
        struct { int fn; int n; const weft_expr **args; } call;
        struct { const weft_tensor *tensor; int n; const weft_expr **idx; } tload;
        struct { const weft_buffer *buf; const weft_expr *index; } load;
    } u;
};

extern const char *const weft_expr_kind_names[WEFT_EXPR_COUNT];
extern const int weft_expr_kind_arity[WEFT_EXPR_COUNT];
extern const unsigned weft_expr_kind_flags[WEFT_EXPR_COUNT];
extern const char *const weft_intrin_names[WEFT_INTRIN_COUNT];
/* Arity of an intrinsic (1, or 2 for pow). */
int weft_intrin_arity(weft_intrin fn);

static inline bool weft_expr_is_binary(const weft_expr *e)
{ return (weft_expr_kind_flags[e->kind] & WEFT_KF_BINARY) != 0; }
static inline bool weft_expr_is_const(const weft_expr *e)
{ return e->kind == WEFT_EXPR_INT || e->kind == WEFT_EXPR_FLOAT; }
static inline bool weft_expr_is_int_const(const weft_expr *e, int64_t v)
{ return e->kind == WEFT_EXPR_INT && e->u.imm_int == v; }

/* Accessors (assert the kind). */
static inline int64_t weft_expr_int(const weft_expr *e) { assert(e->kind == WEFT_EXPR_INT); return e->u.imm_int; }
static inline double weft_expr_float(const weft_expr *e) { assert(e->kind == WEFT_EXPR_FLOAT); return e->u.imm_float; }
static inline const char *weft_expr_var_name(const weft_expr *e) { assert(e->kind == WEFT_EXPR_VAR); return e->u.var.name; }
static inline uint32_t weft_expr_var_id(const weft_expr *e) { assert(e->kind == WEFT_EXPR_VAR); return e->u.var.id; }
static inline const weft_expr *weft_expr_a(const weft_expr *e)
{ assert(weft_expr_is_binary(e)); return e->u.bin.a; }
static inline const weft_expr *weft_expr_b(const weft_expr *e)
{ assert(weft_expr_is_binary(e)); return e->u.bin.b; }
static inline const weft_expr *weft_expr_operand(const weft_expr *e)
{ assert(e->kind == WEFT_EXPR_NOT || e->kind == WEFT_EXPR_CAST); return e->u.un.a; }
static inline const weft_expr *weft_expr_sel_cond(const weft_expr *e) { assert(e->kind == WEFT_EXPR_SELECT); return e->u.sel.c; }
static inline const weft_expr *weft_expr_sel_true(const weft_expr *e) { assert(e->kind == WEFT_EXPR_SELECT); return e->u.sel.t; }
static inline const weft_expr *weft_expr_sel_false(const weft_expr *e) { assert(e->kind == WEFT_EXPR_SELECT); return e->u.sel.f; }
static inline weft_intrin weft_expr_call_fn(const weft_expr *e) { assert(e->kind == WEFT_EXPR_CALL); return (weft_intrin)e->u.call.fn; }
static inline int weft_expr_call_n(const weft_expr *e) { assert(e->kind == WEFT_EXPR_CALL); return e->u.call.n; }
static inline const weft_expr *weft_expr_call_arg(const weft_expr *e, int i)
{ assert(e->kind == WEFT_EXPR_CALL && i >= 0 && i < e->u.call.n); return e->u.call.args[i]; }
static inline const weft_tensor *weft_expr_tload_tensor(const weft_expr *e) { assert(e->kind == WEFT_EXPR_TLOAD); return e->u.tload.tensor; }
static inline int weft_expr_tload_n(const weft_expr *e) { assert(e->kind == WEFT_EXPR_TLOAD); return e->u.tload.n; }
static inline const weft_expr *weft_expr_tload_idx(const weft_expr *e, int i)
{ assert(e->kind == WEFT_EXPR_TLOAD && i >= 0 && i < e->u.tload.n); return e->u.tload.idx[i]; }
static inline const weft_buffer *weft_expr_load_buf(const weft_expr *e) { assert(e->kind == WEFT_EXPR_LOAD); return e->u.load.buf; }
static inline const weft_expr *weft_expr_load_index(const weft_expr *e) { assert(e->kind == WEFT_EXPR_LOAD); return e->u.load.index; }

/* Constructors. All take the owning arena first; NULL children propagate to a NULL result. */
const weft_expr *weft_int(weft_arena *a, weft_dtype t, int64_t v);
const weft_expr *weft_i64(weft_arena *a, int64_t v);
const weft_expr *weft_float(weft_arena *a, weft_dtype t, double v);
const weft_expr *weft_f32(weft_arena *a, double v);
/* A fresh variable: never merged with another, identity is the pointer. */
const weft_expr *weft_var(weft_arena *a, const char *name, weft_dtype t);
/* Binary op of kind k (ADD..OR). Operands must have equal dtypes; comparisons give bool. */
const weft_expr *weft_binary(weft_arena *a, weft_expr_kind k, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_add(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_sub(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_mul(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_div(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_floordiv(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_floormod(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_min(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_max(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_cmp(weft_arena *a, weft_expr_kind k, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_and(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_or(weft_arena *a, const weft_expr *x, const weft_expr *y);
const weft_expr *weft_not(weft_arena *a, const weft_expr *x);
const weft_expr *weft_select(weft_arena *a, const weft_expr *c, const weft_expr *t, const weft_expr *f);
const weft_expr *weft_cast(weft_arena *a, weft_dtype t, const weft_expr *x);
const weft_expr *weft_call(weft_arena *a, weft_intrin fn, int n, const weft_expr *const *args);
const weft_expr *weft_call1(weft_arena *a, weft_intrin fn, const weft_expr *x);
/* Multi-dim read of a tensor (tensor expressions). n must equal the tensor's ndim. */
const weft_expr *weft_tload(weft_arena *a, const weft_tensor *t, int n, const weft_expr *const *idx);
/* Flat read of a buffer (loop IR). */
const weft_expr *weft_load(weft_arena *a, const weft_buffer *b, const weft_expr *index);

/* The direct children of e, in order (none for immediates and variables). Every tree walk of
 * expressions goes through these two, so a new kind needs handling here only. */
typedef void (*weft_expr_child_fn)(void *ud, const weft_expr *child);
void weft_expr_each_child(const weft_expr *e, weft_expr_child_fn fn, void *ud);
/* e rebuilt with each direct child c replaced by fn(ud, c) through the constructors (so
 * constants fold); e itself when no child changed; NULL when a child maps to NULL. */
typedef const weft_expr *(*weft_expr_map_fn)(void *ud, const weft_expr *child);
const weft_expr *weft_expr_map_children(weft_arena *a, const weft_expr *e, weft_expr_map_fn fn, void *ud);

/* Structural equality (variables compare by identity). */
bool weft_expr_equal(const weft_expr *x, const weft_expr *y);

/* Rebuilds e with every VAR found in `from[i]` replaced by `to[i]`; shares unchanged subtrees. */
const weft_expr *weft_expr_substitute(weft_arena *a, const weft_expr *e, int n,
                                      const weft_expr *const *from, const weft_expr *const *to);
/* True when variable v occurs in e. */
bool weft_expr_uses_var(const weft_expr *e, const weft_expr *v);
/* True when e loads from buf anywhere. */
bool weft_expr_reads_buf(const weft_expr *e, const weft_buffer *buf);
/* True when e loads from memory anywhere (LOAD or TLOAD). */
bool weft_expr_has_load(const weft_expr *e);

#endif
