/* model/: from a graph to an executable model.
 *
 *   graph --clone--> fold constants --> fold BN into conv --> fold again --> dead code
 *         --fuse--> groups --kernel--> one TE kernel per group --schedule/lower/compile-->
 *         kernels --plan--> static memory plan (buffers reused by liveness) --> run
 *
 * On a host target (targets/target.h: no buffer operations) the arena is host memory and
 * kernels read the caller's input buffers in place; on a device target (device.c) the arena,
 * the constants and copies of the inputs live in device memory.
 *
 * passes.c (folding, BN, dead code), fuse.c (grouping by op pattern), kernel.c (group -> TE
 * kernel), compile.c (weft_model_compile: schedules, JIT, memory plan), run.c (executor,
 * profile, printing).
 */
#ifndef WEFT_MODEL_INTERNAL_H
#define WEFT_MODEL_INTERNAL_H
#include <pthread.h>

#include "ir/graph.h"
#include "model/model.h"
#include "ir/tensor.h"
#include "ops/graph_ops.h"
#include "runtime/runtime.h"
#include "schedule/schedule.h"
#include "targets/target.h"
#include "weft/graph.h"
#include "weft/model.h"

/* ---- passes.c ---- */
weft_status weft_model_fold_constants(weft_graph *g);
/* Folds node ni now when its inputs are constants and its outputs small (graph building). */
weft_status weft_model_fold_small(weft_graph *g, int ni);
weft_status weft_model_fold_batchnorm(weft_graph *g);
/* BatchNormalization read only by Convs without padding folds into their weights: passes.c. */
weft_status weft_model_fold_prenorm(weft_graph *g);
/* Conv taps that read only padding for every output (dilated convs on small maps) are cut
 * from the weights, with the padding they reached: passes.c. */
weft_status weft_model_conv_dead_taps(weft_graph *g);
/* Dilated convs whose taps read mostly padding become one conv per band of output rows and
 * columns (each with the taps that reach the image there), concatenated: passes.c. */
weft_status weft_model_conv_border_bands(weft_graph *g);
/* Moves nodes [first, n_nodes) to just before node `at`, keeping both runs' orders (nodes made
 * for node `at` go before its consumers: fusion takes node order as a topological order);
 * producers follow. passes.c. */
weft_status weft_model_move_before(weft_graph *g, int at, int first);
/* Whether node nd is a Transpose that moves its input's last axis elsewhere (its output's last
 * axis is then strided in the input): passes.c. */
bool weft_model_transpose_moves_last(const weft_graph *g, const weft_gnode *nd);
/* Views that only drop or insert unit dims moved below the elementwise op reading them: passes.c. */
weft_status weft_model_sink_unit_views(weft_graph *g);
weft_status weft_model_pretranspose_weights(weft_graph *g);
/* winograd: -1 direct convs only, 0 Winograd where the rule takes it, 2 or 4 that size only */
weft_status weft_model_conv_weight_layout(weft_graph *g, int64_t fb, int64_t winograd);
weft_status weft_model_matmul_weight_layout(weft_graph *g, int64_t nb);
void weft_model_dead_code(weft_graph *g);
/* recur.c: each GRU / LSTM / RNN node becomes its input projection (a MatMul + bias) and a
 * step kernel the executor runs once per time step (see the top of ops/nn_rnn.c). */
weft_status weft_model_expand_recurrent(weft_graph *g, int64_t nb);
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
 * (inputs first, then outputs); *name a readable kernel name ("conv_add_relu"). A group of
 * one recurrent node (def->step) gives its step kernel: *n_steps its run count and step[i]
 * (room for WEFT_MODEL_MAX_STEP_PARAMS) where param i points at each step; both may be NULL
 * (tuning tasks need the kernel only). Otherwise *n_steps = 0. */
#define WEFT_MODEL_MAX_STEP_PARAMS 32
weft_status weft_model_group_kernel(weft_arena *a, const weft_graph *g, const weft_group *grp, weft_te_func **out,
                                    int *params, int *n_params, char *name, size_t name_len, weft_op_step_param *step,
                                    int64_t *n_steps);

/* ---- compile.c / run.c ---- */
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
    int64_t n_steps;        /* > 0: a recurrence's step kernel, run n_steps times (run.c) with */
    weft_op_step_param *step; /* param p pointing at step[p] of each step; flops are all steps',
                                 est_us one step's */
} weft_model_kernel;

/* ---- dynamic.c ---- */
/* The concrete input shapes of a run of graph g: symbols bound by name, the rest from the
 * input byte sizes (either may be absent). shapes[i] receives input i's shape. */
