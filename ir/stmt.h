/* Loop IR: the output of lowering and the input of every target and of the interpreter.
 *
 * Statements are immutable and arena-allocated like expressions, but never shared or merged:
 * a loop is *the* loop. Buffers are flat arrays of elements; every access uses a flat element
 * index (int64). Loop variables are int64 VARs bound by exactly one FOR.
 *
 * kind      -> valid member
 * FOR       -> loop {var, min, extent, kind, thread_axis, auto_unroll, body}
 * STORE     -> store {buf, index, value}          buf[index] = value
 * ALLOCATE  -> alloc {buf, body}                  buf lives for the duration of body
 * IF        -> cond {cond, then_s, else_s}        else_s may be NULL
 * SEQ       -> seq {n, items[]}
 * BARRIER   -> (no fields)                        every thread of a GPU block waits here
 *                                                 (__syncthreads); a no-op on the CPU
 * PREFETCH  -> store {buf, index} (value NULL)    a hint: buf[index]'s cache line will be read
 *                                                 soon; no effect on results, never faults
 *                                                 (the index may lie outside the buffer)
 *
 * Loop kinds: SERIAL; PARALLEL (iterations may run on different threads; only the outermost
 * parallel loop of a nest is run in parallel, inner ones run serially); VECTORIZED (extent is
 * a constant; the body is a straight line of stores, widened by the target or run serially);
 * UNROLLED (constant extent, body replicated); THREAD_BOUND (GPU targets: the loop variable is
 * thread_axis's index). auto_unroll > 0 on a loop asks lowering to unroll inner loops whose
 * total trip count is at most that many steps.
 */
#ifndef WEFT_IR_STMT_H
#define WEFT_IR_STMT_H
#include "ir/expr.h"

typedef enum weft_scope { WEFT_SCOPE_GLOBAL, WEFT_SCOPE_SHARED, WEFT_SCOPE_LOCAL, WEFT_SCOPE_COUNT } weft_scope;
extern const char *const weft_scope_names[WEFT_SCOPE_COUNT];

typedef enum weft_for_kind {
    WEFT_FOR_SERIAL, WEFT_FOR_PARALLEL, WEFT_FOR_VECTORIZED, WEFT_FOR_UNROLLED, WEFT_FOR_THREAD_BOUND,
    WEFT_FOR_KIND_COUNT
} weft_for_kind;
extern const char *const weft_for_kind_names[WEFT_FOR_KIND_COUNT];

typedef enum weft_thread_axis {
    WEFT_THREAD_NONE, WEFT_BLOCK_X, WEFT_BLOCK_Y, WEFT_BLOCK_Z, WEFT_THREAD_X, WEFT_THREAD_Y, WEFT_THREAD_Z,
    WEFT_THREAD_AXIS_COUNT
} weft_thread_axis;
extern const char *const weft_thread_axis_names[WEFT_THREAD_AXIS_COUNT];

struct weft_buffer {
    const char *name;
    weft_dtype dtype;
    int64_t size;        /* elements */
    weft_scope scope;
    int param_index;     /* position in the kernel's argument list, -1 for an ALLOCATE'd buffer */
    int ndim;            /* logical shape, for printing only */
    int64_t shape[8];
};

typedef enum weft_stmt_kind { WEFT_STMT_FOR, WEFT_STMT_STORE, WEFT_STMT_ALLOCATE, WEFT_STMT_IF, WEFT_STMT_SEQ, WEFT_STMT_BARRIER,
                                WEFT_STMT_PREFETCH, WEFT_STMT_COUNT } weft_stmt_kind;

typedef struct weft_stmt weft_stmt;
struct weft_stmt {
    weft_stmt_kind kind;
    union {
        struct {
            const weft_expr *var, *min, *extent;
            weft_for_kind kind;
            weft_thread_axis thread_axis;
            int auto_unroll; /* 0 = none */
            const weft_stmt *body;
        } loop;
        struct { const weft_buffer *buf; const weft_expr *index, *value; } store;
        struct { const weft_buffer *buf; const weft_stmt *body; } alloc;
        struct { const weft_expr *cond; const weft_stmt *then_s, *else_s; } cond;
        struct { int n; const weft_stmt **items; } seq;
    } u;
};

/* A lowered kernel: parameters in order (inputs then outputs), and the body. */
typedef struct weft_loop_func {
    const char *name;
    int n_params;
    const weft_buffer **params;
    const weft_stmt *body;
} weft_loop_func;

weft_buffer *weft_buffer_new(weft_arena *a, const char *name, weft_dtype t, int ndim, const int64_t *shape,
                             weft_scope scope, int param_index);
const weft_stmt *weft_for(weft_arena *a, const weft_expr *var, const weft_expr *min, const weft_expr *extent,
                          weft_for_kind kind, const weft_stmt *body);
/* FOR with every field given. */
const weft_stmt *weft_for_full(weft_arena *a, const weft_expr *var, const weft_expr *min, const weft_expr *extent,
                               weft_for_kind kind, weft_thread_axis axis, int auto_unroll, const weft_stmt *body);
const weft_stmt *weft_store(weft_arena *a, const weft_buffer *b, const weft_expr *index, const weft_expr *value);
const weft_stmt *weft_allocate(weft_arena *a, const weft_buffer *b, const weft_stmt *body);
const weft_stmt *weft_if(weft_arena *a, const weft_expr *cond, const weft_stmt *then_s, const weft_stmt *else_s);
const weft_stmt *weft_barrier(weft_arena *a);
const weft_stmt *weft_prefetch(weft_arena *a, const weft_buffer *b, const weft_expr *index);
/* SEQ of n items; NULL items are dropped, a single item is returned as is, zero items give an
 * empty SEQ. */
const weft_stmt *weft_seq(weft_arena *a, int n, const weft_stmt *const *items);

#endif
