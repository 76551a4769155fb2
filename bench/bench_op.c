/* weft bench op: one process, one run, every schedule of one kernel and the vendor peers.
 *
 * Rows: naive (every stage at root, loops in declaration order), default (by pattern),
 * manual (the hand-written matmul schedule, matmul-like kernels only), openblas and onednn
 * (matmul only, when built with them; oneDNN's weights are pre-packed outside the timed loop),
 * and tuned (with --db: the best database record for this kernel on this machine).
 * Each row is the median of repeated runs after a warm-up, repeated until --min-time seconds
 * (at least 5 runs, at least 3 for slow ones). Every weft schedule's output is compared with
 * the naive schedule's before it is reported; a mismatch is an error, not a row.
 *
 * On the host every row but naive is built and checked first, then all are timed together, in
 * turns of about 20 ms each (the first run of a turn untimed: it pays for the switch, a thread
 * pool still spinning, caches the other row left), until each has its --min-time: a minute in
 * which other processes take memory bandwidth or a core then slows every row alike, and the
 * ratios between rows stay true on a shared machine.
 *
 * --target: a host target runs every row; a device target (CUDA) runs the default and tuned
 * rows on the device (inputs uploaded once, a timed run is the kernel's launches and a
 * synchronize, the output downloaded afterwards and checked against the default CPU schedule on
 * llvm, run once and not reported); naive, manual and the CPU peers are left out there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/peers.h"
#include "ir/error.h"
#include "ops/ops.h"
#include "compile/build.h"
#include "tools/cli.h"
#include "tuner/tuner.h"

typedef struct bench_ctx {
    const weft_te_func *f;
    int n_params;
    void *args[16];
    size_t bytes[16];
    float *reference; /* output 0 of the first schedule run (naive, or the device's CPU reference) */
    const char *ref_name;
    double flops;
    double min_time;
    int threads;
    bool csv;
    bool fastest; /* report the fastest run instead of the median */
    char shape[64];
    const char *db; /* --db: adds the tuned row */
} bench_ctx;

/* The fastest of ts[0..n) with `fastest`, else their median (weft_cli_median; sorts ts). */
static double run_stat(double *ts, int n, bool fastest)
{
    if (!fastest) return weft_cli_median(ts, n);
    double best = ts[0];
    for (int i = 1; i < n; i++)
        if (ts[i] < best) best = ts[i];
    return best;
}

typedef void (*run_fn)(void *ud);

/* Median seconds of fn over repeated runs after one warm-up (the fastest run with `fastest`:
 * on a machine shared with other work the median measures the load, the fastest run is the
 * one that had the core to itself). */
static double time_median(run_fn fn, void *ud, double min_time, bool fastest)
{
    double t0 = weft_rt_now();
    fn(ud);
    double first = weft_rt_now() - t0;
    int max_runs = 1000, min_runs = first > 0.2 ? 3 : 5;
    double *ts = malloc(sizeof *ts * (size_t)max_runs);
    if (!ts) return first;
    int n = 0;
    double start = weft_rt_now();
    while (n < max_runs && (n < min_runs || weft_rt_now() - start < min_time)) {
        double a = weft_rt_now();
        fn(ud);
        ts[n++] = weft_rt_now() - a;
    }
    double med = run_stat(ts, n, fastest);
    free(ts);
    return med;
}

/* A row timed together with the others (time_rows). */
typedef struct timed_row {
    char name[16];
    run_fn fn;
    void *ud;
    void (*cleanup)(void *ud);
    double *ts;
    int n, batch;
    double total;
} timed_row;

enum { MAX_ROWS = 8, MAX_RUNS = 1000 };

/* Times rows[0..nr-1] in turns of ~TURN_S each (the first run of a turn untimed) until every row
 * has min_runs runs and min_time seconds of timed runs (or MAX_RUNS runs). */
static void time_rows(timed_row *rows, int nr, double min_time)
{
    const double TURN_S = 0.02;
    for (int i = 0; i < nr; i++) {
        double t0 = weft_rt_now();
        rows[i].fn(rows[i].ud);
        double first = weft_rt_now() - t0;
        rows[i].batch = first > 0 ? (int)(TURN_S / first) : 100;
        if (rows[i].batch < 1) rows[i].batch = 1;
        if (rows[i].batch > 200) rows[i].batch = 200;
        rows[i].ts = malloc(sizeof(double) * MAX_RUNS);
        rows[i].n = 0;
        rows[i].total = 0;
    }
    for (bool more = true; more;) {
        more = false;
        for (int i = 0; i < nr; i++) {
            timed_row *r = &rows[i];
            int min_runs = r->n > 0 && r->total / r->n > 0.2 ? 3 : 5;
            if (!r->ts || r->n >= MAX_RUNS || (r->n >= min_runs && r->total >= min_time)) continue;
            more = true;
            r->fn(r->ud); /* untimed */
            for (int k = 0; k < r->batch && r->n < MAX_RUNS; k++) {
                double a = weft_rt_now();
                r->fn(r->ud);
                double dt = weft_rt_now() - a;
                r->ts[r->n++] = dt;
                r->total += dt;
            }
        }
    }
}

