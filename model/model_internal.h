/* model/: from a graph to an executable model.
 *
 *   graph --clone--> fold constants --> fold BN into conv --> fold again --> dead code
 *         --fuse--> groups --kernel--> one TE kernel per group --schedule/lower/compile-->
 *         kernels --plan--> static memory plan (buffers reused by liveness) --> run
 *
 * passes.c (folding, BN, dead code), fuse.c (grouping by op pattern), kernel.c (group -> TE
 * kernel), compile.c (weft_model_compile: schedules, JIT, memory plan), run.c (executor,
 * profile, printing).
 */
#ifndef WEFT_MODEL_INTERNAL_H
#define WEFT_MODEL_INTERNAL_H
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/graph_ops.h"
#include "runtime/runtime.h"
#include "schedule/schedule.h"
#include "targets/target.h"
#include "weft/graph.h"

/* ---- passes.c ---- */
weft_status weft_model_fold_constants(weft_graph *g);
/* Folds node ni now when its inputs are constants and its outputs small (graph building). */
weft_status weft_model_fold_small(weft_graph *g, int ni);
weft_status weft_model_fold_batchnorm(weft_graph *g);
weft_status weft_model_pretranspose_weights(weft_graph *g);
weft_status weft_model_conv_weight_layout(weft_graph *g, int64_t fb);
weft_status weft_model_matmul_weight_layout(weft_graph *g, int64_t nb);
void weft_model_dead_code(weft_graph *g);
/* Storage root of value v: follows alias ops (Reshape, Flatten, ...) back to the value that
 * owns the bytes. */
int weft_model_storage_root(const weft_graph *g, int v);

/* ---- fuse.c ---- */
typedef struct weft_group {
    int n_nodes;
    int *nodes;        /* node indices, topological order */
    int n_inputs;      /* external values read (graph inputs, constants, other groups' outputs) */
    int *inputs;
    int n_outputs;     /* values used outside the group or graph outputs */
    int *outputs;
} weft_group;

/* Fuses the live non-alias nodes of g into groups (kernels), in execution order. Caller frees
 * with weft_model_groups_free. */
weft_status weft_model_fuse(const weft_graph *g, weft_group **out, int *n_out);
void weft_model_groups_free(weft_group *groups, int n);

/* ---- kernel.c ---- */
/* The TE kernel of a group, in arena a. params[i] receives the graph value of kernel param i
 * (inputs first, then outputs); *name a readable kernel name ("conv_add_relu"). */
weft_status weft_model_group_kernel(weft_arena *a, const weft_graph *g, const weft_group *grp, weft_te_func **out,
                                    int *params, int *n_params, char *name, size_t name_len);

/* ---- compile.c / run.c ---- */
/* Chooses the schedule of one kernel: applies steps to s (a naive schedule of f) and names
 * their source in src (at most 15 characters: "default", "tuned", "nearest"). attempt is 0 for
 * a kernel's first choice; k > 0 when the schedule given at attempt k-1 did not lower or
 * compile, asking for the next choice (s is a fresh naive schedule again). Src "default"
 * means the default schedule and ends the retries. */
typedef weft_status (*weft_model_schedule_fn)(void *ud, const weft_te_func *f, weft_schedule *s,
                                              const weft_target_caps *caps, int attempt, char *src);
/* weft_model_compile with a schedule provider (NULL: the default schedules); *n_provided
 * (optional) counts kernels whose schedule did not come from the default. */
weft_status weft_model_compile_ex(const weft_graph *g, const weft_model_options *opt, weft_model_schedule_fn provider,
                                  void *ud, int *n_provided, weft_model **out);
/* Calls fn with the TE kernel of every fused group of g, as compiling would build them (for
 * extracting tuning tasks). fn owns `a`, the arena holding f, and must destroy it. */
typedef weft_status (*weft_model_kernel_fn)(void *ud, weft_arena *a, weft_te_func *f, const char *name);
weft_status weft_model_each_kernel(const weft_graph *g, const weft_target_caps *caps, weft_model_kernel_fn fn, void *ud);

typedef struct weft_model_kernel {
    char name[96];
    char schedule_src[16];  /* "default", "tuned" */
    weft_kernel *k;
    int n_params;
    int *params;            /* graph value per kernel argument */
    double flops;
    double est_us;          /* estimated one-thread time (see compile.c: serial kernels) */
    bool serial;            /* runs on the calling thread only: too small to gain from the pool */
    double time_sum;        /* profile: seconds summed over runs */
    int64_t calls;
    char *steps;            /* the schedule as step text (for printing) */
    char *ops;              /* the fused graph nodes, "Conv(name) Relu(name)" (for printing) */
} weft_model_kernel;

struct weft_model {
    weft_graph *g;          /* the optimized clone */
    const weft_target_ops *ops;
    weft_target *target;
    weft_threadpool *pool;
    int n_kernels;
    weft_model_kernel *kernels;
    unsigned char *arena;   /* activations */
    size_t arena_bytes;
    void **ptr;             /* per graph value: its storage (NULL for graph inputs) */
    void **args;            /* scratch argument array */
    int max_params;
    bool profile;
    int64_t runs;
};

#endif
