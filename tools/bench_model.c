/* weft bench model: one model's latency with default schedules, with tuned ones (--db; the
 * row only when the database gave at least one kernel a schedule), and the peers that run the
 * same model in the same run: PyTorch (bench/pytorch_peer.py under /usr/bin/python3) and ONNX
 * Runtime (bench/ort_peer.py under bench/.venv, made by bench/setup_peers.sh). A peer that is
 * not installed is a note on stderr, not an error.
 *
 * Every row is timed by turns: N/10 runs (at least 10) of the default and tuned models
 * (alternating run by run), then as many of each peer (in its --serve mode, started once), so
 * load from other processes falls on all rows alike. After its turn a peer's threads are let
 * go idle (ONNX Runtime's spin for about 40 ms) before the next turn starts.
 *
 * Inputs: the model's reference input NAME.input.bin next to NAME.onnx when the model has one
 * input of that size, else NAME.in.INPUT.bin for every input when each has its input's size
 * (scripts/gen_rnn.py's models), otherwise zeros (said on stderr).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/mem.h"
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

static void peer_row(const char *name, const char *model_name, int threads, double ms, bool csv)
{
    if (csv) printf("%s,%d,%s,%.4f\n", model_name, threads, name, ms);
    else printf("%-14s %7d %-11s %10.4f\n", model_name, threads, name, ms);
    fflush(stdout);
}

/* A peer in its --serve mode: it loads and checks the model, warms up, says "ready", then
 * answers "run N" on its stdin with "times_ms=T1,...,TN" (after one untimed run). */
typedef struct peer {
    const char *name, *missing; /* row name; the note when it cannot run */
    int no_pkg;                 /* its exit status for "not installed" */
    pid_t pid;
    FILE *to, *from;
    double *ts; /* its timed runs, ms */
    int n, cap;
    bool live;
    char last[512]; /* its last line that was not part of the protocol */
} peer;

/* Reads p's lines up to one starting with `want` (its rest in rest); false at end of file. */
static bool peer_line(peer *p, const char *want, char *rest, size_t n)
{
    char line[65536];
    while (fgets(line, sizeof line, p->from)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, want, strlen(want))) {
            snprintf(rest, n, "%s", line + strlen(want));
            return true;
        }
        if (line[0]) snprintf(p->last, sizeof p->last, "%.500s", line);
    }
    return false;
}

/* Ends p (closing its stdin ends its loop) and returns its exit status (128: killed). */
static int peer_stop(peer *p)
{
    if (p->to) fclose(p->to);
    if (p->from) fclose(p->from);
    p->to = p->from = NULL;
    int st = 0;
    if (p->pid > 0 && waitpid(p->pid, &st, 0) < 0) st = -1;
    p->pid = 0;
    p->live = false;
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Starts `python script MODEL --threads T --serve` with OPENBLAS_CORETYPE unset (and
 * OPENBLAS_NUM_THREADS=1 for PyTorch), its stdout and stderr on one pipe, and waits for its
 * "ready"; a peer that cannot run gets its note on stderr and stays out of the turns. */
static void peer_start(peer *p, const char *python, const char *script, const char *model, int threads, int repeat)
{
    char th[16], rep[16], rest[64];
    snprintf(th, sizeof th, "%d", threads);
    snprintf(rep, sizeof rep, "%d", repeat);
    p->ts = weft_malloc(sizeof *p->ts * (size_t)(repeat > 0 ? repeat : 1));
    p->cap = repeat;
    int in[2], out[2];
    if (access(python, X_OK) != 0 || !p->ts || pipe(in) != 0) {
        fprintf(stderr, "# %s: %s\n", p->name, p->missing);
        return;
    }
    if (pipe(out) != 0) {
        close(in[0]), close(in[1]);
        fprintf(stderr, "# %s: no pipe\n", p->name);
        return;
    }
    /* the child's environment, made here: between fork and exec only async-signal-safe calls */
    extern char **environ;
    size_t n_env = 0;
    while (environ[n_env]) n_env++;
    char **envp = weft_malloc(sizeof *envp * (n_env + 2));
    if (!envp) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        fprintf(stderr, "# %s: out of memory\n", p->name);
        return;
    }
    bool pytorch = strstr(script, "pytorch") != NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(environ[i], "OPENBLAS_CORETYPE=", 18) && (!pytorch || strncmp(environ[i], "OPENBLAS_NUM_THREADS=", 21)))
            envp[k++] = environ[i];
    if (pytorch) envp[k++] = "OPENBLAS_NUM_THREADS=1";
    envp[k] = NULL;
    char *argv[] = {(char *)python, (char *)script, (char *)model, "--threads", th, "--repeat", rep, "--serve", NULL};
    /* no other peer started later may hold these ends open (its stdin would never close) */
    for (int i = 0; i < 2; i++) fcntl(in[i], F_SETFD, FD_CLOEXEC), fcntl(out[i], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    p->pid = fork();
    if (p->pid == 0) {
        dup2(in[0], 0), dup2(out[1], 1), dup2(out[1], 2);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execve(python, argv, envp);
        _exit(127);
    }
    free(envp);
    close(in[0]), close(out[1]);
    if (p->pid < 0) {
        close(in[1]), close(out[0]);
        fprintf(stderr, "# %s: cannot start it\n", p->name);
        return;
    }
    p->to = fdopen(in[1], "w");
    p->from = fdopen(out[0], "r");
    if (!p->to || !p->from) {
        if (!p->to) close(in[1]);
        if (!p->from) close(out[0]);
        peer_stop(p);
        fprintf(stderr, "# %s: cannot start it\n", p->name);
        return;
    }
    if (peer_line(p, "ready", rest, sizeof rest)) {
        p->live = true;
        return;
    }
    int st = peer_stop(p);
    if (st == p->no_pkg || st == 127) fprintf(stderr, "# %s: %s\n", p->name, p->missing);
    else fprintf(stderr, "# %s: failed (exit %d)%s%s\n", p->name, st, p->last[0] ? ": " : "", p->last);
}

