/* Subcommands of the weft command, their option tables, and the argument helpers they share. */
#ifndef WEFT_TOOLS_CLI_H
#define WEFT_TOOLS_CLI_H
#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"
#include "targets/target.h"
#include "tuner/measure_gpu.h"
#include "tuner/tuner.h"
#include "weft/graph.h"
#include "tools/opts.h"

/* --threads accepts 1..WEFT_CLI_MAX_THREADS: more threads than that is a typo, not a machine
 * this runs on (oversubscribing the cores below it is allowed). */
#define WEFT_CLI_MAX_THREADS 256

#define WEFT_CLI_OPT_THREADS(help) {"--threads", WEFT_OPT_INT, "T", 1, WEFT_CLI_MAX_THREADS, false, help}
#define WEFT_CLI_OPT_CPU                                                                                               \
    {"--cpu", WEFT_OPT_STRING, "NAME", 0, 0, false,                                                                    \
     "generate code for another CPU of the same ISA family (an LLVM CPU name, optionally followed by :+feat,-feat), "  \
     "e.g. --cpu haswell for AVX2 on an AVX-512 machine"}

/* Option tables, one per subcommand (for `weft help` and the dispatch in weft.c). */
extern const weft_cmd_spec weft_spec_show, weft_spec_show_model, weft_spec_bench_op, weft_spec_bench_model, weft_spec_run,
    weft_spec_tune, weft_spec_db_ls, weft_spec_db_check, weft_spec_db_export, weft_spec_db_import, weft_spec_db_prune,
    weft_spec_db_best;

int weft_cmd_show(int argc, char **argv);
/* weft bench op, in weft-bench (bench/bench_op.c). */
int weft_cmd_bench(int argc, char **argv);
/* weft bench op, in weft: runs weft-bench (next to this executable) with argv ("op", then the
 * arguments); returns only on failure, 1 after a message. */
int weft_cli_exec_bench(int argc, char **argv);
/* Replaces this process by the executable `exe` next to it (same folder), with argv[0] exe and
 * then argv; returns only on failure, 1 after "weft CMD: cannot run ..." naming the cmake
 * target that builds it. */
int weft_cli_exec_sibling(const char *exe, const char *cmd, const char *target, int argc, char **argv);
int weft_cmd_run(int argc, char **argv);
int weft_cmd_show_model(int argc, char **argv);
int weft_cmd_bench_model(int argc, char **argv);
int weft_cmd_tune(int argc, char **argv);
/* weft tune, in two halves so that weft-mpi (tools/mpi_tune.c) can run the same command: the
 * options parsed and the tasks built, then weft_tune_tasks. */
typedef struct weft_cli_tune {
    weft_args a;
    weft_tune_options o;
    weft_task *tasks;
    int n;
    bool batch_given;     /* --batch was given (else weft-mpi sizes it by the ranks) */
    double rank_timeout;  /* --rank-timeout, seconds (0: not given) */
    weft_gpu_device gpu;  /* --target cuda[:sm_XX]: the device (o.gpu points here) */
} weft_cli_tune;
/* Parses `weft tune` arguments and builds the tasks: -1 when ready, else the exit status after
 * a message (weft_cli_tune_free either way). */
int weft_cli_tune_prepare(int argc, char **argv, weft_cli_tune *t);
void weft_cli_tune_free(weft_cli_tune *t);
/* The MPI job size this process runs in (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE), 0 when
 * not started by mpirun. */
int weft_cli_mpi_size(void);
/* argv[0] is the db subcommand (ls, check, ...). */
int weft_cmd_db(int argc, char **argv);

/* Applies a built-in schedule (naive, default, manual, random:SEED; NULL = naive) and then
 * step text (inline, or @FILE) to s. */
weft_status weft_cli_apply_schedule(weft_schedule *s, const char *which, const char *steps, const weft_target_caps *caps);
/* Parses "a,b,c" into up to max integers; returns the count or -1 on a malformed list. */
int weft_cli_parse_shape(const char *s, int64_t *out, int max);
/* --shape of a parsed command: the count, or -1 after printing an error naming the flag. */
int weft_cli_shape(const weft_args *a, int64_t *out, int max);
/* --target of a parsed command (llvm when absent): llvm or interp, built into this binary;
 * NULL after printing an error naming the flag. */
