/* Records of the nearest machine: the preference order between target keys, the query that
 * lists other machines' best records nearest first, and a model compiled from a database that
 * holds records only under other keys: the nearest replayable record is used, one whose steps
 * do not replay is skipped for the next machine's, and with none left the default schedule
 * runs; a record of this machine brought in with weft db import is checked before it is used;
 * one of this machine is timed against today's default unless that default was measured beside it.
 * Every test works in its own mkdtemp directory. */
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

#include "targets/target.h"
#include "tuner/tuner.h"
#include "weft/graph.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    weft_db *db;
    weft_graph *g;
    weft_model *m;
    weft_task *tasks;
    int n_tasks;
    weft_tuner_nearest *near;
    int n_near;
    char *steps;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/weft-test-nearest-XXXXXX");
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    snprintf(fx->path, sizeof fx->path, "%s/test.db", fx->dir);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    weft_db_close(fx->db);
    weft_model_destroy(fx->m);
    weft_graph_destroy(fx->g);
    weft_tasks_free(fx->tasks, fx->n_tasks);
    weft_tuner_nearest_free(fx->near, fx->n_near);
    free(fx->steps);
    const char *side[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s%s", fx->path, side[i]);
        unlink(p);
    }
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static const char *AVX512 = "+avx,+avx2,+fma,+avx512f,+avx512bw", *AVX2 = "+avx,+avx2,+fma";

/* This machine, as a test sees it: sapphirerapids with AVX-512, 2 threads. */
static weft_tuner_target here(void)
{
    weft_tuner_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.key, sizeof t.key, "llvm;cpu=sapphirerapids;feat=00000000000000aa;cores=2;threads=2");
    snprintf(t.name, sizeof t.name, "llvm");
    snprintf(t.features, sizeof t.features, "%s", AVX512);
    t.cores = 2;
    t.threads = 2;
    return t;
}

static void test_isa_level_from_features(void **state)
{
    (void)state;
    assert_int_equal(weft_tuner_isa_level(AVX512), WEFT_ISA_AVX512);
    assert_int_equal(weft_tuner_isa_level(AVX2), WEFT_ISA_AVX2);
    assert_int_equal(weft_tuner_isa_level("+sse2,+sse4.2"), WEFT_ISA_OTHER);
    assert_int_equal(weft_tuner_isa_level(""), WEFT_ISA_UNKNOWN);
    /* whole names only: "-avx512f" or "+avx512fp16" alone is not AVX-512F */
    assert_int_equal(weft_tuner_isa_level("+avx2,-avx512f"), WEFT_ISA_AVX2);
    assert_int_equal(weft_tuner_isa_level("+avx2,+avx512fp16x"), WEFT_ISA_AVX2);
}

static void test_distance_follows_the_preference_order(void **state)
{
    (void)state;
    weft_tuner_target t = here();
    double same_cpu_1 = weft_tuner_target_distance(&t, "llvm;cpu=sapphirerapids;feat=00000000000000aa;cores=2;threads=1", AVX512);
    double same_cpu_8 = weft_tuner_target_distance(&t, "llvm;cpu=sapphirerapids;feat=00000000000000aa;cores=8;threads=8", AVX512);
    double same_isa = weft_tuner_target_distance(&t, "llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=2", AVX512);
    double same_isa_1 = weft_tuner_target_distance(&t, "llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=1", AVX512);
    double other_isa = weft_tuner_target_distance(&t, "llvm;cpu=haswell;feat=00000000000000cc;cores=2;threads=2", AVX2);
    double unknown = weft_tuner_target_distance(&t, "llvm;cpu=mystery;feat=00000000000000dd;cores=2;threads=2", "");
    assert_true(same_cpu_1 >= 0);
    assert_true(same_cpu_1 < same_cpu_8);
    assert_true(same_cpu_8 < same_isa);
    assert_true(same_isa < same_isa_1);
    assert_true(same_isa_1 < other_isa);
    assert_true(other_isa <= unknown);
    /* never: this machine's own key, another backend */
    assert_true(weft_tuner_target_distance(&t, t.key, AVX512) < 0);
    assert_true(weft_tuner_target_distance(&t, "cuda;cpu=sm_90;feat=00000000000000ee;cores=132;threads=2", "") < 0);
    char d[96];
    weft_tuner_key_describe("llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=1", d, sizeof d);
    assert_string_equal(d, "cpu=znver4 threads=1");
}

