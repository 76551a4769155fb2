/* The default schedule's rules for products of a few rows (schedule/default_dense.c), run by the
 * LLVM target on a 2-thread pool (the smaller shapes also by the interpreter on the same
 * scheduled loop IR, whose bounds checks catch an access outside a buffer) and compared with a
 * float64 triple loop:
 *   - K blocked over every row tile (weft_sched_rows_kblock): matmul M x 333 x 1001 for M in
 *     {1, 3, 16, 17, 32}; the rule is asserted on the step text where it applies (M above one
 *     row tile, at most SMALL_M_ROW_TILES of them) and absent where it does not (M = 1, 3);
 *   - the streamed-weight tile (weft_sched_streamed_tile): a product over weights laid out in
 *     column blocks W[n / 32, k, n % 32], as the model's layout pass writes a Gemm's constant B,
 *     with L2 set small so the weights count as streamed: AVX-512 caps (32 registers of 16
 *     lanes) get 4-row tiles of 4 vectors for M in {5, 16, 17, 32} and not for M = 3 or 33; the
 *     schedule made for those caps runs on whatever CPU runs the test (LLVM legalizes the
 *     vector width).
 *   - pragma prefetch (lower/prefetch.c): step lists with no reuse loop, a reuse loop of 2 and
 *     of 3 iterations, run by LLVM and the interpreter (a prefetch must not change a result),
 *     their loop IR holding the prefetch; and the default rule adding it when the weight is
 *     larger than L2.
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (inputs in [-1, 1], sums of up to 1001
 * terms, float32 reassociated by the schedule: ~1e-5 relative to the float64 sum). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "compile/build.h"
#include "ir/print.h"
#include "lower/lower.h"

typedef struct fixture {
    const weft_target_ops *llvm, *interp;
    weft_target *tl, *ti;
    weft_threadpool *pool;
    weft_target_caps caps;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->llvm = weft_target_find("llvm");
    fx->interp = weft_target_find("interp");
    if (!fx->llvm || !fx->interp || fx->llvm->create(&fx->tl) != WEFT_OK || fx->interp->create(&fx->ti) != WEFT_OK ||
        weft_threadpool_create(2, &fx->pool) != WEFT_OK)
        return -1;
    fx->llvm->caps(fx->tl, &fx->caps);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    fx->llvm->destroy(fx->tl);
    fx->interp->destroy(fx->ti);
    weft_threadpool_destroy(fx->pool);
    free(fx);
    return 0;
}

static uint64_t rng;
static float uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* f's inputs random in [-1, 1] (the same for every call), outputs NaN so each must be written. */
static void fill(const weft_te_func *f, float **p, int64_t *len)
{
    rng = 88172645463325252ull;
    for (int i = 0; i < f->n_inputs + f->n_outputs; i++) {
        const weft_tensor *t = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        len[i] = weft_te_numel(t);
        p[i] = weft_rt_alloc((size_t)len[i] * sizeof(float));
        for (int64_t e = 0; e < len[i]; e++) p[i][e] = i < f->n_inputs ? uniform() : NAN;
    }
}

/* Runs s on (ops, t) and returns the output's error against ref (-1: it failed to build or run). */
static double run_error(fixture *fx, const weft_schedule *s, const weft_target_ops *ops, weft_target *t,
                        const weft_te_func *f, const double *ref)
{
    float *p[3];
    int64_t len[3];
    fill(f, p, len);
    weft_arena *a = weft_arena_create();
    weft_kernel *k = NULL;
    double err = -1;
    if (weft_target_build(ops, t, s, a, NULL, &k) == WEFT_OK && ops->run(k, (void **)p, &(weft_exec){.pool = fx->pool}) == WEFT_OK) {
        double md = 0, mr = 1;
        for (int64_t i = 0; i < len[2]; i++) {
            double d = fabs((double)p[2][i] - ref[i]);
            if (!(d <= md)) md = d; /* NaN counts as an error */
            if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
        }
        err = md / mr;
    } else print_error("%s: %s\n", ops == fx->llvm ? "llvm" : "interp", weft_last_error());
    if (k) ops->kernel_destroy(k);
    weft_arena_destroy(a);
    for (int i = 0; i < 3; i++) weft_rt_free(p[i]);
    return err;
}