const weft_target_ops *weft_cli_target(const weft_args *a);
/* Whether target can run on this machine; when not (a cuda target without a CUDA driver),
 * prints one line "CMD: no CUDA driver ..." to stderr and returns false. */
bool weft_cli_device_ready(const char *target, const char *cmd);
/* ---- model.c: models for run, show MODEL and bench model ---- */
typedef struct weft_cli_model {
    weft_graph *g;
    weft_model *m;
    void **in, **out;  /* one buffer per graph input / output (inputs zeroed at load) */
    int n_kernels;
    int n_tuned;       /* kernels whose schedule came from the database */
} weft_cli_model;
/* Loads and compiles a model (tuned from db when not NULL: prints on stderr how many kernels
 * got a record and why the others did not); 0, or 1 after printing the error. */
int weft_cli_model_load(const weft_cmd_spec *spec, const char *path, int threads, const char *target, const char *db,
                        weft_cli_model *l);
/* --dim NAME=SIZE values of a parsed command (names point into buf); 0, or 2 after a message. */
typedef struct weft_cli_dims {
    int n;
    const char *names[16];
    char buf[16][64];
    int64_t values[16];
} weft_cli_dims;
int weft_cli_parse_dims(const weft_args *a, weft_cli_dims *d);
/* Same, with the parsed command: a model with symbolic dimensions is specialized to the sizes
 * of its --input files (without a command: an error). */
int weft_cli_model_load_args(const weft_cmd_spec *spec, const char *path, int threads, const char *target, const char *db,
                             const weft_args *a, weft_cli_model *l);
void weft_cli_model_free(weft_cli_model *l);
/* Why some kernels got no record of this machine from db_path (threads: <= 0 for the cores),
 * given where their schedules came from. */
void weft_cli_explain_untuned(const char *db_path, const char *target, int threads, const weft_tuned_summary *s, char *buf,
                              size_t n);
/* Reads every --input [NAME=]FILE into the model's input buffers: each input exactly once, a
 * file exactly its input's size. 0, 1 (a file error) or 2 (a usage error), after a message. */
int weft_cli_bind_inputs(const weft_args *a, weft_cli_model *l);
int weft_cli_read_input(const weft_cmd_spec *spec, weft_cli_model *l, int i, const char *path);
/* Where each output goes by --output NAME=FILE, FILE (one output) or DIR/ (every output as
 * DIR/NAME.bin): *paths[i] malloc'd or NULL (not written). 0, 1 or 2 as above. */
int weft_cli_plan_outputs(const weft_args *a, const weft_graph *g, char ***paths);
void weft_cli_free_paths(char **paths, int n);
int weft_cli_write_outputs(const weft_cmd_spec *spec, const weft_cli_model *l, char **paths);
/* Median seconds of n runs after three warm-up runs (run.c); 0, or 1 after a message. */
int weft_cli_time_runs(weft_cli_model *l, int n, double *median);
/* The same for n_models models whose runs alternate (run i of each, in turn), so a minute of
 * other load on the machine slows them alike: median[m] for model m. The n runs go in
 * `rounds` turns; after each, after_turn(ctx, runs of that turn) (NULL: none), and every turn
 * after the first starts with one untimed run of each model (bench model times its peers
 * between the turns). */
typedef void (*weft_cli_turn_fn)(void *ctx, int runs);
int weft_cli_time_runs_by_turns(weft_cli_model *const *l, int n_models, int n, int rounds, weft_cli_turn_fn after_turn,
                                void *ctx, double *median);
/* Median of t[0..n) (sorts t). */
double weft_cli_median(double *t, int n);
size_t weft_cli_value_bytes(const weft_graph *g, weft_value v);
/* "float32 [1, 3, 32, 32]" */
void weft_cli_value_desc(const weft_graph *g, weft_value v, char *buf, size_t n);

/* Reads a whole file into a malloc'd string (NULL on error). */
char *weft_cli_read_file(const char *path);

#endif