static void put_target(weft_db *db, const char *key, const char *features)
{
    weft_db_target t = {key, strncmp(key, "cuda", 4) ? "llvm" : "cuda", "test cpu", features, 2};
    assert_int_equal(weft_db_put_target(db, &t), WEFT_OK);
}

static void put_m(weft_db *db, const char *w, const char *t, const char *steps, double median, const char *error)
{
    double lat[1] = {median};
    weft_db_measurement m = {w, t, steps, lat, median > 0 ? 1 : 0, median, error};
    assert_int_equal(weft_db_put_measurement(db, &m), WEFT_OK);
}

static void test_records_listed_nearest_first(void **state)
{
    fixture *fx = *state;
    weft_tuner_target t = here();
    const char *W = "00000000000000a1";
    const char *k_here = t.key, *k_threads = "llvm;cpu=sapphirerapids;feat=00000000000000aa;cores=2;threads=1",
               *k_isa = "llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=2",
               *k_avx2 = "llvm;cpu=haswell;feat=00000000000000cc;cores=2;threads=2",
               *k_cuda = "cuda;cpu=sm_90;feat=00000000000000ee;cores=132;threads=2";
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    weft_db_workload w = {W, "C = A * B", "A[4,4] B[4,4] -> C[4,4]", 128};
    assert_int_equal(weft_db_put_workload(fx->db, &w), WEFT_OK);
    put_target(fx->db, k_here, AVX512);
    put_target(fx->db, k_threads, AVX512);
    put_target(fx->db, k_isa, AVX512);
    put_target(fx->db, k_avx2, AVX2);
    put_target(fx->db, k_cuda, "");
    put_m(fx->db, W, k_here, "here", 1e-6, NULL);        /* this machine: never in the list */
    put_m(fx->db, W, k_avx2, "avx2 fast", 1e-7, NULL);   /* fastest, but farthest */
    put_m(fx->db, W, k_isa, "isa slow", 3e-6, NULL);
    put_m(fx->db, W, k_isa, "isa best", 2e-6, NULL);     /* the best of its machine */
    put_m(fx->db, W, k_isa, "isa broken", 0, "crashed"); /* errors never chosen */
    put_m(fx->db, W, k_threads, "threads wrong", 1e-9, "rejected: output differs");
    put_m(fx->db, W, k_threads, "threads best", 5e-6, NULL);
    put_m(fx->db, W, k_cuda, "cuda", 1e-8, NULL);        /* another backend: never */
    assert_int_equal(weft_tuner_nearest_records(fx->db, &t, W, &fx->near, &fx->n_near), WEFT_OK);
    assert_int_equal(fx->n_near, 3);
    assert_string_equal(fx->near[0].target, k_threads);
    assert_string_equal(fx->near[0].steps, "threads best");
    assert_string_equal(fx->near[1].target, k_isa);
    assert_string_equal(fx->near[1].steps, "isa best");
    assert_true(fabs(fx->near[1].median - 2e-6) < 1e-12);
    assert_string_equal(fx->near[2].target, k_avx2);
    /* an unknown workload: an empty list */
    weft_tuner_nearest_free(fx->near, fx->n_near);
    fx->near = NULL;
    assert_int_equal(weft_tuner_nearest_records(fx->db, &t, "00000000000000ff", &fx->near, &fx->n_near), WEFT_OK);
    assert_int_equal(fx->n_near, 0);
    /* cost models: only other machines', nearest first */
    assert_int_equal(weft_db_save_model(fx->db, k_avx2, "m1", 2), WEFT_OK);
    assert_int_equal(weft_db_save_model(fx->db, k_isa, "m2", 2), WEFT_OK);
    assert_int_equal(weft_db_save_model(fx->db, k_here, "m3", 2), WEFT_OK);
    assert_int_equal(weft_tuner_nearest_models(fx->db, &t, &fx->near, &fx->n_near), WEFT_OK);
    assert_int_equal(fx->n_near, 2);
    assert_string_equal(fx->near[0].target, k_isa);
    assert_string_equal(fx->near[1].target, k_avx2);
}

