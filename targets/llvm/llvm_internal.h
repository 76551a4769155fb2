/* Private interface of the LLVM CPU backend (targets/llvm/).
 *
 *   target.c   ops table: create/destroy/caps/compile/run/kernel_destroy/dump
 *   jit.c      LLVM initialisation, target machine, O3 pipeline, ORC LLJIT, IR/asm text,
 *              conversion of LLVM errors into weft_fail messages
 *   codegen.c  loop IR statements -> LLVM IR (kernel function, loops, parallel outlining)
 *   expr.c     expressions -> LLVM values, scalar or <L x T> (one emitter for both)
 *   vector.c   VECTORIZED loops: stride analysis, contiguous loads/stores, gather/scatter
 *
 * A value produced by the expression emitter is a vector exactly when its LLVM type is a
 * vector type; that only happens while a VECTORIZED loop is being widened (cg->vvar set), and
 * only for expressions that depend on the vectorized variable. Scalars are broadcast where
 * they meet vectors.
 */
#ifndef WEFT_TARGETS_LLVM_INTERNAL_H
#define WEFT_TARGETS_LLVM_INTERNAL_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include "ir/error.h"
#include "targets/target.h"

/* One JIT session: an LLJIT plus the target machine used for optimisation and assembly. */
struct weft_target {
    LLVMOrcLLJITRef jit;
    LLVMTargetMachineRef tm; /* host CPU, Aggressive; used by LLVMRunPasses and dump(ASM) */
    char *triple;            /* LLVM-owned (LLVMDisposeMessage) */
    char *cpu;               /* malloc'd: the host's, or WEFT_CPU's (cpu.c) */
    char *features;          /* malloc'd */
    pthread_mutex_t lock;    /* serialises compile/dump: one target machine, one counter */
    uint64_t counter;        /* makes kernel symbol names unique within the JIT */
    bool slow_gather;        /* vector gathers cost about a load per lane or more: AMD Zen ("znver*") */
};

struct weft_kernel {
    void (*fn)(void **args, void *pool);
    LLVMOrcResourceTrackerRef rt; /* owns the kernel's code in the JIT */
    weft_target *t;
    int n_params;
};

/* cpu.c: WEFT_CPU (another CPU of the host's ISA family) replaces the host's name and
 * features; the machine part of the caps (vector width, registers, caches) from a feature list. */
weft_status weft_llvm_select_cpu(weft_target *t);
void weft_llvm_fill_machine_caps(const char *features, weft_target_caps *c);

/* A variable binding (innermost last): loop variables, shadowed by re-bindings inside
 * outlined parallel bodies and by the scalar `min` binding used for contiguous accesses. */
typedef struct weft_llvm_binding {
    const weft_expr *var;
    LLVMValueRef v;
    int64_t lo, hi; /* the values var takes, when known at compile time (lo <= hi); else lo > hi */
    int64_t copies; /* an UNROLLED loop's extent (its body is emitted that many times), else 1 */
} weft_llvm_binding;

/* A buffer allocated by ALLOCATE and in scope. */
typedef struct weft_llvm_local {
    const weft_buffer *buf;
    LLVMValueRef ptr;
    int64_t slack; /* elements allocated past buf->size (never written): a widened or guarded read may
                    * touch them (zeroed with the buffer where guarded loops read it) */
    int vars_at;   /* cg->n_vars when it was allocated: the loops inside it are bound after */
} weft_llvm_local;

enum { WEFT_LLVM_MAX_FACTS = 32 };

