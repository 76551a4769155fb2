/* weft run / weft show MODEL / weft bench model: ONNX model -> compiled model -> inference.
 *
 *   weft run MODEL.onnx --input X.bin --output Y.bin [--threads T] [--repeat N] [--profile]
 *            [--target llvm|interp]
 *   weft show MODEL.onnx [--threads T]             the fused kernels
 *   weft bench model MODEL.onnx [--threads T] [--csv] [--repeat N]
 *
 * Input and output files are raw little-endian float32 in C order, the way the reference data
 * is stored. Latency is the median of N timed runs after warm-up runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "tools/cli.h"
#include "tuner/tuner.h"
#include "weft/graph.h"
#include "weft/onnx.h"

#ifndef WEFT_SOURCE_DIR
#define WEFT_SOURCE_DIR "."
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t value_bytes(const weft_graph *g, weft_value v)
{
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    return n * (weft_graph_value_type(g, v) == WEFT_TYPE_INT64 ? 8 : weft_graph_value_type(g, v) == WEFT_TYPE_BOOL ? 1 : 4);
}

static void shape_str(const weft_graph *g, weft_value v, char *buf, size_t n)
{
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < nd && len < n; d++) len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (len < n) snprintf(buf + len, n - len, "]");
}

typedef struct loaded {
    weft_graph *g;
    weft_model *m;
    void **in, **out;
} loaded;

static void loaded_free(loaded *l)
{
    if (l->g) {
        for (int i = 0; l->in && i < weft_graph_n_inputs(l->g); i++) weft_rt_free(l->in[i]);
        for (int i = 0; l->out && i < weft_graph_n_outputs(l->g); i++) weft_rt_free(l->out[i]);
    }
    free(l->in);
    free(l->out);
    weft_model_destroy(l->m);
    weft_graph_destroy(l->g);
}

/* Loads and compiles a model (with the best schedules of db when given); allocates its
 * input/output buffers. */
static int load_db(const char *path, int threads, const char *target, const char *db, bool quiet, loaded *l)
{
    memset(l, 0, sizeof *l);
    if (weft_onnx_load(path, &l->g) != WEFT_OK) {
        fprintf(stderr, "weft: %s\n", weft_last_error());
        return 1;
    }
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    if (target && *target) o.target = target;
    int n_tuned = 0;
    weft_status rc = db && *db ? weft_model_compile_tuned(l->g, &o, db, &l->m, &n_tuned) : weft_model_compile(l->g, &o, &l->m);
    if (rc != WEFT_OK) {
        fprintf(stderr, "weft: %s: %s\n", path, weft_last_error());
        return 1;
    }
    if (db && *db && !quiet) {
        int n = weft_model_n_kernels(l->m);
        fprintf(stderr, "%s: %d of %d kernels tuned (schedules from %s), %d default%s\n", path, n_tuned, n, db, n - n_tuned,
                n_tuned == 0 ? " (no records for this machine: falling back to default schedules)" : "");
    }
    int ni = weft_graph_n_inputs(l->g), no = weft_graph_n_outputs(l->g);
    l->in = calloc((size_t)ni + 1, sizeof *l->in);
    l->out = calloc((size_t)no + 1, sizeof *l->out);
    for (int i = 0; l->in && i < ni; i++) l->in[i] = weft_rt_alloc(value_bytes(l->g, weft_graph_input(l->g, i)));
    for (int i = 0; l->out && i < no; i++) l->out[i] = weft_rt_alloc(value_bytes(l->g, weft_graph_output(l->g, i)));
    return l->in && l->out ? 0 : 1;
}

static int load(const char *path, int threads, const char *target, loaded *l)
{
    return load_db(path, threads, target, NULL, true, l);
}

