/* Allocation failure, swept: each path below runs once for every N with its Nth allocation
 * failed (tests/reliability/sweep.h), until a run completes with no failure injected. Every run
 * whose allocation was failed must end with an error with a message (WEFT_ERR_NOMEM, or the
 * error of the step whose allocation failed), never a crash and never a silent fallback (a
 * smaller fusion, another schedule): "strict" paths may not succeed with a failure injected;
 * the tune may (a failure inside a measurement worker is that candidate's recorded error).
 * Under the asan suite LeakSanitizer checks at exit that no run leaked. After each run a check
 * asserts nothing is half-done: a model that compiled computes the reference output (max abs
 * error 1e-4 x max(1, max |ref|) against PyTorch's), a database passes SQLite's integrity check
 * and reopens.
 *
 * Paths: loading + compiling mlp.onnx (llvm target, and the interpreter target) and resnet9.onnx;
 * compiling mlp with tuned.db (records replayed and verified); one inference through
 * weft_model_run and through a context; a kernel whose local buffer comes from weft_rt_alloc_uninit
 * inside generated code; opening a database (new and existing); importing a dump (all or nothing);
 * a short tune of a small matmul
 * (3 measured candidates, database in a temp dir). WEFT_SWEEP_STRIDE=K samples every Kth N
 * (default 1: every N, except where a path says otherwise); WEFT_SWEEP_ONLY=NAME runs one test. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/api_test_util.h" /* read_floats */
#include "ir/error.h"
#include "compile/build.h"
#include "ir/arena.h"
#include "runtime/runtime.h"
#include "sweep.h"
#include "tuner/db.h"
#include "tuner/tuner.h"
#include "weft/onnx.h"
#include "weft/model.h"

#define DATA "tests/data/models/"

static long stride_env(long dflt)
{
    const char *s = getenv("WEFT_SWEEP_STRIDE");
    long v = s ? strtol(s, NULL, 10) : 0;
    return v > 0 ? v : dflt;
}

typedef struct mlp_case {
    const char *model; /* DATA NAME.onnx, NAME.input.bin, NAME.output.bin */
    const char *target, *db;
    float *x, *want;
    size_t nx, ny;
    weft_model *m;     /* the compiled model of the path (owned by the run) */
} mlp_case;

static void check_output(weft_model *m, const mlp_case *mc)
{
    float *y = calloc(1, mc->ny);
    assert_non_null(y);
    const void *in[1] = {mc->x};
    void *out[1] = {y};
    assert_int_equal(weft_model_run(m, in, out), WEFT_OK);
    double err = 0, scale = 1;
    for (size_t i = 0; i < mc->ny / sizeof(float); i++) {
        err = fmax(err, fabs((double)y[i] - (double)mc->want[i]));
        scale = fmax(scale, fabs((double)mc->want[i]));
    }
    if (err > 1e-4 * scale) fprintf(stderr, "N=%ld: %s output off by %g\n", sweep_shared()->n, mc->model, err);
    assert_true(err <= 1e-4 * scale);
    free(y);
}

static weft_status load_compile(void *ud)
{
    mlp_case *mc = ud;
    weft_graph *g = NULL;
    char path[256];
    snprintf(path, sizeof path, DATA "%s.onnx", mc->model);
    weft_status st = weft_onnx_load(path, &g);
    weft_model_options o = weft_model_options_default();
    o.threads = 2;
    o.target = mc->target;
    int n_tuned = 0;
    if (st == WEFT_OK)
        st = mc->db ? weft_model_compile_tuned(g, &o, mc->db, &mc->m, &n_tuned) : weft_model_compile(g, &o, &mc->m);
    weft_graph_destroy(g);
    return st;
}

static void load_compile_check(void *ud, weft_status st)
{
    mlp_case *mc = ud;
    if (st == WEFT_OK) check_output(mc->m, mc);
    else assert_null(mc->m);
    weft_model_destroy(mc->m);
    mc->m = NULL;
}

static mlp_case model_setup(const char *model, const char *target, const char *db)
{
    mlp_case mc = {.model = model, .target = target, .db = db};
    char path[256];
    snprintf(path, sizeof path, DATA "%s.input.bin", model);
    mc.x = read_floats(path, &mc.nx);
    snprintf(path, sizeof path, DATA "%s.output.bin", model);
    mc.want = read_floats(path, &mc.ny);
    return mc;
}

