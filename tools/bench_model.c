/* weft bench model: one model's latency with default schedules, with tuned ones (--db; the
 * row only when the database gave at least one kernel a schedule), and the peers that run the
 * same model in the same run: PyTorch (bench/pytorch_peer.py under /usr/bin/python3) and ONNX
 * Runtime (bench/ort_peer.py under bench/.venv, made by bench/setup_peers.sh). A peer that is
 * not installed is a note on stderr, not an error.
 *
 * The default and tuned rows are timed together, their runs alternating, so load from other
 * processes falls on both alike.
 *
 * Inputs: the model's reference input NAME.input.bin next to NAME.onnx when the model has one
 * input of that size, else NAME.in.INPUT.bin for every input when each has its input's size
 * (scripts/gen_rnn.py's models), otherwise zeros (said on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "tools/cli.h"

#ifndef WEFT_SOURCE_DIR
#define WEFT_SOURCE_DIR "."
#endif

static const weft_opt bench_model_opts[] = {
    WEFT_CLI_OPT_THREADS("threads for weft and the peers (default: the cores)"),
    {"--repeat", WEFT_OPT_INT, "N", 1, 1000000, false, "timed runs per row; a row is their median (default 100)"},
    {"--csv", WEFT_OPT_FLAG, NULL, 0, 0, false, "print CSV: model,threads,schedule,median_ms"},
    {"--db", WEFT_OPT_STRING, "DB", 0, 0, false, "add a tuned row with this database's best records"},
    {"--target", WEFT_OPT_STRING, "NAME", 0, 0, false,
     "llvm (default), interp, cuda or cuda:sm_XX (a CUDA device: each run is uploads, kernels, downloads and a "
     "synchronize; the CPU peers are left out)"},
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_bench_model = {
    "bench model", "MODEL.onnx [--threads T] [--repeat N] [--csv] [--db DB] [--target NAME] [--cpu NAME]", 1, 1,
    "Times a model with default schedules, with tuned ones (--db), and under PyTorch and ONNX Runtime when they are\n"
    "installed; every row is the median of N runs after warm-up.",
    bench_model_opts,
    "peers: PyTorch runs as /usr/bin/python3 bench/pytorch_peer.py (apt-get install python3-torch); ONNX Runtime as\n"
    "bench/.venv/bin/python3 bench/ort_peer.py (bash bench/setup_peers.sh installs it); both with OPENBLAS_CORETYPE "
    "unset.\n",
};

/* 'text' quoted for sh. */
static void sh_quote(char *buf, size_t n, const char *s)
{
    size_t len = 0;
    if (n < 3) return;
    buf[len++] = '\'';
    for (; *s && len + 6 < n; s++) {
        if (*s == '\'') {
            memcpy(buf + len, "'\\''", 4);
            len += 4;
        } else buf[len++] = *s;
    }
    buf[len++] = '\'';
    buf[len] = '\0';
}

/* Runs a peer's command line and reads its "median_ms=X" line. Returns the exit status (-1
 * when it could not run); *found says whether the line came; last holds its last other line. */
static int run_peer(const char *cmd, double *ms, bool *found, char *last, size_t n)
{
    *found = false;
    last[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "median_ms=%lf", ms) == 1) *found = true;
        else if (line[0] != '\n') {
            line[strcspn(line, "\n")] = '\0';
            snprintf(last, n, "%s", line);
        }
    }
    int st = pclose(p);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void peer_row(const char *name, const char *model_name, int threads, double ms, bool csv)
{
    if (csv) printf("%s,%d,%s,%.4f\n", model_name, threads, name, ms);
    else printf("%-14s %7d %-11s %10.4f\n", model_name, threads, name, ms);
    fflush(stdout);
}