typedef struct weft_llvm_cg {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    const weft_loop_func *f;
    const char *sym; /* kernel symbol; outlined bodies are sym + ".par<N>" */
    LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_f32, t_f64, t_ptr, t_void;

    /* The function being emitted (the kernel or an outlined parallel body). */
    LLVMValueRef fn;
    LLVMBasicBlockRef entry; /* holds allocas only; branched to the body when finished */
    LLVMValueRef pool;       /* the pool argument, valid in fn */
    LLVMValueRef *params;    /* n_params base pointers, valid in fn */

    weft_llvm_binding *vars;
    int n_vars, cap_vars;
    weft_llvm_local *locals;
    int n_locals, cap_locals;
    bool in_parallel; /* inside an outlined body: nested PARALLEL loops run serially */
    int n_outlined;

    /* Vector mode: set while the body of a VECTORIZED loop is widened. */
    const weft_expr *vvar;
    int lanes;
    LLVMValueRef vmin; /* scalar i64 value of vvar in lane 0 */
    int64_t vmin_mult; /* a known divisor of vvar's lane-0 value (0: it is 0; 1: nothing known) */
    LLVMValueRef vmask; /* <lanes x i1> lanes enabled by enclosing IFs; NULL: all */
    const weft_stmt *vbody; /* the VECTORIZED loop's body */
    bool no_clamp;      /* emit integer MIN/MAX against a constant as its other operand (vector.c) */
    const weft_expr *no_clamp_var; /* ... only those that use this variable (NULL: all) */
    int lane_branch_depth;         /* selects on per-lane conditions branched around (expr.c) */
    /* what the enclosing select branches know: each term (or its negation) holds for every
     * lane, so a clamp it proves idle is read past (vector.c) */
    const weft_expr *facts[WEFT_LLVM_MAX_FACTS];
    bool fact_neg[WEFT_LLVM_MAX_FACTS];
    int n_facts;
    bool slow_gather;   /* t->slow_gather: stride-2 padding reads use a wide masked load */
    /* a store of a constant stride other than 1 is one scalar store per lane, not a scatter:
     * AMD Zen (slow_gather) or a CPU without AVX-512's scatter instruction. Zen 4, 1 thread,
     * 1x1 convs writing 16-filter vectors across planes: 112 -> 672 at 14x14 + SiLU 0.43 ->
     * 0.39 ms, 192 -> 1152 at 7x7 + SiLU 0.285 -> 0.265 (the scatter, microcoded, also kept
     * the epilogue's SiLU of the next vector from overlapping) */
    bool scalar_scatter;
    /* AVX-512F: a store under a constant lane mask is one instruction (vector.c's transposed
     * stores write rows of 7 lanes as one masked store of 8), and vscalefps builds exp's 2^n in
     * one; AVX512VL: its 256-bit form */
    bool avx512f, avx512vl;
} weft_llvm_cg;

/* The other operand of an integer MIN/MAX whose one operand is an integer constant (a clamp
 * of an index), else NULL. */
static inline const weft_expr *weft_llvm_clamp_arg(const weft_expr *e)
{
    if ((e->kind != WEFT_EXPR_MIN && e->kind != WEFT_EXPR_MAX) || !weft_dtype_is_int(e->dtype)) return NULL;
    if (e->u.bin.b->kind == WEFT_EXPR_INT) return e->u.bin.a;
    if (e->u.bin.a->kind == WEFT_EXPR_INT) return e->u.bin.b;
    return NULL;
}

/* ---- codegen.c ---- */
/* Builds the module for f in ctx, with triple and data layout of t, and verifies it. On
 * failure *out is NULL and every LLVM object made here is freed. */
weft_status weft_llvm_codegen(const weft_target *t, LLVMContextRef ctx, const weft_loop_func *f,
                              const char *sym, LLVMModuleRef *out);
weft_status weft_llvm_stmt(weft_llvm_cg *cg, const weft_stmt *s);
weft_status weft_llvm_bind(weft_llvm_cg *cg, const weft_expr *var, LLVMValueRef v);
/* The binding just made by weft_llvm_bind takes values in [lo, hi] (constant loop bounds). */
void weft_llvm_bound_last(weft_llvm_cg *cg, int64_t lo, int64_t hi);
/* Alloca in the entry block of the current function. */
LLVMValueRef weft_llvm_entry_alloca(weft_llvm_cg *cg, LLVMTypeRef ty, unsigned align);

/* ---- expr.c ---- */
weft_status weft_llvm_expr(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out);
/* A call of intrinsic `name`, overloaded on the n_ovl types ovl (NULL, 0: not overloaded). */
LLVMValueRef weft_llvm_intrinsic(weft_llvm_cg *cg, const char *name, LLVMTypeRef *ovl, unsigned n_ovl,
                                 LLVMValueRef *args, unsigned n);