static mlp_case mlp_setup(const char *target, const char *db) { return model_setup("mlp", target, db); }

static void mlp_teardown(mlp_case *mc)
{
    free(mc->x);
    free(mc->want);
}

static void test_load_compile_llvm(void **state)
{
    (void)state;
    mlp_case mc = mlp_setup("llvm", NULL);
    sweep_run("load+compile mlp (llvm)", load_compile, load_compile_check, &mc, stride_env(1), true);
    mlp_teardown(&mc);
}

static void test_load_compile_interp(void **state)
{
    (void)state;
    mlp_case mc = mlp_setup("interp", NULL);
    /* compiling for the interpreter interprets the constant folding: every 3rd N keeps this
     * under a minute under ASan (the llvm sweep above takes every N of the shared paths) */
    sweep_run("load+compile mlp (interp)", load_compile, load_compile_check, &mc, stride_env(3), true);
    mlp_teardown(&mc);
}

/* ResNet-9: 6 times the MLP's allocations: every N takes about 2 minutes in Debug (it passes)
 * and several under ASan, so N is sampled to about 100 runs (50 under ASan) unless WEFT_SWEEP_STRIDE says otherwise */
static void test_load_compile_resnet9(void **state)
{
    (void)state;
    mlp_case mc = model_setup("resnet9", "llvm", NULL);
    long total = sweep_count(load_compile, &mc);
    load_compile_check(&mc, WEFT_OK);
#ifdef __SANITIZE_ADDRESS__
    const long runs = 50;
#else
    const long runs = 100;
#endif
    sweep_run("load+compile resnet9 (llvm)", load_compile, load_compile_check, &mc, stride_env(total > runs ? total / runs : 1), true);
    mlp_teardown(&mc);
}

static void test_compile_tuned(void **state)
{
    (void)state;
    mlp_case mc = mlp_setup("llvm", DATA "tuned.db");
    /* records of another machine are verified in forked workers (about 0.3 s a run here): every
     * N takes minutes, so N is sampled to about 100 runs (50 under ASan) unless WEFT_SWEEP_STRIDE says otherwise */
    long total = sweep_count(load_compile, &mc);
    load_compile_check(&mc, WEFT_OK);
    sweep_run("compile mlp with tuned.db", load_compile, load_compile_check, &mc, stride_env(total > 100 ? total / 100 : 1), true);
    mlp_teardown(&mc);
}

/* ---- one inference ---- */

typedef struct infer_case {
    mlp_case mc;
    bool context;
    float *y;
} infer_case;

static weft_status infer(void *ud)
{
    infer_case *ic = ud;
    memset(ic->y, 0, ic->mc.ny);
    const void *in[1] = {ic->mc.x};
    void *out[1] = {ic->y};
    if (!ic->context) return weft_model_run(ic->mc.m, in, out);
    weft_context *c = NULL;
    weft_status st = weft_context_create(ic->mc.m, &c);
    size_t in_bytes[1] = {ic->mc.nx}, out_bytes[1] = {ic->mc.ny};
    if (st == WEFT_OK) st = weft_context_run(c, 1, in, in_bytes, 1, out, out_bytes);
    weft_context_destroy(c);
    return st;
}

static void infer_check(void *ud, weft_status st)
{
    infer_case *ic = ud;
    if (st != WEFT_OK) return;
    for (size_t i = 0; i < ic->mc.ny / sizeof(float); i++) assert_true(fabsf(ic->y[i] - ic->mc.want[i]) <= 1e-4f);
}

static void test_inference(void **state)
{
    (void)state;
    for (int ctx = 0; ctx < 2; ctx++) {
        infer_case ic = {.mc = mlp_setup("llvm", NULL), .context = ctx};
        assert_int_equal(load_compile(&ic.mc), WEFT_OK);
        ic.y = calloc(1, ic.mc.ny);
        sweep_run(ctx ? "inference (context)" : "inference (weft_model_run)", infer, infer_check, &ic, 1, true);
        free(ic.y);
        weft_model_destroy(ic.mc.m);
        mlp_teardown(&ic.mc);
    }
}

/* ---- databases ---- */

typedef struct db_case {
    char dir[64], path[96];
    bool create;
} db_case;