static void bench_peers(const char *model, const char *model_name, int threads, int repeat, bool csv)
{
    char qmodel[2048], qdir[1024], cmd[8192], last[512];
    sh_quote(qmodel, sizeof qmodel, model);
    sh_quote(qdir, sizeof qdir, WEFT_SOURCE_DIR);
    double ms = 0;
    bool found;

    snprintf(cmd, sizeof cmd,
             "env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 /usr/bin/python3 %s/bench/pytorch_peer.py %s --threads %d "
             "--repeat %d 2>/dev/null",
             qdir, qmodel, threads, repeat);
    if (run_peer(cmd, &ms, &found, last, sizeof last) == 0 && found) peer_row("pytorch", model_name, threads, ms, csv);
    else fprintf(stderr, "# pytorch: not available (needs /usr/bin/python3 with torch)\n");

    char python[1024];
    snprintf(python, sizeof python, "%s/bench/.venv/bin/python3", WEFT_SOURCE_DIR);
    if (access(python, X_OK) != 0) {
        fprintf(stderr, "# onnxruntime: not installed, run bench/setup_peers.sh\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE %s/bench/.venv/bin/python3 %s/bench/ort_peer.py %s --threads %d "
                              "--repeat %d 2>&1",
             qdir, qdir, qmodel, threads, repeat);
    int st = run_peer(cmd, &ms, &found, last, sizeof last);
    if (st == 0 && found) peer_row("onnxruntime", model_name, threads, ms, csv);
    else if (st == 3) fprintf(stderr, "# onnxruntime: not installed, run bench/setup_peers.sh\n");
    else fprintf(stderr, "# onnxruntime: failed (exit %d)%s%s\n", st, last[0] ? ": " : "", last);
}

/* The reference input NAME.input.bin next to NAME.onnx, for a model with one input of its size,
 * or NAME.in.INPUT.bin for every input. */
static int reference_input(weft_cli_model *l, const char *model, bool quiet)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", model);
    char *d = strstr(path, ".onnx");
    struct stat st;
    bool have = d && (size_t)(d - path) + 11 < sizeof path;
    if (have) strcpy(d, ".input.bin");
    have = have && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (have && weft_graph_n_inputs(l->g) == 1 && (size_t)st.st_size == weft_cli_value_bytes(l->g, weft_graph_input(l->g, 0)))
        return weft_cli_read_input(&weft_spec_bench_model, l, 0, path);
    /* NAME.in.INPUT.bin per input (scripts/gen_rnn.py's models), each exactly its input's size */
    bool all = d != NULL;
    int n = weft_graph_n_inputs(l->g);
    for (int i = 0; i < n && all; i++) {
        weft_value v = weft_graph_input(l->g, i);
        snprintf(d, sizeof path - (size_t)(d - path), ".in.%s.bin", weft_graph_value_name(l->g, v));
        all = stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == weft_cli_value_bytes(l->g, v);
    }
    for (int i = 0; i < n && all; i++) {
        snprintf(d, sizeof path - (size_t)(d - path), ".in.%s.bin", weft_graph_value_name(l->g, weft_graph_input(l->g, i)));
        int rc = weft_cli_read_input(&weft_spec_bench_model, l, i, path);
        if (rc != 0) return rc;
    }
    if (all && n > 0) return 0;
    if (!quiet)
        fprintf(stderr, "# inputs: zeros (%s)\n",
                have ? "the reference input does not fit the model's inputs" : "no reference input next to the model");
    return 0;
}

int weft_cmd_bench_model(int argc, char **argv)
{
    weft_args a;
    int ex = weft_args_parse(&weft_spec_bench_model, argc, argv, &a);
    if (ex >= 0) return ex;
    const char *model = a.pos[0], *db = weft_args_str(&a, "--db", NULL), *target = weft_args_str(&a, "--target", NULL);
    const weft_target_ops *ops = weft_cli_target(&a);
    if (!ops) return 2;
    if (!weft_cli_device_ready(target ? target : "llvm", "weft bench model")) return 1;
    int threads = (int)weft_args_int(&a, "--threads", weft_rt_cores()), repeat = (int)weft_args_int(&a, "--repeat", 100);
    bool csv = weft_args_has(&a, "--csv");
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strstr(name, ".onnx");
    if (dot) *dot = '\0';
    if (csv) printf("model,threads,schedule,median_ms\n");
    else printf("%-14s %7s %-11s %10s\n", "model", "threads", "schedule", "median_ms");
    /* default and tuned are loaded together and their runs alternate */
    weft_cli_model l[2];
    weft_cli_model *lp[2] = {&l[0], &l[1]};
    int loaded = 0, rc = 0;
    for (int pass = 0; pass < (db ? 2 : 1) && rc == 0; pass++) {
        rc = weft_cli_model_load(&weft_spec_bench_model, model, threads, target, pass ? db : NULL, &l[pass]);
        if (rc != 0) break;
        loaded++;
        if (pass && l[pass].n_tuned == 0) {
            fprintf(stderr, "# tuned: no row, no kernel got a schedule from %s\n", db);
            weft_cli_model_free(&l[pass]);
            loaded--;
            break;
        }
        rc = reference_input(&l[pass], model, pass > 0);
    }
    double med[2] = {0, 0};
    if (rc == 0) rc = weft_cli_time_runs_alternating(lp, loaded, repeat, med);
    for (int pass = 0; pass < loaded; pass++) {
        if (rc == 0) peer_row(pass ? "tuned" : "default", name, threads, med[pass] * 1e3, csv);
        weft_cli_model_free(&l[pass]);
    }
    if (rc == 0 && weft_target_is_host(ops)) bench_peers(model, name, threads, repeat, csv);
    else if (rc == 0) fprintf(stderr, "# peers: left out for --target %s (they run on the CPU)\n", target);
    return rc;
}
