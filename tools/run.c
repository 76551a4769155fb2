/* weft run and weft show MODEL: ONNX model -> compiled model -> inference (tools/model.c loads
 * models and binds their inputs and outputs). Latency is the median of N timed runs after
 * warm-up runs; the outputs written are those of the last run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "tools/cli.h"
#include "runtime/mem.h"

static const weft_opt run_opts[] = {
    {"--input", WEFT_OPT_LIST, "[NAME=]FILE", 0, 0, false,
     "an input's data, raw little-endian in C order, exactly the input's size; NAME= may be left out when the model "
     "has one input; a symbolic dimension (ONNX dim_param) takes its size from the file"},
    {"--output", WEFT_OPT_LIST, "[NAME=]FILE|DIR/", 0, 0, false,
     "write an output (NAME=FILE; FILE alone when the model has one output) or every output as DIR/NAME.bin"},
    {"--dim", WEFT_OPT_LIST, "NAME=SIZE", 0, 0, false,
     "the size of a symbolic dimension, for one the input files cannot size alone (two symbolic dimensions in one "
     "input)"},
    WEFT_CLI_OPT_THREADS("threads to run with (default: the cores)"),
    {"--repeat", WEFT_OPT_INT, "N", 1, 1000000, false, "timed runs; the latency is their median (default 20)"},
    {"--profile", WEFT_OPT_FLAG, NULL, 0, 0, false, "print the time of each kernel"},
    {"--db", WEFT_OPT_STRING, "DB", 0, 0, false,
     "use the best records of this schedule database (default schedules for kernels without one)"},
    {"--target", WEFT_OPT_STRING, "NAME", 0, 0, false, "llvm (default), interp (the reference interpreter), cuda or cuda:sm_XX (need a CUDA driver and device; "
     "WEFT_CUDA_DRIVER names another driver library), hip or hip:gfxNNN (need a HIP runtime and an AMD GPU)"},
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_run = {
    "run", "MODEL.onnx --input [NAME=]FILE ... [--output [NAME=]FILE|DIR/ ...] [--dim NAME=SIZE ...] [--threads T] "
           "[--repeat N] [--profile] "
           "[--db DB] [--target llvm|interp|cuda|cuda:sm_XX] [--cpu NAME]",
    1, 1,
    "Compiles an ONNX model, runs it on the given inputs, prints its latency and writes its outputs.\n"
    "A model with one [N, C] float output (a classifier) also gets its predicted class per row.",
    run_opts,
    "examples:\n"
    "  weft run tests/data/models/resnet9.onnx --input tests/data/models/resnet9.input.bin --output y.bin\n"
    "  weft run two_in.onnx --input a=a.bin --input b=b.bin --output out/\n",
};

static const weft_opt show_model_opts[] = {
    WEFT_CLI_OPT_THREADS("threads to compile for (default: the cores)"),
    {"--db", WEFT_OPT_STRING, "DB", 0, 0, false, "schedules from this database's best records"},
    {"--target", WEFT_OPT_STRING, "NAME", 0, 0, false, "llvm (default) or interp"},
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_show_model = {
    "show", "MODEL.onnx [--threads T] [--db DB] [--target llvm|interp] [--cpu NAME]", 1, 1,
    "Prints the fused kernels of a model: what each one fuses, its shapes and where its schedule comes from.",
    show_model_opts,
    NULL,
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double weft_cli_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int weft_cli_time_runs_by_turns(weft_cli_model *const *l, int n_models, int n, int rounds, weft_cli_turn_fn after_turn,
                                void *ctx, double *median)
{
    double *ts = weft_malloc(sizeof *ts * (size_t)(n > 0 ? n : 1) * (size_t)n_models);
    if (!ts) return 1;
    if (rounds < 1) rounds = 1;
    int done = 0;
    for (int r = -1; r < rounds; r++) {
        int k = r < 0 ? 3 : (int)((int64_t)n * (r + 1) / rounds - (int64_t)n * r / rounds);
        /* r = -1: three warm-up runs; i = -1: a later turn's untimed first run */
        for (int i = r < 0 || rounds == 1 ? 0 : -1; i < k; i++)
            for (int m = 0; m < n_models; m++) {
                double t0 = weft_rt_now();
                if (weft_model_run(l[m]->m, (const void *const *)l[m]->in, l[m]->out) != WEFT_OK) {
                    fprintf(stderr, "weft: %s\n", weft_last_error());
                    free(ts);
                    return 1;
                }
                if (r >= 0 && i >= 0) ts[(size_t)m * (size_t)n + (size_t)(done + i)] = weft_rt_now() - t0;
            }
        if (r < 0) continue;
        done += k;
        if (after_turn) after_turn(ctx, k);
    }
    for (int m = 0; m < n_models; m++) median[m] = weft_cli_median(ts + (size_t)m * (size_t)n, n);
    free(ts);
    return 0;
}