static void db_intact(const char *path)
{
    if (access(path, F_OK) != 0) return; /* never created: nothing half-written */
    weft_db *db = NULL;
    weft_status st = weft_db_open(path, false, &db);
    if (st != WEFT_OK) fprintf(stderr, "%s: %s\n", path, weft_last_error());
    assert_int_equal(st, WEFT_OK);
    char *report = NULL;
    assert_int_equal(weft_db_check(db, &report), WEFT_OK);
    assert_string_equal(report, "ok\n");
    free(report);
    weft_db_close(db);
}

static weft_status db_open_path(void *ud)
{
    db_case *dc = ud;
    if (dc->create) unlink(dc->path);
    weft_db *db = NULL;
    weft_status st = weft_db_open(dc->path, dc->create, &db);
    /* an open that succeeded must give a working handle (SQLite absorbs some failures itself) */
    if (st == WEFT_OK) st = weft_db_count(db, "0123456789abcdef", "cpu=x", NULL, NULL);
    weft_db_close(db);
    return st;
}

static void db_check(void *ud, weft_status st)
{
    (void)st;
    db_intact(((db_case *)ud)->path);
}

static void test_db_open(void **state)
{
    (void)state;
    db_case dc = {.dir = "/tmp/weft_sweep_db_XXXXXX"};
    assert_non_null(mkdtemp(dc.dir));
    snprintf(dc.path, sizeof dc.path, "%s/t.db", dc.dir);
    dc.create = true;
    /* strict for weft's own allocations; SQLite's go through the hook too, and SQLite absorbs
     * some failures by design (registering its built-in FTS5 extension at open): such an open
     * must still give a working handle (db_open_path queries it) and an intact file */
    sweep_run("open a new database", db_open_path, db_check, &dc, 1, true);
    dc.create = false;
    sweep_run("open an existing database", db_open_path, db_check, &dc, 1, true);
    unlink(dc.path);
    rmdir(dc.dir);
}

/* ---- importing a dump (weft db import) ---- */

typedef struct import_case {
    db_case dc;
    char *text; /* what weft db export wrote */
    size_t len;
    int n_imported;
} import_case;

static weft_status import_path(void *ud)
{
    import_case *ic = ud;
    unlink(ic->dc.path);
    ic->n_imported = -1;
    weft_db *db = NULL;
    weft_status st = weft_db_open(ic->dc.path, true, &db);
    FILE *in = st == WEFT_OK ? fmemopen(ic->text, ic->len, "r") : NULL;
    if (st == WEFT_OK && !in) st = weft_fail(WEFT_ERR_IO, "fmemopen failed");
    if (st == WEFT_OK) st = weft_db_import(db, in, &ic->n_imported);
    if (in) fclose(in);
    weft_db_close(db);
    return st;
}

/* All or nothing: the file holds the 3 measurements when the import succeeded, none otherwise. */
static void import_check(void *ud, weft_status st)
{
    import_case *ic = ud;
    db_intact(ic->dc.path);
    if (access(ic->dc.path, F_OK) != 0) return;
    weft_db *db = NULL;
    assert_int_equal(weft_db_open(ic->dc.path, false, &db), WEFT_OK);
    int total = -1;
    assert_int_equal(weft_db_count(db, "00000000000000aa", "cpu=test", &total, NULL), WEFT_OK);
    weft_db_close(db);
    if (total != (st == WEFT_OK ? 3 : 0)) fprintf(stderr, "N=%ld: %d measurements after import (%s)\n", sweep_shared()->n, total, weft_status_name(st));
    assert_int_equal(total, st == WEFT_OK ? 3 : 0);
    if (st == WEFT_OK) assert_int_equal(ic->n_imported, 3);
}