/* One turn of p: k timed runs appended to p->ts; a peer that stops answering leaves the turns. */
static void peer_turn(peer *p, int k)
{
    char rest[65536];
    if (!p->live) return;
    if (fprintf(p->to, "run %d\n", k) < 0 || fflush(p->to) != 0 || !peer_line(p, "times_ms=", rest, sizeof rest)) {
        int st = peer_stop(p);
        fprintf(stderr, "# %s: stopped answering (exit %d)%s%s\n", p->name, st, p->last[0] ? ": " : "", p->last);
        return;
    }
    char *c = rest;
    for (int i = 0; i < k; i++) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || !(v >= 0) || p->n >= p->cap) break;
        p->ts[p->n++] = v;
        c = *end == ',' ? end + 1 : end;
    }
}

/* How many of pid's threads are running or runnable (state R in /proc/PID/task/TID/stat); -1
 * when that cannot be read. (Their CPU time would not do: a running thread's is brought up to
 * date only at scheduler ticks, 4 ms apart.) */
static int running_threads(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sp[96], line[512];
        snprintf(sp, sizeof sp, "/proc/%d/task/%.16s/stat", (int)pid, e->d_name);
        FILE *f = fopen(sp, "r");
        if (!f) continue;
        const char *close_paren = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'R') n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* Waits (up to QUIET_MAX_S) until none of p's threads is running: ONNX Runtime's and OpenMP's
 * workers spin for a while after a run, and a spinning thread takes a core from the row timed
 * next (gru_enc_b1 at 2 threads: weft 0.73-0.79 ms with no ONNX Runtime row, 1.32-1.38 right
 * after ONNX Runtime's turns). */
static void peer_wait_quiet(const peer *p)
{
    const double QUIET_MAX_S = 0.5;
    double t0 = weft_rt_now();
    while (running_threads(p->pid) > 0 && weft_rt_now() - t0 < QUIET_MAX_S) {
        struct timespec q = {0, 500000};
        nanosleep(&q, NULL);
    }
}

/* After each of weft's turns: as many runs of each live peer, each followed by a wait for its
 * threads to go idle. */
typedef struct peer_turns {
    peer *peers;
    int n;
} peer_turns;

static void peers_turn(void *ctx, int runs)
{
    peer_turns *pt = ctx;
    for (int p = 0; p < pt->n; p++) {
        peer_turn(&pt->peers[p], runs);
        if (pt->peers[p].live) peer_wait_quiet(&pt->peers[p]);
    }
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
    /* the peers load and warm up first, then every row is timed by turns */
    peer peers[2] = {{.name = "pytorch", .missing = "not available (needs /usr/bin/python3 with torch)", .no_pkg = 4},
                     {.name = "onnxruntime", .missing = "not installed, run bench/setup_peers.sh", .no_pkg = 3}};
    int n_peers = 0;
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN); /* a peer that dies must not end weft */
    if (rc == 0 && weft_target_is_host(ops)) {
        char script[1024], python[1024];
        snprintf(script, sizeof script, "%s/bench/pytorch_peer.py", WEFT_SOURCE_DIR);
        peer_start(&peers[0], "/usr/bin/python3", script, model, threads, repeat);
        snprintf(python, sizeof python, "%s/bench/.venv/bin/python3", WEFT_SOURCE_DIR);
        snprintf(script, sizeof script, "%s/bench/ort_peer.py", WEFT_SOURCE_DIR);
        peer_start(&peers[1], python, script, model, threads, repeat);
        n_peers = 2;
    } else if (rc == 0) fprintf(stderr, "# peers: left out for --target %s (they run on the CPU)\n", target);
    double med[2] = {0, 0};
    /* turns of at least 10 runs: with 3 (30 runs in 10 turns) ONNX Runtime's lstm_cls ran 11.4
     * ms against 8.9 with 10 and 9.2 alone, each turn starting from the other rows' caches */
    int rounds = repeat / 10 < 1 ? 1 : repeat / 10 > 10 ? 10 : repeat / 10;
    peer_turns pt = {peers, n_peers};
    if (rc == 0) rc = weft_cli_time_runs_by_turns(lp, loaded, repeat, rounds, peers_turn, &pt, med);
    for (int pass = 0; pass < loaded; pass++) {
        if (rc == 0) peer_row(pass ? "tuned" : "default", name, threads, med[pass] * 1e3, csv);
        weft_cli_model_free(&l[pass]);
    }
    for (int p = 0; p < n_peers; p++) {
        bool timed = peers[p].live && peers[p].n == repeat;
        if (peers[p].live && !timed)
            fprintf(stderr, "# %s: answered %d of %d runs, no row\n", peers[p].name, peers[p].n, repeat);
        peer_stop(&peers[p]);
        if (rc == 0 && timed) peer_row(peers[p].name, name, threads, weft_cli_median(peers[p].ts, peers[p].n), csv);
        free(peers[p].ts);
    }
    signal(SIGPIPE, old_pipe);
    return rc;
}