static double row_stat(timed_row *r, bool fastest)
{
    return r->ts && r->n > 0 ? run_stat(r->ts, r->n, fastest) : 0;
}

static void row(const bench_ctx *b, const char *sched, double sec)
{
    double gflops = b->flops / sec * 1e-9;
    if (b->csv) printf("%s,%s,%s,%d,%.1f,%.2f\n", b->f->name, b->shape, sched, b->threads, sec * 1e6, gflops);
    else printf("%-10s %-16s %-9s %7d %12.1f %9.2f\n", b->f->name, b->shape, sched, b->threads, sec * 1e6, gflops);
    fflush(stdout);
}

typedef struct kernel_run {
    const weft_target_ops *ops;
    weft_target *t; /* a device target: synchronize after each run */
    weft_kernel *k;
    void **args;
    weft_threadpool *pool;
    weft_status rc; /* the first failure */
    char msg[512];
} kernel_run;

static void run_kernel(void *ud)
{
    kernel_run *r = ud;
    weft_exec ex = {.pool = r->pool};
    weft_status rc = r->ops->run(r->k, r->args, &ex);
    if (rc == WEFT_OK && r->t) rc = r->ops->synchronize(r->t, &ex);
    if (rc != WEFT_OK && r->rc == WEFT_OK) {
        r->rc = rc;
        snprintf(r->msg, sizeof r->msg, "%s", weft_last_error());
    }
}

/* Max |x - ref| relative to max(1, max|ref|). */
static double rel_error(const float *x, const float *ref, size_t n)
{
    double md = 0, mr = 1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - (double)ref[i]);
        if (!(d <= md)) md = d; /* NaN propagates */
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    return md / mr;
}

/* A weft row kept for time_rows: its kernel and what owns it. */
typedef struct kept_kernel {
    kernel_run r;
    weft_schedule *s;
    weft_arena *a;
} kept_kernel;

static void kept_kernel_free(void *ud)
{
    kept_kernel *kk = ud;
    kk->r.ops->kernel_destroy(kk->r.k);
    weft_schedule_destroy(kk->s);
    weft_arena_destroy(kk->a);
    free(kk);
}

/* One row: `name`'s schedule timed. "reference" (a device target's reference) is the default
 * CPU schedule run once: it is not timed and prints no row. With `keep` (host rows), the
 * schedule is run once, checked and kept there for time_rows instead of timed here. */