weft_status weft_model_resolve_shapes(const weft_graph *g, int n_dims, const char *const *dim_names,
                                      const int64_t *dim_values, const size_t *input_bytes,
                                      int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS]);
/* The static model of front m for these input shapes, compiled now when not cached. */
weft_status weft_model_instance(weft_model *m, int64_t (*shapes)[WEFT_GRAPH_MAX_DIMS], weft_model **out);
/* Bytes of a tensor of type t with ndim dims. */
size_t weft_model_tensor_bytes(weft_type t, int ndim, const int64_t *shape);

/* The model's locks (compile.c). */
weft_status weft_model_init_locks(weft_model *m);

/* ---- run.c ---- */
/* Runs static model m once with its activations in `arena` (m->arena_bytes) and args (room
 * for m->max_params pointers); the pool when use_pool; profile counters when profile. */
weft_status weft_model_exec(weft_model *m, unsigned char *arena, void **args, const void *const *inputs,
                            void *const *outputs, bool use_pool, bool profile);

/* ---- device.c (device targets only) ---- */
/* Uploads the constants kernels read and plans where inputs go in the device arena. */
weft_status weft_model_device_setup(weft_model *m);
void weft_model_device_release(weft_model *m);
/* Gives context c a device arena for static model s (reallocated when too small or of
 * another model's target). */
weft_status weft_model_device_arena(weft_context *c, weft_model *s, const char *fn);
/* Frees c's arena, host or device. */
void weft_model_context_free_arena(weft_context *c);
/* Runs a recurrence's step kernel mk->n_steps times (run.c); init[p] is parameter p's step-0
 * storage when its value0 >= 0. Shared by the host and device executors. */
weft_status weft_model_run_steps(const weft_model *m, const weft_model_kernel *mk, void **args, void *const *init,
                                 const weft_exec *ex);
/* weft_model_exec for a device target: arena is the context's device arena. */
weft_status weft_model_exec_device(weft_model *m, unsigned char *arena, void **args, const void *const *inputs,
                                   void *const *outputs, bool profile);

/* ---- context.c ---- */
/* Records the inputs and outputs of the user's graph g as m->io (names copied). */
weft_status weft_model_record_io(weft_model *m, const weft_graph *g);
void weft_model_free_io(weft_model *m);

struct weft_context {
    weft_model *m;          /* the model it runs */
    weft_model *cur;        /* the static model of the prepared shapes (m itself when static) */
    unsigned char *arena;   /* activations of cur (a device address on a device target) */
    size_t arena_bytes;
    weft_model *arena_owner; /* the model whose target allocated a device arena; NULL: host */
    void **args;            /* scratch argument array */
    int n_args;
    int n_dims;             /* symbol bindings (weft_context_set_dim) */
    char *dim_names[16];
    int64_t dim_values[16];
};

struct weft_model {
    /* what the user's graph takes and gives (weft_model_*_info): inputs, then outputs */
    int n_in, n_out;
    weft_tensor_info *io;
    pthread_mutex_t lock;       /* the default context */
    pthread_mutex_t cache_lock; /* the shape cache (dynamic.c) */
    pthread_mutex_t pool_lock;  /* held by the run that uses the pool */
    weft_model *pool_owner;     /* a shape of a symbolic model: the model whose pool (and
                                   pool_lock) it borrows; NULL: its own */
    bool locks_ready;
    weft_context *ctx;          /* the default context (weft_model_run*), made at first use */
    /* symbolic dimensions (dynamic.c): src != NULL for a model compiled per shape; it then
     * has no kernels of its own */
    weft_graph *src;
    weft_model_options opt;
    weft_model_instance_fn make;
    void *make_ud;
    void (*make_free)(void *);
    int n_inst, cap_inst;
    weft_model **inst;
    /* static models */
    weft_graph *g;          /* the optimized clone */
    const weft_target_ops *ops;
    weft_target *target;
    weft_threadpool *pool;
    int n_kernels;
    weft_model_kernel *kernels;
    size_t arena_bytes;     /* activations: each context allocates its own arena */
    size_t *offset;         /* per graph value: its arena offset, SIZE_MAX when not planned */
    /* device targets (device.c) */
    void *dev_const;        /* the constants kernels read, one device allocation */
    size_t *dev_const_off;  /* per graph value: its offset in dev_const, SIZE_MAX: none */
    size_t *dev_input_off;  /* per graph input: its copy's offset in the device arena */
    size_t dev_arena_bytes; /* activations, then inputs */
    int max_params;
    bool profile;
    int64_t runs;
};

#endif
