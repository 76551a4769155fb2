/* What model/ offers the layers above it (the tuner) beyond the public API: compiling with a
 * schedule provider, and walking the TE kernels a graph compiles to. Everything else of
 * model/ is private (model/model_internal.h).
 */
#ifndef WEFT_MODEL_MODEL_H
#define WEFT_MODEL_MODEL_H
#include "ir/caps.h"
#include "ir/tensor.h"
#include "schedule/schedule.h"
#include "weft/graph.h"

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
 * extracting tuning tasks), except loop kernels on targets without thread binding (they have
 * no schedule: weft_op_loop). fn owns `a`, the arena holding f, and must destroy it. */
typedef weft_status (*weft_model_kernel_fn)(void *ud, weft_arena *a, weft_te_func *f, const char *name);
weft_status weft_model_each_kernel(const weft_graph *g, const weft_target_caps *caps, weft_model_kernel_fn fn, void *ud);

/* Compiles a static graph into a model (dynamic.c: one per concrete shape of a model with
 * symbolic dimensions): weft_model_compile, or the tuned compile with its database. */
typedef weft_status (*weft_model_instance_fn)(void *ud, const weft_graph *g, const weft_model_options *opt,
                                              weft_model **out);

/* A model of a graph with symbolic dimensions: kernels are compiled per concrete input shape
 * at first use by make(make_ud, specialized graph, opt) and cached; make_free(make_ud) at
 * destroy. Takes ownership of make_ud (freed on failure too). */
weft_status weft_model_compile_symbolic(const weft_graph *g, const weft_model_options *opt, weft_model_instance_fn make,
                                        void *make_ud, void (*make_free)(void *), weft_model **out);

#endif