int weft_cli_time_runs(weft_cli_model *l, int n, double *median)
{
    return weft_cli_time_runs_by_turns(&l, 1, n, 1, NULL, NULL, median);
}

/* A classifier's answer: the argmax of each row of the model's only output, when that output
 * is a float [batch, classes] tensor. */
static void print_classes(const weft_cli_model *l)
{
    if (weft_graph_n_outputs(l->g) != 1) return;
    weft_value ov = weft_graph_output(l->g, 0);
    int64_t shape[8];
    int nd = weft_graph_value_shape(l->g, ov, shape);
    if (nd != 2 || weft_graph_value_type(l->g, ov) != WEFT_TYPE_FLOAT32 || shape[1] < 2 || shape[1] > 1000) return;
    const float *y = l->out[0];
    printf("predicted class:");
    for (int64_t b = 0; b < shape[0] && b < 8; b++) {
        int64_t best = 0;
        for (int64_t c = 1; c < shape[1]; c++)
            if (y[b * shape[1] + c] > y[b * shape[1] + best]) best = c;
        printf(" %lld", (long long)best);
    }
    printf(shape[0] > 8 ? " ...\n" : "\n");
}

int weft_cmd_run(int argc, char **argv)
{
    weft_args a;
    int ex = weft_args_parse(&weft_spec_run, argc, argv, &a);
    if (ex >= 0) return ex;
    if (!weft_args_has(&a, "--input"))
        return weft_args_fail(&weft_spec_run, "--input [NAME=]FILE is required (once per model input)");
    if (!weft_cli_target(&a)) return 2;
    if (!weft_cli_device_ready(weft_args_str(&a, "--target", "llvm"), "weft run")) return 1;
    const char *model = a.pos[0];
    int threads = (int)weft_args_int(&a, "--threads", 0), repeat = (int)weft_args_int(&a, "--repeat", 20);
    weft_cli_model l;
    char **paths = NULL;
    double med = 0;
    int rc = weft_cli_model_load_args(&weft_spec_run, model, threads, weft_args_str(&a, "--target", NULL),
                                      weft_args_str(&a, "--db", NULL), &a, &l);
    if (rc == 0) rc = weft_cli_plan_outputs(&a, l.g, &paths);
    if (rc == 0) rc = weft_cli_bind_inputs(&a, &l);
    if (rc == 0) rc = weft_cli_time_runs(&l, repeat, &med);
    if (rc == 0) {
        printf("%s: %d kernels, latency %.3f ms (median of %d runs, %d threads)\n", model, l.n_kernels, med * 1e3, repeat,
               threads > 0 ? threads : weft_rt_cores());
        print_classes(&l);
    }
    if (rc == 0 && weft_args_has(&a, "--profile")) {
        weft_model_profile_enable(l.m, true);
        for (int i = 0; i < repeat && rc == 0; i++)
            if (weft_model_run(l.m, (const void *const *)l.in, l.out) != WEFT_OK) {
                fprintf(stderr, "weft run: %s\n", weft_last_error());
                rc = 1;
            }
        if (rc == 0) weft_model_profile_print(l.m, stdout);
    }
    if (rc == 0) rc = weft_cli_write_outputs(&weft_spec_run, &l, paths);
    weft_cli_free_paths(paths, l.g ? weft_graph_n_outputs(l.g) : 0);
    weft_cli_model_free(&l);
    return rc;
}

int weft_cmd_show_model(int argc, char **argv)
{
    weft_args a;
    int ex = weft_args_parse(&weft_spec_show_model, argc, argv, &a);
    if (ex >= 0) return ex;
    if (!weft_cli_target(&a)) return 2;
    weft_cli_model l;
    int rc = weft_cli_model_load(&weft_spec_show_model, a.pos[0], (int)weft_args_int(&a, "--threads", 0),
                                 weft_args_str(&a, "--target", NULL), weft_args_str(&a, "--db", NULL), &l);
    if (rc == 0) weft_model_print(l.m, stdout);
    weft_cli_model_free(&l);
    return rc;
}