/* x[M,N] -> Gemm(w[N,N], b) -> Relu: one kernel (w, b: N*N and N floats). */
static int M = 8, N = 32;
static void build_graph_sized(fixture *fx, int m, int n, float *w, float *b)
{
    M = m;
    N = n;
    for (int i = 0; i < N * N; i++) w[i] = (float)((i * 7) % 13 - 6) * 0.05f;
    for (int i = 0; i < N; i++) b[i] = (float)(i % 5 - 2) * 0.1f;
    weft_value x, wv, bv, y, h;
    assert_int_equal(weft_graph_create(&fx->g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(fx->g, "x", WEFT_TYPE_FLOAT32, 2, (int64_t[]){M, N}, &x), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(fx->g, "w", WEFT_TYPE_FLOAT32, 2, (int64_t[]){N, N}, w, &wv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(fx->g, "b", WEFT_TYPE_FLOAT32, 1, (int64_t[]){N}, b, &bv), WEFT_OK);
    assert_int_equal(weft_graph_gemm(fx->g, x, wv, bv, false, true, &y), WEFT_OK);
    assert_int_equal(weft_graph_unary(fx->g, "Relu", y, &h), WEFT_OK);
    assert_int_equal(weft_graph_set_output(fx->g, h, "out"), WEFT_OK);
}

static void build_graph(fixture *fx, float *w, float *b) { build_graph_sized(fx, 8, 32, w, b); }

/* This machine's key at `threads` and the model's one workload with valid (default) steps. */
static bool prepare(fixture *fx, int threads, weft_tuner_target *tt)
{
    const weft_target_ops *ops = weft_target_find("llvm");
    if (!ops) return false;
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    caps.max_threads = threads;
    weft_tuner_target_init(tt, &caps, threads);
    assert_int_equal(weft_tasks_from_graph(fx->g, &caps, &fx->tasks, &fx->n_tasks), WEFT_OK);
    assert_int_equal(fx->n_tasks, 1);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(fx->tasks[0].f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    fx->steps = weft_schedule_text(s);
    weft_schedule_destroy(s);
    ops->destroy(t);
    assert_non_null(fx->steps);
    return true;
}

/* Compiles with the database, runs, checks the output against a direct computation
 * (relative tolerance 1e-4). */
static void compile_and_check(fixture *fx, int threads, const float *w, const float *b, weft_tuned_summary *sum)
{
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    assert_int_equal(weft_model_compile_tuned_ex(fx->g, &o, fx->path, &fx->m, sum), WEFT_OK);
    float *x = malloc(sizeof *x * (size_t)(M * N)), *y = malloc(sizeof *y * (size_t)(M * N));
    assert_true(x && y);
    for (int i = 0; i < M * N; i++) x[i] = (float)((i * 5) % 11 - 5) * 0.1f;
    assert_int_equal(weft_model_run(fx->m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = b[j];
            for (int k = 0; k < N; k++) acc += x[i * N + k] * w[j * N + k];
            float want = acc > 0 ? acc : 0;
            assert_true(fabsf(y[i * N + j] - want) <= 1e-4f * (1 + fabsf(want)));
        }
    free(x);
    free(y);
    weft_model_destroy(fx->m);
    fx->m = NULL;
}

static void key_with_threads(const weft_tuner_target *tt, int threads, char *buf, size_t n)
{
    const char *p = strstr(tt->key, ";threads=");
    snprintf(buf, n, "%.*s;threads=%d", (int)(p - tt->key), tt->key, threads);
}

static void test_model_uses_the_nearest_replayable_record(void **state)
{
    fixture *fx = *state;
    static float w[32 * 32], b[32];
    build_graph(fx, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    /* records only under other keys: this CPU at 2 threads (nearest) whose steps do not replay,
     * another CPU of the same ISA at 1 thread whose steps do, and one of another ISA */
    char k_threads[160];
    key_with_threads(&tt, 2, k_threads, sizeof k_threads);
    const char *k_isa = "llvm;cpu=othercpu;feat=00000000000000bb;cores=2;threads=1";
    const char *k_far = "llvm;cpu=oldcpu;feat=00000000000000cc;cores=2;threads=4";
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    weft_db_workload wl = {fx->tasks[0].key, "te", "shapes", fx->tasks[0].flops};
    assert_int_equal(weft_db_put_workload(fx->db, &wl), WEFT_OK);
    put_target(fx->db, k_threads, tt.features);
    put_target(fx->db, k_isa, tt.features);
    put_target(fx->db, k_far, "+sse2");
    put_m(fx->db, fx->tasks[0].key, k_threads, "split NoSuchStage i 4", 1e-6, NULL);
    put_m(fx->db, fx->tasks[0].key, k_isa, fx->steps, 2e-6, NULL);
    put_m(fx->db, fx->tasks[0].key, k_far, fx->steps, 1e-7, NULL);
    weft_db_close(fx->db);
    fx->db = NULL;

    weft_tuned_summary sum;
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_kernels, 1);
    assert_int_equal(sum.n_this_machine, 0);
    assert_int_equal(sum.n_nearest, 1);
    assert_int_equal(sum.n_default, 0);
    assert_int_equal(sum.n_rejected, 1); /* the nearest one did not replay */
    assert_string_equal(sum.nearest, "cpu=othercpu threads=1");
    assert_int_equal(sum.n_timed, 0); /* its steps are the default's: not timed */
    char line[320];
    weft_tuned_summary_format(&sum, line, sizeof line);
    assert_non_null(strstr(line, "0 from records for this machine, 1 from the nearest machine (cpu=othercpu threads=1), 0 default"));

    /* a record for this machine wins over every other machine's */
    assert_int_equal(weft_db_open(fx->path, false, &fx->db), WEFT_OK);
    weft_db_target here_t = {tt.key, "llvm", tt.model, tt.features, tt.cores};
    assert_int_equal(weft_db_put_target(fx->db, &here_t), WEFT_OK);
    put_m(fx->db, fx->tasks[0].key, tt.key, fx->steps, 3e-6, NULL);
    weft_db_close(fx->db);
    fx->db = NULL;
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_this_machine, 1);
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_rejected, 0);
}

static void test_model_falls_back_to_default_when_no_record_replays(void **state)
{
    fixture *fx = *state;
    static float w[32 * 32], b[32];
    build_graph(fx, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 2, &tt)) skip();
    const char *k_isa = "llvm;cpu=othercpu;feat=00000000000000bb;cores=2;threads=2";
    const char *k_far = "llvm;cpu=oldcpu;feat=00000000000000cc;cores=2;threads=1";
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    weft_db_workload wl = {fx->tasks[0].key, "te", "shapes", fx->tasks[0].flops};
    assert_int_equal(weft_db_put_workload(fx->db, &wl), WEFT_OK);
    put_target(fx->db, k_isa, tt.features);
    put_target(fx->db, k_far, AVX2);
    put_m(fx->db, fx->tasks[0].key, k_isa, "split NoSuchStage i 4", 1e-6, NULL);
    put_m(fx->db, fx->tasks[0].key, k_far, "reorder", 1e-6, NULL);
    weft_db_close(fx->db);
    fx->db = NULL;
    weft_tuned_summary sum;
    compile_and_check(fx, 2, w, b, &sum);
    assert_int_equal(sum.n_kernels, 1);
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_rejected, 2);
    int n_tuned = -1;
    weft_model_options o = weft_model_options_default();
    o.threads = 2;
    assert_int_equal(weft_model_compile_tuned(fx->g, &o, fx->path, &fx->m, &n_tuned), WEFT_OK);
    assert_int_equal(n_tuned, 0);
}