static int bench_schedule(bench_ctx *b, const char *name, const weft_target_ops *ops, weft_target *t,
                          weft_threadpool *pool, timed_row *keep)
{
    bool reference = !strcmp(name, "reference");
    weft_target_caps caps;
    ops->caps(t, &caps);
    weft_schedule *s = NULL;
    weft_arena *a = weft_arena_create();
    weft_kernel *k = NULL;
    int status = 1;
    weft_status ap = WEFT_OK;
    if (a && weft_schedule_create(b->f, &s) == WEFT_OK) {
        if (!strcmp(name, "tuned")) {
            weft_db *db = NULL;
            weft_tuner_target tt;
            weft_tuner_target_init(&tt, &caps, b->threads);
            bool found = false;
            ap = weft_db_open(b->db, false, &db);
            if (ap == WEFT_OK) ap = weft_tuner_lookup(db, &tt, b->f, s, &found);
            weft_db_close(db);
            if (ap == WEFT_OK && !found) { /* nothing tuned for this kernel here: no row, not an error */
                fprintf(stderr, "# tuned: no record in %s for this kernel on %s\n", b->db, tt.key);
                weft_schedule_destroy(s);
                weft_arena_destroy(a);
                return 0;
            }
        } else ap = weft_cli_apply_schedule(s, reference ? "default" : name, NULL, &caps);
    } else ap = WEFT_ERR_NOMEM;
    if (ap != WEFT_OK || weft_target_build(ops, t, s, a, NULL, &k) != WEFT_OK) {
        fprintf(stderr, "weft bench: %s schedule: %s\n", name, weft_last_error());
        goto done;
    }
    int out = b->f->n_inputs;
    memset(b->args[out], 0, b->bytes[out]);
    kernel_run r = {.ops = ops, .k = k, .args = b->args, .pool = pool};
    void *dev[16] = {0};
    bool device = !weft_target_is_host(ops);
    weft_status dr = WEFT_OK;
    for (int i = 0; device && dr == WEFT_OK && i < b->n_params; i++) {
        dr = ops->alloc(t, b->bytes[i], &dev[i]);
        if (dr == WEFT_OK && i < out) dr = ops->upload(t, dev[i], b->args[i], b->bytes[i], NULL);
    }
    if (device) r.t = t, r.args = dev;
    double sec = 0;
    if (dr == WEFT_OK && (reference || keep)) run_kernel(&r);
    else if (dr == WEFT_OK) sec = time_median(run_kernel, &r, b->min_time, b->fastest);
    if (device && dr == WEFT_OK && r.rc == WEFT_OK) dr = ops->download(t, b->args[out], dev[out], b->bytes[out], NULL);
    if (device && dr == WEFT_OK && r.rc == WEFT_OK) dr = ops->synchronize(t, NULL);
    if (dr != WEFT_OK || r.rc != WEFT_OK)
        fprintf(stderr, "weft bench: %s schedule on %s: %s\n", name, ops->name, dr != WEFT_OK ? weft_last_error() : r.msg);
    for (int i = 0; device && i < b->n_params; i++) ops->free_buf(t, dev[i]);
    if (dr != WEFT_OK || r.rc != WEFT_OK) goto done;
    size_t n = b->bytes[out] / sizeof(float);
    if (!b->reference) {
        b->reference = malloc(b->bytes[out]);
        if (b->reference) memcpy(b->reference, b->args[out], b->bytes[out]);
    } else {
        double err = rel_error(b->args[out], b->reference, n);
        if (!(err <= 1e-4)) {
            fprintf(stderr, "weft bench: %s schedule disagrees with the %s (relative error %.3g)\n", name,
                    b->ref_name, err);
            goto done;
        }
    }
    if (keep) {
        kept_kernel *kk = malloc(sizeof *kk);
        if (!kk) goto done;
        *kk = (kept_kernel){.r = r, .s = s, .a = a};
        *keep = (timed_row){.fn = run_kernel, .ud = &kk->r, .cleanup = kept_kernel_free};
        snprintf(keep->name, sizeof keep->name, "%s", name);
        return 0;
    }
    if (!reference) row(b, name, sec);
    status = 0;
done:
    if (k) ops->kernel_destroy(k);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return status;
}

typedef struct peer_run {
    bench_peer *p;
    const float *A;
    float *C;
} peer_run;

static void run_peer(void *ud)
{
    peer_run *r = ud;
    bench_peer_run(r->p, r->A, r->C);
}

static void peer_free(void *ud)
{
    peer_run *r = ud;
    bench_peer_destroy(r->p);
    free(r);
}

/* The peers, each run once, checked, and added to rows (time_rows times them). */
static void bench_peers(bench_ctx *b, int64_t M, int64_t N, int64_t K, timed_row *rows, int *nr)
{
    static const char *const names[] = {"openblas", "onednn"};
    for (int i = 0; i < 2 && *nr < MAX_ROWS; i++) {
        bench_peer *p = NULL;
        if (bench_peer_create(names[i], (int)M, (int)N, (int)K, b->threads, b->args[1], &p) != WEFT_OK) {
            fprintf(stderr, "# %s: %s\n", names[i], weft_last_error());
            continue;
        }
        fprintf(stderr, "# %s: %s\n", names[i], bench_peer_info(names[i]));
        float *C = b->args[2];
        memset(C, 0, b->bytes[2]);
        peer_run *r = malloc(sizeof *r);
        if (!r) {
            bench_peer_destroy(p);
            continue;
        }
        *r = (peer_run){p, b->args[0], C};
        run_peer(r);
        double err = b->reference ? rel_error(C, b->reference, b->bytes[2] / sizeof(float)) : 0;
        if (!(err <= 1e-4)) {
            fprintf(stderr, "weft bench: %s disagrees with naive (relative error %.3g)\n", names[i], err);
            peer_free(r);
            continue;
        }
        rows[*nr] = (timed_row){.fn = run_peer, .ud = r, .cleanup = peer_free};
        snprintf(rows[*nr].name, sizeof rows[*nr].name, "%s", names[i]);
        (*nr)++;
    }
}