/* C[i, n] = sum_k A[i, k] * B(k, n) in float64, B read plain [K, N] or blocked [N / c, K, c]. */
static double *reference(const weft_te_func *f, int64_t M, int64_t N, int64_t K, int64_t c)
{
    float *p[3];
    int64_t len[3];
    fill(f, p, len);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t i = 0; i < M; i++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (double)p[0][i * K + k] * (double)p[1][c ? ((n / c) * K + k) * c + n % c : k * N + n];
            ref[i * N + n] = acc;
        }
    for (int i = 0; i < 3; i++) weft_rt_free(p[i]);
    return ref;
}

/* Schedules f by default for caps, checks that the step text does (want) or does not contain
 * `needle`, and compares LLVM (and the interpreter when interp) with ref; returns failures. */
static int check(fixture *fx, const weft_te_func *f, const weft_target_caps *caps, const char *needle, bool want,
                 const double *ref, bool interp, const char *what)
{
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, caps), WEFT_OK);
    char *text = weft_schedule_text(s);
    int failures = 0;
    if ((strstr(text, needle) != NULL) != want) {
        print_error("%s: steps %s '%s':\n%s\n", what, want ? "lack" : "have", needle, text);
        failures++;
    }
    for (int target = 0; target < (interp ? 2 : 1); target++) {
        double err = target ? run_error(fx, s, fx->interp, fx->ti, f, ref) : run_error(fx, s, fx->llvm, fx->tl, f, ref);
        if (!(err >= 0 && err <= 1e-4)) {
            print_error("%s (%s): error %g\nsteps:\n%s\n", what, target ? "interp" : "llvm", err, text);
            failures++;
        }
    }
    free(text);
    weft_schedule_destroy(s);
    return failures;
}

static void test_kblock_rows(void **state)
{
    fixture *fx = *state;
    weft_target_caps caps = fx->caps;
    caps.max_threads = 2;
    int64_t full = caps.vector_regs >= 32 ? 8 : 6; /* weft_sched_tile_rows: (regs - 3) / 2, at most 8 */
    static const int64_t rows[] = {1, 3, 16, 17, 32};
    int failures = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int64_t M = rows[r], N = 333, K = 1001;
        weft_arena *a = weft_arena_create();
        weft_te_func *f = weft_op_matmul(a, M, N, K);
        assert_non_null(f);
        double *ref = reference(f, M, N, K, 0);
        char what[64];
        snprintf(what, sizeof what, "matmul %lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
        bool applies = M > full && M <= 4 * full; /* SMALL_M_ROW_TILES = 4 */
        failures += check(fx, f, &caps, "split C.local k ", applies, ref, false, what);
        free(ref);
        weft_arena_destroy(a);
    }
    /* a small L1 makes the K block short, so a shape the interpreter runs quickly has several */
    caps.l1d_bytes = 4096;
    caps.max_threads = 1;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, 17, 45, 333);
    double *ref = reference(f, 17, 45, 333, 0);
    failures += check(fx, f, &caps, "split C.local k ", full < 17, ref, true, "matmul 17x45x333, L1 4 KiB");
    free(ref);
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

/* C[b, n] = sum_k A[b, k] * W[floordiv(n, c), k, floormod(n, c)] (a pre-blocked Gemm). */
static weft_te_func *blocked_product(weft_arena *a, int64_t M, int64_t N, int64_t K, int64_t c)
{
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, K});
    weft_tensor *W = weft_te_placeholder(a, "W", WEFT_F32, 3, (int64_t[]){N / c, K, c});
    weft_tensor *C = weft_te_compute(a, "C", 2, (int64_t[]){M, N}, (const char *const[]){"b", "n"});
    const weft_expr *b = weft_te_axis(C, 0), *n = weft_te_axis(C, 1), *k = weft_te_reduce_axis(a, C, "k", K);
    const weft_expr *w = weft_te_at(a, W, weft_floordiv(a, n, weft_i64(a, c)), k, weft_floormod(a, n, weft_i64(a, c)));
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, A, b, k), w));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "blocked", 2, (const weft_tensor *const[]){A, W}, 1,
                                         (const weft_tensor *const[]){C}, &f),
                     WEFT_OK);
    return f;
}