static void test_db_import(void **state)
{
    (void)state;
    import_case ic = {.dc = {.dir = "/tmp/weft_sweep_imp_XXXXXX"}};
    assert_non_null(mkdtemp(ic.dc.dir));
    snprintf(ic.dc.path, sizeof ic.dc.path, "%s/src.db", ic.dc.dir);
    /* the dump: one workload, one target, 3 measurements (one of them an error) */
    weft_db *db = NULL;
    assert_int_equal(weft_db_open(ic.dc.path, true, &db), WEFT_OK);
    weft_db_workload w = {.key = "00000000000000aa", .te = "C[i, j] = sum(k, A[i, k] * B[k, j])",
                          .shapes = "A[4,4] B[4,4] -> C[4,4]", .flops = 128};
    weft_db_target t = {.key = "cpu=test", .name = "llvm", .model = "test CPU", .features = "+avx2", .cores = 2};
    assert_int_equal(weft_db_put_workload(db, &w), WEFT_OK);
    assert_int_equal(weft_db_put_target(db, &t), WEFT_OK);
    const double lat[3] = {1e-6, 2e-6, 3e-6};
    const char *steps[3] = {"split i 2", "split j 2", "vectorize j"};
    for (int i = 0; i < 3; i++) {
        weft_db_measurement m = {.workload = w.key, .target = t.key, .steps = steps[i], .latencies = lat,
                                 .n_latencies = i == 2 ? 0 : 3, .median = i == 2 ? 0 : lat[i],
                                 .error = i == 2 ? "compile: bad" : NULL};
        assert_int_equal(weft_db_put_measurement(db, &m), WEFT_OK);
    }
    FILE *out = open_memstream(&ic.text, &ic.len);
    assert_non_null(out);
    assert_int_equal(weft_db_export(db, out), WEFT_OK);
    fclose(out);
    weft_db_close(db);
    unlink(ic.dc.path);
    snprintf(ic.dc.path, sizeof ic.dc.path, "%s/t.db", ic.dc.dir);
    /* every N takes about 40 s here (2,500 runs): every 3rd unless WEFT_SWEEP_STRIDE says otherwise */
    sweep_run("import a dump into a new database", import_path, import_check, &ic, stride_env(3), true);
    free(ic.text);
    char side[128];
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s/%s", ic.dc.dir, (const char *[]){"t.db", "t.db-wal", "t.db-shm"}[i]);
        unlink(side);
        snprintf(side, sizeof side, "%s/%s", ic.dc.dir, (const char *[]){"src.db", "src.db-wal", "src.db-shm"}[i]);
        unlink(side);
    }
    rmdir(ic.dc.dir);
}

/* ---- a short tune ---- */

typedef struct tune_case {
    db_case dc;
    weft_task *tasks;
    int n;
} tune_case;

static weft_status tune_step(void *ud)
{
    tune_case *tc = ud;
    unlink(tc->dc.path);
    weft_tune_options o = {.db = tc->dc.path, .trials = 3, .threads = 1, .seed = 5, .batch = 2};
    return weft_tune_tasks(tc->tasks, tc->n, &o);
}

static void tune_check(void *ud, weft_status st)
{
    (void)st;
    db_intact(((tune_case *)ud)->dc.path);
}