/* A record for this machine brought in with weft db import is text from elsewhere: it is
 * checked against the naive schedule before it is served (a record the tuner wrote here was
 * checked when it became the best, and is served as is). With WEFT_TEST_FAULTS making every
 * candidate run fault (test builds), the imported record is rejected and the default serves. */
static void test_imported_record_is_checked_before_use(void **state)
{
    fixture *fx = *state;
    static float w[32 * 32], b[32];
    build_graph(fx, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    /* a dump of a database holding this machine's record */
    char src[160];
    snprintf(src, sizeof src, "%s/src.db", fx->dir);
    assert_int_equal(weft_db_open(src, true, &fx->db), WEFT_OK);
    weft_db_workload wl = {fx->tasks[0].key, "te", "shapes", fx->tasks[0].flops};
    assert_int_equal(weft_db_put_workload(fx->db, &wl), WEFT_OK);
    weft_db_target here_t = {tt.key, "llvm", tt.model, tt.features, tt.cores};
    assert_int_equal(weft_db_put_target(fx->db, &here_t), WEFT_OK);
    put_m(fx->db, fx->tasks[0].key, tt.key, fx->steps, 3e-6, NULL);
    char *dump = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&dump, &len);
    assert_non_null(out);
    assert_int_equal(weft_db_export(fx->db, out), WEFT_OK);
    fclose(out);
    bool imported = true, found = false;
    char *steps = NULL;
    assert_int_equal(weft_db_best_record(fx->db, fx->tasks[0].key, tt.key, &found, &steps, NULL, &imported), WEFT_OK);
    assert_true(found);
    assert_false(imported); /* written here */
    free(steps);
    weft_db_close(fx->db);
    fx->db = NULL;
    for (int i = 0; i < 3; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s%s", src, (const char *[]){"", "-wal", "-shm"}[i]);
        unlink(p);
    }

    /* imported: marked, and the mark survives export + import again without stacking */
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    int n = 0;
    FILE *in = fmemopen(dump, len, "r");
    assert_int_equal(weft_db_import(fx->db, in, &n), WEFT_OK);
    fclose(in);
    assert_int_equal(n, 1);
    assert_int_equal(weft_db_best_record(fx->db, fx->tasks[0].key, tt.key, &found, &steps, NULL, &imported), WEFT_OK);
    assert_true(found && imported);
    free(steps);
    free(dump);
    out = open_memstream(&dump, &len);
    assert_int_equal(weft_db_export(fx->db, out), WEFT_OK);
    fclose(out);
    assert_non_null(strstr(dump, "\t" WEFT_DB_IMPORTED_PREFIX));
    assert_null(strstr(dump, WEFT_DB_IMPORTED_PREFIX WEFT_DB_IMPORTED_PREFIX));
    free(dump);
    weft_db_close(fx->db);
    fx->db = NULL;

    /* it checks out: served as this machine's record */
    weft_tuned_summary sum;
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_this_machine, 1);
    assert_int_equal(sum.n_rejected, 0);
    if (!weft_tune_test_hooks()) return; /* no fault injection in this build */
    /* every candidate run faults: the imported record fails its check and is not served */
    setenv("WEFT_TEST_FAULTS", "1:7:2", 1);
    compile_and_check(fx, 1, w, b, &sum);
    unsetenv("WEFT_TEST_FAULTS");
    assert_int_equal(sum.n_this_machine, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_rejected, 1);
}