static void test_streamed_weight_tile(void **state)
{
    fixture *fx = *state;
    weft_target_caps caps = fx->caps; /* AVX-512's register file, whatever the host */
    caps.vector_bits = 512;
    caps.vector_lanes_f32 = 16;
    caps.vector_regs = 32;
    caps.max_threads = 2;
    caps.l2_bytes = 64 * 1024; /* 480 x 1001 weights (1.9 MB) count as streamed */
    static const int64_t rows[] = {3, 5, 16, 17, 32, 33};
    int failures = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int64_t M = rows[r], N = 480, K = 1001;
        weft_arena *a = weft_arena_create();
        weft_te_func *f = blocked_product(a, M, N, K, 32);
        double *ref = reference(f, M, N, K, 32);
        char what[64];
        snprintf(what, sizeof what, "blocked %lldx%lldx%lld/32", (long long)M, (long long)N, (long long)K);
        /* 4-row tiles (of up to 4 vectors: 48 columns where 64 do not divide 480) */
        failures += check(fx, f, &caps, "split C b 4\n", M > 4 && M <= 32, ref, false, what);
        free(ref);
        weft_arena_destroy(a);
    }
    caps.l2_bytes = 1024;
    caps.max_threads = 1;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = blocked_product(a, 17, 96, 37, 32);
    double *ref = reference(f, 17, 96, 37, 32);
    failures += check(fx, f, &caps, "split C b 4\n", true, ref, true, "blocked 17x96x37/32, L2 1 KiB");
    free(ref);
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

/* C[nb, b, j] = sum_k h[b, k] * W[nb, k, j]: the recurrent step's product at batch 1 over its
 * weight in column blocks of c (model/recur.c), the tile's rows being the blocks. */
static weft_te_func *block_rows_product(weft_arena *a, int64_t NB, int64_t K, int64_t c)
{
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){1, K});
    weft_tensor *W = weft_te_placeholder(a, "W", WEFT_F32, 3, (int64_t[]){NB, K, c});
    weft_tensor *C = weft_te_compute(a, "C", 3, (int64_t[]){NB, 1, c}, (const char *const[]){"n0", "b", "n1"});
    const weft_expr *k = weft_te_reduce_axis(a, C, "k", K);
    const weft_expr *w = weft_te_at(a, W, weft_te_axis(C, 0), k, weft_te_axis(C, 2));
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, A, weft_te_axis(C, 1), k), w));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "block_rows", 2, (const weft_tensor *const[]){A, W}, 1,
                                         (const weft_tensor *const[]){C}, &f),
                     WEFT_OK);
    return f;
}

/* weft_sched_row_streams: rows that each stream a block of a weight larger than L2 are capped
 * at STREAM_BYTES per step of k (AVX-512, blocks of 32: 4 rows instead of the full tile's 8),
 * and not when the weight fits L2; with AVX2's blocks of 16 (64 B per row) the full tile's 6
 * rows stay under the cap. The outputs are C = h . W in the layout the reference reads as
 * [N / c, K, c] of a 1 x N product. */