static int read_input(loaded *l, const char *path)
{
    weft_value v = weft_graph_input(l->g, 0);
    size_t want = value_bytes(l->g, v);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "weft run: cannot open input %s: %s\n", path, strerror(errno));
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long got = ftell(f);
    fseek(f, 0, SEEK_SET);
    char shape[128];
    shape_str(l->g, v, shape, sizeof shape);
    if (got < 0 || (size_t)got != want) {
        fprintf(stderr, "weft run: input %s has %ld bytes, but input '%s' of shape %s float32 needs %zu bytes\n", path, got,
                weft_graph_value_name(l->g, v), shape, want);
        fclose(f);
        return 1;
    }
    size_t n = fread(l->in[0], 1, want, f);
    fclose(f);
    return n == want ? 0 : 1;
}

/* Median seconds of n runs after warm-up. */
static int time_runs(loaded *l, int n, double *median)
{
    double *ts = malloc(sizeof *ts * (size_t)(n > 0 ? n : 1));
    if (!ts) return 1;
    for (int w = 0; w < 3; w++)
        if (weft_model_run(l->m, (const void *const *)l->in, l->out) != WEFT_OK) {
            fprintf(stderr, "weft: %s\n", weft_last_error());
            free(ts);
            return 1;
        }
    for (int i = 0; i < n; i++) {
        double t0 = weft_rt_now();
        weft_model_run(l->m, (const void *const *)l->in, l->out);
        ts[i] = weft_rt_now() - t0;
    }
    qsort(ts, (size_t)n, sizeof *ts, cmp_double);
    *median = n % 2 ? ts[n / 2] : 0.5 * (ts[n / 2 - 1] + ts[n / 2]);
    free(ts);
    return 0;
}

int weft_cmd_run(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        fprintf(stderr, "usage: weft run MODEL.onnx --input X.bin --output Y.bin [--threads T] [--repeat N] [--profile]\n");
        return 2;
    }
    const char *in_path = weft_cli_opt(argc, argv, "--input"), *out_path = weft_cli_opt(argc, argv, "--output");
    const char *threads_s = weft_cli_opt(argc, argv, "--threads"), *repeat_s = weft_cli_opt(argc, argv, "--repeat");
    if (!in_path || !*in_path) {
        fprintf(stderr, "weft run: --input X.bin is required\n");
        return 2;
    }
    int threads = threads_s && *threads_s ? atoi(threads_s) : 0, repeat = repeat_s && *repeat_s ? atoi(repeat_s) : 20;
    if (repeat < 1) repeat = 1;
    loaded l;
    int rc = load_db(argv[0], threads, weft_cli_opt(argc, argv, "--target"), weft_cli_opt(argc, argv, "--db"), false, &l);
    if (rc == 0) rc = read_input(&l, in_path);
    bool profile = weft_cli_opt(argc, argv, "--profile") != NULL;
    double med = 0;
    if (rc == 0) rc = time_runs(&l, repeat, &med);
    if (rc == 0) {
        printf("%s: %d kernels, latency %.3f ms (median of %d runs, %d threads)\n", argv[0], weft_model_n_kernels(l.m), med * 1e3,
               repeat, threads > 0 ? threads : weft_rt_cores());
        /* A classifier's answer: the argmax of each row of a [batch, classes] output. */
        weft_value ov = weft_graph_output(l.g, 0);
        int64_t shape[8];
        int nd = weft_graph_value_shape(l.g, ov, shape);
        if (nd == 2 && shape[1] <= 1000) {
            const float *y = l.out[0];
            printf("predicted class:");
            for (int64_t b = 0; b < shape[0] && b < 8; b++) {
                int64_t best = 0;
                for (int64_t c = 1; c < shape[1]; c++)
                    if (y[b * shape[1] + c] > y[b * shape[1] + best]) best = c;
                printf(" %lld", (long long)best);
            }
            printf(shape[0] > 8 ? " ...\n" : "\n");
        }
    }
    if (rc == 0 && profile) {
        weft_model_profile_enable(l.m, true);
        for (int i = 0; i < repeat && rc == 0; i++)
            rc = weft_model_run(l.m, (const void *const *)l.in, l.out) == WEFT_OK ? 0 : 1;
        weft_model_profile_print(l.m, stdout);
    }
    if (rc == 0 && out_path && *out_path) {
        FILE *f = fopen(out_path, "wb");
        size_t want = value_bytes(l.g, weft_graph_output(l.g, 0));
        if (!f || fwrite(l.out[0], 1, want, f) != want) {
            fprintf(stderr, "weft run: cannot write %s\n", out_path);
            rc = 1;
        }
        if (f) fclose(f);
    }
    loaded_free(&l);
    return rc;
}