/* A database holding one record of another machine of this ISA level (steps) for the model's
 * kernel, at `threads`. */
static void db_with_foreign_record(fixture *fx, int threads, const char *steps)
{
    char key[96];
    snprintf(key, sizeof key, "llvm;cpu=othercpu;feat=00000000000000bb;cores=2;threads=%d", threads);
    weft_tuner_target tt;
    memset(&tt, 0, sizeof tt);
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    weft_db_workload wl = {fx->tasks[0].key, "te", "shapes", fx->tasks[0].flops};
    assert_int_equal(weft_db_put_workload(fx->db, &wl), WEFT_OK);
    put_target(fx->db, key, AVX512);
    put_m(fx->db, fx->tasks[0].key, key, steps, 1e-6, NULL);
    weft_db_close(fx->db);
    fx->db = NULL;
}

/* The default schedule's steps (fx->steps) without the last one: valid steps that are not
 * the default's text, so a record with them is timed (malloc'd). */
static char *default_minus_last_step(const fixture *fx)
{
    char *variant = strdup(fx->steps);
    assert_non_null(variant);
    char *nl = strrchr(variant, '\n');
    while (nl && nl[1] == '\0' && nl > variant) { /* a trailing newline: the line before it */
        *nl = '\0';
        nl = strrchr(variant, '\n');
    }
    assert_non_null(nl); /* the default schedule has more than one step */
    nl[1] = '\0';
    assert_string_not_equal(variant, fx->steps);
    return variant;
}

/* A record of another machine is timed here against the default schedule first, and checked
 * and served only when faster (<= 0.97x); a faster record that fails its check is rejected. The test hook WEFT_TEST_RECORD_TIME_SCALE
 * makes the record 100x slower or faster than measured, so the outcome does not depend on the
 * load; the record's steps are the default's minus the last step (not the default's text, so
 * timed). WEFT_NEAREST_TIMING=0 serves it untimed; another value is an error. */