int weft_cmd_bench(int argc, char **argv)
{
    weft_args args;
    int ex = weft_args_parse(&weft_spec_bench_op, argc, argv, &args);
    if (ex >= 0) return ex;
    const char *op = args.pos[0];
    int64_t shape[16];
    int n = weft_cli_shape(&args, shape, 16);
    if (n < 0) return 2;
    bench_ctx b = {0};
    b.threads = (int)weft_args_int(&args, "--threads", weft_rt_cores());
    b.min_time = weft_args_float(&args, "--min-time", 1.0);
    b.csv = weft_args_has(&args, "--csv");
    b.db = weft_args_str(&args, "--db", NULL);
    snprintf(b.shape, sizeof b.shape, "%s", weft_args_str(&args, "--shape", ""));
    for (char *c = b.shape; *c; c++)
        if (*c == ',') *c = 'x';
    int status = 1;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_threadpool *pool = NULL;
    weft_target *t = NULL;
    weft_target *dt = NULL;
    const weft_target_ops *ops = weft_target_find("llvm"), *dops = weft_cli_target(&args);
    if (!dops) {
        weft_arena_destroy(a);
        return 2;
    }
    if (!weft_cli_device_ready(weft_args_str(&args, "--target", "llvm"), "weft bench op")) {
        weft_arena_destroy(a);
        return 1;
    }
    if (!ops) {
        fprintf(stderr, "weft bench: %s\n", weft_last_error());
        weft_arena_destroy(a);
        return 1;
    }
    if (weft_op_build(a, op, n, shape, &f) != WEFT_OK || weft_threadpool_create(b.threads, &pool) != WEFT_OK ||
        ops->create(&t) != WEFT_OK || dops->create(&dt) != WEFT_OK) {
        fprintf(stderr, "weft bench: %s\n", weft_last_error());
        goto done;
    }
    if (!strcmp(op, "matmul")) { /* may restart the process: before any output */
        weft_target_caps caps;
        ops->caps(t, &caps);
        bench_peers_settle(caps.vector_bits);
    }
    b.f = f;
    b.flops = weft_te_func_flops(f);
    b.n_params = f->n_inputs + f->n_outputs;
    uint64_t seed = 42;
    for (int i = 0; i < b.n_params; i++) {
        const weft_tensor *tt = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        b.bytes[i] = (size_t)weft_te_numel(tt) * (size_t)weft_dtype_bytes(tt->dtype);
        b.args[i] = weft_rt_alloc(b.bytes[i]);
        if (!b.args[i]) goto done;
        float *x = b.args[i];
        for (size_t e = 0; i < f->n_inputs && e < b.bytes[i] / 4; e++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[e] = (float)((seed >> 40) & 0xffff) / 32768.0f - 1.0f;
        }
    }
    b.fastest = weft_args_has(&args, "--fastest");
    const char *stat = b.fastest ? "fastest_us" : "median_us";
    if (b.csv) printf("kernel,shape,schedule,threads,%s,gflops\n", stat);
    else printf("%-10s %-16s %-9s %7s %12s %9s\n", "kernel", "shape", "schedule", "threads", stat, "gflops");
    bool host = weft_target_is_host(dops);
    /* a device target's reference is the default CPU schedule on llvm, run once (checked against
     * the naive schedule by the test suite; the naive schedule takes minutes at 4096^3) */
    b.ref_name = host ? "naive schedule" : "CPU reference (default schedule, llvm)";
    status = host ? bench_schedule(&b, "naive", dops, dt, pool, NULL) : bench_schedule(&b, "reference", ops, t, pool, NULL);
    /* host rows: built and checked here, timed together below */
    timed_row rows[MAX_ROWS];
    int nr = 0;
    const char *names[3] = {"default", NULL, NULL};
    bool matmul = !strcmp(op, "matmul") || !strcmp(op, "dense_bias_relu");
    int nn = 1;
    if (matmul && host) names[nn++] = "manual";
    if (b.db) names[nn++] = "tuned";
    for (int i = 0; i < nn && status == 0; i++) {
        rows[nr].fn = NULL;
        status = bench_schedule(&b, names[i], dops, dt, pool, host ? &rows[nr] : NULL);
        if (status == 0 && host && rows[nr].fn) nr++;
    }
    if (status == 0 && !strcmp(op, "matmul") && host) bench_peers(&b, shape[0], shape[1], shape[2], rows, &nr);
    if (status == 0 && nr > 0) {
        time_rows(rows, nr, b.min_time);
        for (int i = 0; i < nr; i++) row(&b, rows[i].name, row_stat(&rows[i], b.fastest));
    }
    for (int i = 0; i < nr; i++) {
        rows[i].cleanup(rows[i].ud);
        free(rows[i].ts);
    }
done:
    for (int i = 0; i < b.n_params; i++) weft_rt_free(b.args[i]);
    free(b.reference);
    if (t) ops->destroy(t);
    if (dt) dops->destroy(dt);
    weft_threadpool_destroy(pool);
    weft_arena_destroy(a);
    return status;
}