static void test_tune_step(void **state)
{
    (void)state;
    tune_case tc = {.dc = {.dir = "/tmp/weft_sweep_tune_XXXXXX"}};
    assert_non_null(mkdtemp(tc.dc.dir));
    snprintf(tc.dc.path, sizeof tc.dc.path, "%s/t.db", tc.dc.dir);
    assert_int_equal(weft_task_from_op("matmul", 3, (int64_t[]){16, 32, 16}, &tc.tasks, &tc.n), WEFT_OK);
    long total = sweep_count(tune_step, &tc);
    /* each run JIT-compiles up to 3 candidates and the naive reference and forks measurement
     * workers: every N would take half an hour, so N is sampled to about 300 runs (80 under
     * ASan, where a fork costs more) unless WEFT_SWEEP_STRIDE says otherwise */
#ifdef __SANITIZE_ADDRESS__
    const long runs = 80;
#else
    const long runs = 300;
#endif
    long stride = stride_env(total > runs ? total / runs : 1);
    sweep_run("tune a 16x32x16 matmul (3 candidates)", tune_step, tune_check, &tc, stride, false);
    weft_tasks_free(tc.tasks, tc.n);
    unlink(tc.dc.path);
    char wal[128];
    snprintf(wal, sizeof wal, "%s-wal", tc.dc.path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", tc.dc.path);
    unlink(wal);
    rmdir(tc.dc.dir);
}

/* ---- a local buffer of generated code (weft_rt_alloc_uninit inside a kernel) ---- */

typedef struct kernel_case {
    const weft_target_ops *ops;
    weft_kernel *k, *naive;
    weft_loop_func *lf;
    void *args[8], *ref[8];
} kernel_case;

static weft_status kernel_run(void *ud)
{
    kernel_case *kc = ud;
    return kc->ops->run(kc->k, kc->args, NULL);
}

static void kernel_check(void *ud, weft_status st)
{
    kernel_case *kc = ud;
    if (st != WEFT_OK) return;
    const weft_buffer *c = kc->lf->params[kc->lf->n_params - 1];
    const float *got = kc->args[kc->lf->n_params - 1], *want = kc->ref[kc->lf->n_params - 1];
    for (int64_t i = 0; i < c->size; i++) assert_true(fabsf(got[i] - want[i]) <= 1e-3f * (1.0f + fabsf(want[i])));
}

static void test_generated_code_local_buffer(void **state)
{
    (void)state;
    /* cache_write gives C a 256x256 accumulator (256 KiB): generated code takes it from
     * weft_rt_alloc_uninit, and its failure must make the run WEFT_ERR_NOMEM, not a crash */
    weft_task *tasks = NULL;
    int n = 0;
    assert_int_equal(weft_task_from_op("matmul", 3, (int64_t[]){256, 256, 16}, &tasks, &n), WEFT_OK);
    kernel_case kc = {.ops = weft_target_find("llvm")};
    assert_non_null(kc.ops);
    weft_target *t = NULL;
    assert_int_equal(kc.ops->create(&t), WEFT_OK);
    weft_arena *a = weft_arena_create();
    weft_schedule *s = NULL, *ns = NULL;
    weft_loop_func *nlf = NULL;
    assert_int_equal(weft_schedule_create(tasks[0].f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(s, "cache_write C local"), WEFT_OK);
    assert_int_equal(weft_target_build(kc.ops, t, s, a, &kc.lf, &kc.k), WEFT_OK);
    assert_int_equal(weft_schedule_create(tasks[0].f, &ns), WEFT_OK);
    assert_int_equal(weft_target_build(kc.ops, t, ns, a, &nlf, &kc.naive), WEFT_OK);
    assert_true(kc.lf->n_params <= 8);
    for (int i = 0; i < kc.lf->n_params; i++) {
        const weft_buffer *b = kc.lf->params[i];
        kc.args[i] = weft_rt_alloc((size_t)b->size * 4);
        kc.ref[i] = weft_rt_alloc((size_t)b->size * 4);
        for (int64_t e = 0; e < b->size; e++)
            ((float *)kc.args[i])[e] = ((float *)kc.ref[i])[e] = (float)((e * 7 + i) % 13) * 0.25f - 1.5f;
    }
    assert_int_equal(kc.ops->run(kc.naive, kc.ref, NULL), WEFT_OK);
    sweep_result r = sweep_run("kernel with a 256 KiB local buffer", kernel_run, kernel_check, &kc, 1, true);
    assert_true(r.by_status[WEFT_ERR_NOMEM] >= 1); /* the buffer's allocation was failed, and said so */
    for (int i = 0; i < kc.lf->n_params; i++) {
        weft_rt_free(kc.args[i]);
        weft_rt_free(kc.ref[i]);
    }
    kc.ops->kernel_destroy(kc.k);
    kc.ops->kernel_destroy(kc.naive);
    weft_schedule_destroy(s);
    weft_schedule_destroy(ns);
    weft_arena_destroy(a);
    kc.ops->destroy(t);
    weft_tasks_free(tasks, n);
}

int main(void)
{
    (void)expect_error;
    /* SQLite's own allocations go through the hook too (before anything opens a database) */
    sweep_foreign = weft_db_in_sqlite_allocation;
    if (weft_db_route_sqlite_allocations() != WEFT_OK) {
        fprintf(stderr, "%s\n", weft_last_error());
        return 1;
    }
    if (getenv("WEFT_SWEEP_ONLY")) cmocka_set_test_filter(getenv("WEFT_SWEEP_ONLY")); /* e.g. test_tune_step */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_db_open),
        cmocka_unit_test(test_db_import),
        cmocka_unit_test(test_generated_code_local_buffer),
        cmocka_unit_test(test_inference),
        cmocka_unit_test(test_load_compile_interp),
        cmocka_unit_test(test_load_compile_llvm),
        cmocka_unit_test(test_load_compile_resnet9),
        cmocka_unit_test(test_compile_tuned),
        cmocka_unit_test(test_tune_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