static void test_foreign_record_served_only_when_faster(void **state)
{
    fixture *fx = *state;
    static float w[32 * 32], b[32];
    build_graph(fx, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    char *variant = default_minus_last_step(fx);
    db_with_foreign_record(fx, 1, variant);
    free(variant);
    weft_tuned_summary sum;
    char line[320];

    /* the switch: untimed, the record that passes its check is served */
    setenv("WEFT_NEAREST_TIMING", "0", 1);
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_nearest, 1);
    assert_int_equal(sum.n_timed, 0);
    setenv("WEFT_NEAREST_TIMING", "yes", 1);
    weft_model_options o = weft_model_options_default();
    o.threads = 1;
    assert_int_equal(weft_model_compile_tuned_ex(fx->g, &o, fx->path, &fx->m, &sum), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "WEFT_NEAREST_TIMING=yes"));
    unsetenv("WEFT_NEAREST_TIMING");
    if (!weft_tune_test_hooks()) return; /* no timing hook in this build */

    setenv("WEFT_TEST_RECORD_TIME_SCALE", "100", 1); /* slower than the default: not served */
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_timed, 1);
    assert_int_equal(sum.n_slower, 1);
    assert_int_equal(sum.n_default_slower, 1);
    assert_int_equal(sum.n_rejected, 0);
    weft_tuned_summary_format(&sum, line, sizeof line);
    assert_non_null(strstr(line, "0 from the nearest machine, 1 default; 1 record(s) timed against the default here, 1 not faster"));

    setenv("WEFT_TEST_RECORD_TIME_SCALE", "0.01", 1); /* faster, but every checked run faults */
    setenv("WEFT_TEST_FAULTS", "1:7:2", 1);
    compile_and_check(fx, 1, w, b, &sum);
    unsetenv("WEFT_TEST_FAULTS");
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_timed, 1);
    assert_int_equal(sum.n_slower, 0);
    assert_int_equal(sum.n_rejected, 1);

    compile_and_check(fx, 1, w, b, &sum); /* faster and it checks out: served */
    unsetenv("WEFT_TEST_RECORD_TIME_SCALE");
    assert_int_equal(sum.n_nearest, 1);
    assert_int_equal(sum.n_default, 0);
    assert_int_equal(sum.n_timed, 1);
    assert_int_equal(sum.n_slower, 0);
    assert_int_equal(sum.n_default_slower, 0);
}

/* Without a hook: a record of another machine whose steps are the naive schedule (scalar,
 * untiled) of a 64x256x256 Gemm would pass its check (it computes the right values) but runs
 * many times slower than the default here (~30x measured; the rule needs only 1/0.97), so the default
 * is served. */
static void test_slow_foreign_record_loses_to_the_default(void **state)
{
    fixture *fx = *state;
    static float w[256 * 256], b[256];
    build_graph_sized(fx, 64, 256, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    unsetenv("WEFT_TEST_RECORD_TIME_SCALE");
    unsetenv("WEFT_NEAREST_TIMING");
    db_with_foreign_record(fx, 1, "");
    weft_tuned_summary sum;
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_kernels, 1);
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_timed, 1);
    assert_int_equal(sum.n_slower, 1);
    assert_int_equal(sum.n_default_slower, 1);
    assert_int_equal(sum.n_rejected, 0);
}

/* This machine's own record (steps) for the model's kernel, and one of another machine of the
 * same ISA level with the same steps; with_default adds a measurement of today's default
 * schedule under this machine's key, slower than the record (what the tuner writes first). */
static void db_with_own_record(fixture *fx, const weft_tuner_target *tt, const char *steps, bool with_default)
{
    const char *other = "llvm;cpu=othercpu;feat=00000000000000bb;cores=2;threads=1";
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    weft_db_workload wl = {fx->tasks[0].key, "te", "shapes", fx->tasks[0].flops};
    assert_int_equal(weft_db_put_workload(fx->db, &wl), WEFT_OK);
    weft_db_target here_t = {tt->key, "llvm", tt->model, tt->features, tt->cores};
    assert_int_equal(weft_db_put_target(fx->db, &here_t), WEFT_OK);
    put_target(fx->db, other, AVX512);
    if (with_default) put_m(fx->db, fx->tasks[0].key, tt->key, fx->steps, 2e-6, NULL);
    put_m(fx->db, fx->tasks[0].key, tt->key, steps, 1e-6, NULL);
    put_m(fx->db, fx->tasks[0].key, other, steps, 1e-7, NULL);
    weft_db_close(fx->db);
    fx->db = NULL;
}