int weft_cmd_show_model(int argc, char **argv)
{
    loaded l;
    const char *threads_s = weft_cli_opt(argc, argv, "--threads");
    int rc = load(argv[0], threads_s && *threads_s ? atoi(threads_s) : 0, weft_cli_opt(argc, argv, "--target"), &l);
    if (rc == 0) weft_model_print(l.m, stdout);
    loaded_free(&l);
    return rc;
}

/* PyTorch's median for the same model and thread count, when /usr/bin/python3 has torch. */
static bool pytorch_median(const char *model, int threads, int repeat, double *ms)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 /usr/bin/python3 '%s/bench/pytorch_peer.py' '%s' --threads %d "
             "--repeat %d 2>/dev/null",
             WEFT_SOURCE_DIR, model, threads, repeat);
    FILE *p = popen(cmd, "r");
    if (!p) return false;
    char line[256];
    bool ok = false;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "median_ms=%lf", ms) == 1) ok = true;
    return pclose(p) == 0 && ok;
}

int weft_cmd_bench_model(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        fprintf(stderr, "usage: weft bench model MODEL.onnx [--threads T] [--csv] [--repeat N]\n");
        return 2;
    }
    const char *threads_s = weft_cli_opt(argc, argv, "--threads"), *repeat_s = weft_cli_opt(argc, argv, "--repeat");
    int threads = threads_s && *threads_s ? atoi(threads_s) : weft_rt_cores();
    int repeat = repeat_s && *repeat_s ? atoi(repeat_s) : 100;
    bool csv = weft_cli_opt(argc, argv, "--csv") != NULL;
    if (threads <= 0 || repeat <= 0) {
        fprintf(stderr, "weft bench model: --threads and --repeat must be positive\n");
        return 2;
    }
    const char *db = weft_cli_opt(argc, argv, "--db");
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strstr(name, ".onnx");
    if (dot) *dot = '\0';
    if (csv) printf("model,threads,schedule,median_ms\n");
    else printf("%-14s %7s %-9s %10s\n", "model", "threads", "schedule", "median_ms");
    int rc = 0;
    for (int pass = 0; pass < (db && *db ? 2 : 1) && rc == 0; pass++) {
        loaded l;
        double med = 0;
        rc = load_db(argv[0], threads, NULL, pass ? db : NULL, false, &l);
        /* Inputs: the model's own reference input when it sits next to it, else zeros. */
        if (rc == 0) {
            char in_path[1024];
            snprintf(in_path, sizeof in_path, "%s", argv[0]);
            char *d = strstr(in_path, ".onnx");
            if (d && (size_t)(d - in_path) + 11 < sizeof in_path) {
                strcpy(d, ".input.bin");
                FILE *f = fopen(in_path, "rb");
                if (f) {
                    fclose(f);
                    rc = read_input(&l, in_path);
                }
            }
        }
        if (rc == 0) rc = time_runs(&l, repeat, &med);
        if (rc == 0) {
            if (csv) printf("%s,%d,%s,%.4f\n", name, threads, pass ? "tuned" : "default", med * 1e3);
            else printf("%-14s %7d %-9s %10.4f\n", name, threads, pass ? "tuned" : "default", med * 1e3);
            fflush(stdout);
        }
        loaded_free(&l);
    }
    double pt;
    if (rc == 0 && pytorch_median(argv[0], threads, repeat, &pt)) {
        if (csv) printf("%s,%d,pytorch,%.4f\n", name, threads, pt);
        else printf("%-14s %7d %-9s %10.4f\n", name, threads, "pytorch", pt);
    } else if (rc == 0) fprintf(stderr, "# pytorch: not available (needs /usr/bin/python3 with torch)\n");
    return rc;
}