/* e as a scalar i64 (index arithmetic); fails when e is a vector here. */
weft_status weft_llvm_index(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out);
/* Register type (bool is i1) and memory type (bool is i8) of a dtype; NULL if unsupported. */
LLVMTypeRef weft_llvm_type(weft_llvm_cg *cg, weft_dtype t);
LLVMTypeRef weft_llvm_mem_type(weft_llvm_cg *cg, weft_dtype t);
/* The innermost ALLOCATE in scope of buf, or NULL (a parameter, or out of scope). */
const weft_llvm_local *weft_llvm_local_of(const weft_llvm_cg *cg, const weft_buffer *buf);
/* Base pointer of buf in the current function. */
weft_status weft_llvm_buffer_ptr(weft_llvm_cg *cg, const weft_buffer *buf, LLVMValueRef *out);
/* Broadcast scalar v to `lanes` lanes. */
LLVMValueRef weft_llvm_splat(weft_llvm_cg *cg, LLVMValueRef v, int lanes);
/* Lane count of v's type, 0 for a scalar. */
int weft_llvm_lanes_of(LLVMValueRef v);
/* Value v (register form) converted to memory form (bool -> i8), and back. */
LLVMValueRef weft_llvm_to_mem(weft_llvm_cg *cg, weft_dtype t, LLVMValueRef v);
LLVMValueRef weft_llvm_from_mem(weft_llvm_cg *cg, weft_dtype t, LLVMValueRef v);

/* ---- vector.c ---- */
/* True when the VECTORIZED loop s can be widened (straight-line stores, constant extent). */
bool weft_llvm_vector_ok(const weft_stmt *s);
weft_status weft_llvm_vector_loop(weft_llvm_cg *cg, const weft_stmt *s);
/* A loop around one vectorized loop whose store writes each lane to a row of its own
 * (vector.c "transposed stores"): whether it applies (*stride: the rows' distance), and its
 * code. */
bool weft_llvm_transposed_store_ok(const weft_llvm_cg *cg, const weft_stmt *s, int64_t *stride);
weft_status weft_llvm_transposed_store(weft_llvm_cg *cg, const weft_stmt *s, int64_t stride);
/* Vector-mode LOAD and STORE (cg->vvar set). */
weft_status weft_llvm_vector_load(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out);
/* Vector-mode SELECT(c, LOAD, f) of a padding stage whose index clamps the vectorized
 * variable: *done false when e is not of that form (the caller emits it as usual). */
weft_status weft_llvm_vector_select_load(weft_llvm_cg *cg, const weft_expr *e, LLVMValueRef *out, bool *done);
weft_status weft_llvm_vector_store(weft_llvm_cg *cg, const weft_stmt *s);
/* Vector-mode IF: terms of the condition that do not depend on the vectorized variable branch,
 * the others narrow the lane mask under which loads and stores of the then-part run. */
weft_status weft_llvm_vector_if(weft_llvm_cg *cg, const weft_stmt *s);
/* Interval [*lo, *hi] of the integer expression e over the bindings' known ranges (affine
 * with constant factors, floordiv/floormod by positive constants, min/max); false if unknown. */
bool weft_llvm_int_range(const weft_llvm_cg *cg, const weft_expr *e, int64_t *lo, int64_t *hi);
/* +1 / -1 when the integer comparison term holds always / never over the bindings' known
 * ranges (constant loop bounds, narrowed by enclosing IFs), 0 when unknown. */
int weft_llvm_term_truth(const weft_llvm_cg *cg, const weft_expr *t);
/* Re-binds the variables of cond with their ranges narrowed to the values for which cond (or,
 * negated, its negation) can hold: the else-branch of a partitioned tile loop knows it is the
 * last tile. The caller restores cg->n_vars. */
weft_status weft_llvm_narrow_for_branch(weft_llvm_cg *cg, const weft_expr *cond, bool negated);

/* ---- jit.c ---- */
weft_status weft_llvm_jit_create(weft_target *t);
void weft_llvm_jit_destroy(weft_target *t);
/* Runs default<O3> with t's target machine. */
weft_status weft_llvm_optimize(weft_target *t, LLVMModuleRef mod);
/* Hands the module (and its thread-safe context) to the JIT and looks up sym. Takes ownership
 * of tsm in all cases. */
weft_status weft_llvm_jit_add(weft_target *t, LLVMOrcThreadSafeModuleRef tsm, const char *sym,
                              weft_kernel *k);
/* Assembly text of mod (malloc'd). */
weft_status weft_llvm_emit_asm(weft_target *t, LLVMModuleRef mod, char **out);
/* weft_fail(st, "<what>: <LLVM message>") and consumes err. */
weft_status weft_llvm_fail_error(weft_status st, LLVMErrorRef err, const char *what);

#endif