/* The default schedule may have improved since this machine's record was tuned: a record of
 * this machine is timed against today's default and served only when faster; when it loses,
 * the default serves and the other machines' records (the tuning's seeds) are not tried. A
 * record is not timed when the database measured today's default beside it (the tuner's
 * first candidate), nor with WEFT_OWN_TIMING=0; another value of the switch is an error.
 * WEFT_TEST_RECORD_TIME_SCALE (test builds) makes the record 100x slower or faster. */
static void test_own_record_timed_against_a_newer_default(void **state)
{
    fixture *fx = *state;
    static float w[32 * 32], b[32];
    build_graph(fx, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    char *variant = default_minus_last_step(fx);
    db_with_own_record(fx, &tt, variant, false);
    weft_tuned_summary sum;
    weft_model_options o = weft_model_options_default();
    o.threads = 1;
    setenv("WEFT_OWN_TIMING", "2", 1);
    assert_int_equal(weft_model_compile_tuned_ex(fx->g, &o, fx->path, &fx->m, &sum), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "WEFT_OWN_TIMING=2"));
    setenv("WEFT_OWN_TIMING", "0", 1); /* untimed: served */
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_this_machine, 1);
    assert_int_equal(sum.n_timed, 0);
    unsetenv("WEFT_OWN_TIMING");
    if (weft_tune_test_hooks()) {
        setenv("WEFT_TEST_RECORD_TIME_SCALE", "100", 1); /* slower than today's default */
        compile_and_check(fx, 1, w, b, &sum);
        assert_int_equal(sum.n_this_machine, 0);
        assert_int_equal(sum.n_nearest, 0); /* the other machine's record is not tried */
        assert_int_equal(sum.n_default, 1);
        assert_int_equal(sum.n_timed, 1);
        assert_int_equal(sum.n_slower, 1);
        assert_int_equal(sum.n_default_slower, 1);
        assert_int_equal(sum.n_rejected, 0);
        setenv("WEFT_TEST_RECORD_TIME_SCALE", "0.01", 1); /* faster: served, timed, not checked */
        compile_and_check(fx, 1, w, b, &sum);
        assert_int_equal(sum.n_this_machine, 1);
        assert_int_equal(sum.n_timed, 1);
        assert_int_equal(sum.n_slower, 0);
        /* today's default was measured beside the record: served untimed, however slow */
        unlink(fx->path);
        db_with_own_record(fx, &tt, variant, true);
        setenv("WEFT_TEST_RECORD_TIME_SCALE", "100", 1);
        compile_and_check(fx, 1, w, b, &sum);
        unsetenv("WEFT_TEST_RECORD_TIME_SCALE");
        assert_int_equal(sum.n_this_machine, 1);
        assert_int_equal(sum.n_timed, 0);
    }
    free(variant);
}

/* Without a hook: this machine's record whose steps are the naive schedule of a 64x256x256 Gemm
 * (as if tuned when the default was worse still) loses to today's default (~30x). */
static void test_stale_own_record_loses_to_the_default(void **state)
{
    fixture *fx = *state;
    static float w[256 * 256], b[256];
    build_graph_sized(fx, 64, 256, w, b);
    weft_tuner_target tt;
    if (!prepare(fx, 1, &tt)) skip();
    unsetenv("WEFT_TEST_RECORD_TIME_SCALE");
    unsetenv("WEFT_OWN_TIMING");
    db_with_own_record(fx, &tt, "", false);
    weft_tuned_summary sum;
    compile_and_check(fx, 1, w, b, &sum);
    assert_int_equal(sum.n_this_machine, 0);
    assert_int_equal(sum.n_nearest, 0);
    assert_int_equal(sum.n_default, 1);
    assert_int_equal(sum.n_timed, 1);
    assert_int_equal(sum.n_slower, 1);
    assert_int_equal(sum.n_default_slower, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_level_from_features),
        cmocka_unit_test(test_distance_follows_the_preference_order),
        cmocka_unit_test_setup_teardown(test_records_listed_nearest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_uses_the_nearest_replayable_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_falls_back_to_default_when_no_record_replays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_imported_record_is_checked_before_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_record_served_only_when_faster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_foreign_record_loses_to_the_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_record_timed_against_a_newer_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_own_record_loses_to_the_default, setup, teardown),
    };
    return cmocka_run_group_tests_name("tuner_nearest", tests, NULL, NULL);
}