static void test_row_streams(void **state)
{
    fixture *fx = *state;
    static const struct {
        int bits, regs;
        long l2;
        int64_t c;
        const char *rows;
    } cases[] = {
        {512, 32, 64 * 1024, 32, "split C n0 4\n"},  /* 48 x 200 x 32 floats = 1.2 MB > L2 */
        {512, 32, 4096 * 1024, 32, "split C n0 8\n"}, /* fits L2: the full tile */
        {256, 16, 64 * 1024, 16, "split C n0 6\n"},  /* 6 x 64 B: under the cap */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_target_caps caps = fx->caps;
        caps.vector_bits = cases[i].bits;
        caps.vector_lanes_f32 = cases[i].bits / 32;
        caps.vector_regs = cases[i].regs;
        caps.max_threads = 2;
        caps.l2_bytes = cases[i].l2;
        int64_t c = cases[i].c, NB = 48, K = 200;
        weft_arena *a = weft_arena_create();
        weft_te_func *f = block_rows_product(a, NB, K, c);
        double *ref = reference(f, 1, NB * c, K, c);
        char what[96];
        snprintf(what, sizeof what, "block rows %lldx%lldx%lld, %d-bit, L2 %ld", (long long)NB, (long long)K, (long long)c,
                 cases[i].bits, cases[i].l2);
        failures += check(fx, f, &caps, cases[i].rows, true, ref, i == 0, what);
        free(ref);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* Lowers s for caps; true when its loop IR has a prefetch of `buf`. */
static bool has_prefetch(const weft_schedule *s, const weft_target_caps *caps, const char *buf)
{
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = NULL;
    char needle[64], *text = NULL;
    snprintf(needle, sizeof needle, "prefetch %s[", buf);
    bool found = weft_lower(s, caps, a, &lf) == WEFT_OK && (text = weft_ir_func_str(lf)) && strstr(text, needle);
    free(text);
    weft_arena_destroy(a);
    return found;
}

static void test_prefetch_schedules(void **state)
{
    fixture *fx = *state;
    static const struct {
        int64_t m, n, k;
        const char *steps;
    } cases[] = {
        /* no reuse loop: L = k.0, P = k.1 directly inside (50 = 6 x 8 + 2: partitioned, two P) */
        {3, 40, 50, "split C j 8\nsplit C k 8\nreorder C i j.0 k.0 k.1 j.1\nvectorize C j.1\npragma C k.0 prefetch B"},
        /* reuse loop i.0 of 2 (and a partial last k block: 50 = 6 x 8 + 2) */
        {4, 32, 50, "split C k 8\nsplit C i 2\nsplit C j 8\nreorder C j.0 k.0 i.0 k.1 i.1 j.1\nunroll C i.1\n"
                    "vectorize C j.1\npragma C k.0 prefetch B"},
        /* reuse loop of 3, vectors of 32 lanes (two lines each) */
        {6, 64, 48, "split C k 16\nsplit C i 2\nsplit C j 32\nreorder C j.0 k.0 i.0 k.1 i.1 j.1\nunroll C i.1\n"
                    "vectorize C j.1\npragma C k.0 prefetch B"},
    };
    int failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = weft_op_matmul(a, cases[c].m, cases[c].n, cases[c].k);
        double *ref = reference(f, cases[c].m, cases[c].n, cases[c].k, 0);
        weft_schedule *s = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_apply_text(s, cases[c].steps), WEFT_OK);
        if (!has_prefetch(s, &fx->caps, "B")) {
            print_error("case %zu: no prefetch in the loop IR\n", c);
            failures++;
        }
        double el = run_error(fx, s, fx->llvm, fx->tl, f, ref), ei = run_error(fx, s, fx->interp, fx->ti, f, ref);
        if (!(el >= 0 && el <= 1e-4 && ei >= 0 && ei <= 1e-4)) {
            print_error("case %zu: error llvm %g interp %g\n", c, el, ei);
            failures++;
        }
        weft_schedule_destroy(s);
        free(ref);
        weft_arena_destroy(a);
    }
    /* The default rule: a few-row product over a weight larger than L2 gets the pragma. */
    weft_target_caps caps = fx->caps;
    caps.l1d_bytes = 4096;
    caps.max_threads = 1;
    int64_t full = caps.vector_regs >= 32 ? 8 : 6;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_matmul(a, 17, 45, 333);
    double *ref = reference(f, 17, 45, 333, 0);
    caps.l2_bytes = 32 * 1024; /* B: 333 x 45 x 4 = 60 KB */
    failures += check(fx, f, &caps, "prefetch B", full < 17, ref, true, "matmul 17x45x333, L2 32 KiB");
    caps.l2_bytes = 128 * 1024;
    failures += check(fx, f, &caps, "prefetch B", false, ref, false, "matmul 17x45x333, L2 128 KiB");
    free(ref);
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kblock_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streamed_weight_tile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefetch_schedules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
