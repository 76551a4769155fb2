/* Default (and hand-written) schedules of matmul-family and row kernels on odd extents, run by
 * the LLVM target on a 2-thread pool and compared with independent references:
 *   - matmul M x N x K for M, N, K in {1, 7, 37, 197, 333, 1000} (M*N*K <= 4e7): a float64
 *     triple loop; the smaller ones also by the interpreter running the same scheduled loop IR
 *     (its bounds checks catch any access outside a buffer by a partial tile);
 *   - a batched matmul whose reused operand is a transpose stage (attention's Q K^T), also with
 *     the other operand divided by a scalar (computed once at root, asserted on the steps): the
 *     default schedule packs it per column block (asserted on the step text) and matches;
 *   - a product whose weights are laid out in column blocks (W[n / c, k, n % c]: recurrent
 *     steps, pre-blocked Gemms) gets the register tile, not the row rfactor, and matches;
 *   - a product whose whole output is one register tile is that tile at root in native vectors
 *     (asserted on the steps), and matches;
 *   - a matrix-vector product under a bias + ReLU epilogue gets the rfactor along K, and matches;
 *   - a kernel of two small elementwise outputs keeps its nests serial, of two large ones
 *     parallel (asserted on the step text), and matches;
 *   - a transposing output (attention's K^T written out of the QKV product) vectorized along its
 *     input's contiguous axis (asserted on the steps), extents of 197 and 37 too, and matches;
 *   - softmax and layer norm rows of odd length, and erf over [-6, 6] against libm's erff.
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (inputs in [-1, 1]; float32 sums of up
 * to 1000 terms reassociated by the schedule differ from the float64 sum by ~1e-5 relative);
 * erf: absolute 2e-6. */
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

typedef struct fixture {
    weft_arena *a;
    const weft_target_ops *llvm, *interp;
    weft_target *tl, *ti;
    weft_threadpool *pool;
    weft_target_caps caps;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->a = weft_arena_create();
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
    weft_arena_destroy(fx->a);
    free(fx);
    return 0;
}

static uint64_t rng = 88172645463325252ull;
static float uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Buffers of f's parameters (inputs random in [-1, 1], outputs NaN so each must be written). */
typedef struct buffers {
    int n;
    float *p[8];
    int64_t len[8];
} buffers;

static void buffers_init(buffers *b, const weft_te_func *f)
{
    b->n = f->n_inputs + f->n_outputs;
    for (int i = 0; i < b->n; i++) {
        const weft_tensor *t = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
        b->len[i] = weft_te_numel(t);
        b->p[i] = weft_rt_alloc((size_t)b->len[i] * sizeof(float));
        for (int64_t e = 0; e < b->len[i]; e++) b->p[i][e] = i < f->n_inputs ? uniform() : NAN;
    }
}

static void buffers_free(buffers *b)
{
    for (int i = 0; i < b->n; i++) weft_rt_free(b->p[i]);
}

/* Builds s for (ops, t) and runs it on b; false (message printed) on failure. */
static bool run(fixture *fx, const weft_schedule *s, const weft_target_ops *ops, weft_target *t, buffers *b)
{
    weft_arena *a = weft_arena_create();
    weft_kernel *k = NULL;
    bool ok = weft_target_build(ops, t, s, a, NULL, &k) == WEFT_OK && ops->run(k, (void **)b->p, &(weft_exec){.pool = fx->pool}) == WEFT_OK;
    if (!ok) print_error("%s: %s\n", ops == fx->llvm ? "llvm" : "interp", weft_last_error());
    if (k) ops->kernel_destroy(k);
    weft_arena_destroy(a);
    return ok;
}

static double rel_error(const float *x, const double *ref, int64_t n)
{
    double md = 0, mr = 1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - ref[i]);
        if (!(d <= md)) md = d; /* NaN counts as an error */
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    return md / mr;
}

/* Runs f under its default or manual schedule and compares output 0 with ref. */
static int check(fixture *fx, const weft_te_func *f, bool manual, const double *ref, bool with_interp, const char *what)
{
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    if (manual) assert_int_equal(weft_schedule_manual_matmul(s, &fx->caps), WEFT_OK);
    else assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
    int failures = 0;
    for (int target = 0; target < (with_interp ? 2 : 1); target++) {
        buffers b;
        buffers_init(&b, f);
        rng = 88172645463325252ull; /* same inputs as the reference's */
        for (int i = 0; i < f->n_inputs; i++)
            for (int64_t e = 0; e < b.len[i]; e++) b.p[i][e] = uniform();
        int o = f->n_inputs;
        bool ok = target ? run(fx, s, fx->interp, fx->ti, &b) : run(fx, s, fx->llvm, fx->tl, &b);
        double err = ok ? rel_error(b.p[o], ref, b.len[o]) : -1;
        if (!(err >= 0 && err <= 1e-4)) {
            char *text = weft_schedule_text(s);
            print_error("%s (%s, %s): error %g\nsteps:\n%s\n", what, manual ? "manual" : "default",
                        target ? "interp" : "llvm", err, text);
            free(text);
            failures++;
        }
        buffers_free(&b);
    }
    weft_schedule_destroy(s);
    return failures;
}

/* The inputs check() will generate, for the reference. */
static void reference_inputs(const weft_te_func *f, float **in)
{
    rng = 88172645463325252ull;
    for (int i = 0; i < f->n_inputs; i++) {
        int64_t n = weft_te_numel(f->inputs[i]);
        in[i] = malloc(sizeof(float) * (size_t)n);
        for (int64_t e = 0; e < n; e++) in[i][e] = uniform();
    }
}

static void test_matmul_odd_shapes(void **state)
{
    fixture *fx = *state;
    static const int64_t ext[] = {1, 7, 37, 197, 333, 1000};
    int failures = 0, checked = 0;
    for (int mi = 0; mi < 6; mi++)
        for (int ni = 0; ni < 6; ni++)
            for (int ki = 0; ki < 6; ki++) {
                int64_t M = ext[mi], N = ext[ni], K = ext[ki];
                if ((double)M * (double)N * (double)K > 4e7) continue;
                weft_arena *a = weft_arena_create();
                weft_te_func *f = weft_op_matmul(a, M, N, K);
                assert_non_null(f);
                float *in[2];
                reference_inputs(f, in);
                double *ref = malloc(sizeof(double) * (size_t)(M * N));
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double acc = 0;
                        for (int64_t k = 0; k < K; k++) acc += (double)in[0][i * K + k] * (double)in[1][k * N + j];
                        ref[i * N + j] = acc;
                    }
                char what[64];
                snprintf(what, sizeof what, "matmul %lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
                bool small = M * N * K <= 300000;
                failures += check(fx, f, false, ref, small, what);
                failures += check(fx, f, true, ref, false, what);
                checked++;
                free(ref);
                free(in[0]);
                free(in[1]);
                weft_arena_destroy(a);
            }
    assert_true(checked >= 150);
    assert_int_equal(failures, 0);
}

/* The packed schedule's register tile from the caps (schedule/manual.c): with 32 vector
 * registers of 16 lanes and N a multiple of 48 it is 8 x 48 (24 accumulators + 3 operand
 * vectors + a broadcast = 28 registers), with 16 registers of 8 lanes 12 accumulators (6 x 16,
 * also where 6 rows do not divide M: 32 rows are five 6-row tiles and a 2-row one, not eight
 * 4-row tiles of 8 accumulators; weft_sched_fit_rows); it always fits the register file, and the results match a double-precision reference on
 * shapes whose rows leave a partial tile. The AVX2 caps' schedule runs on the host target. */
static void test_matmul_register_tile_fits_caps(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][3] = {{128, 96, 64}, {197, 144, 37}, {37, 48, 333}, {200, 480, 100}, {32, 64, 48}};
    const weft_target_caps host = fx->caps;
    weft_target_caps avx512 = host, avx2 = host;
    avx512.vector_regs = 32, avx512.vector_lanes_f32 = 16, avx512.vector_bits = 512;
    avx2.vector_regs = 16, avx2.vector_lanes_f32 = 8, avx2.vector_bits = 256;
    avx512.l2_bytes = avx2.l2_bytes = 2 << 20;
    const weft_target_caps *caps[] = {&avx512, &avx2};
    int failures = 0;
    for (int c = 0; c < 2; c++)
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            int64_t M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
            weft_arena *a = weft_arena_create();
            weft_te_func *f = weft_op_matmul(a, M, N, K);
            assert_non_null(f);
            weft_schedule *s = NULL;
            assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
            assert_int_equal(weft_schedule_manual_matmul(s, caps[c]), WEFT_OK);
            char *text = weft_schedule_text(s);
            long long panels = 0, nr = 0, mr = 0;
            const char *js = strstr(text, "split C j "), *is = strstr(text, "split C i ");
            assert_non_null(js);
            assert_non_null(is);
            assert_int_equal(sscanf(js, "split C j %lld %lld", &panels, &nr), 2);
            assert_int_equal(sscanf(is, "split C i %lld", &mr), 1);
            long long lanes = caps[c]->vector_lanes_f32, vecs = (nr + lanes - 1) / lanes;
            long long want = c == 0 ? (N % 48 == 0 ? 24 : 16) : 12; /* AVX-512 without 3-vector tiles: 8 x 32 */
            if (nr % lanes || mr * vecs != want || mr * vecs + vecs + 1 > caps[c]->vector_regs) {
                print_error("matmul %lldx%lldx%lld, %d registers: tile %lld x %lld\n%s\n", (long long)M, (long long)N,
                            (long long)K, caps[c]->vector_regs, mr, nr, text);
                failures++;
            }
            free(text);
            weft_schedule_destroy(s);
            float *in[2];
            reference_inputs(f, in);
            double *ref = malloc(sizeof(double) * (size_t)(M * N));
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double acc = 0;
                    for (int64_t k = 0; k < K; k++) acc += (double)in[0][i * K + k] * (double)in[1][k * N + j];
                    ref[i * N + j] = acc;
                }
            char what[80];
            snprintf(what, sizeof what, "matmul %lldx%lldx%lld (%d registers)", (long long)M, (long long)N, (long long)K,
                     caps[c]->vector_regs);
            fx->caps = *caps[c];
            failures += check(fx, f, true, ref, c == 0 && sh < 2, what);
            fx->caps = host;
            free(ref);
            free(in[0]);
            free(in[1]);
            weft_arena_destroy(a);
        }
    assert_int_equal(failures, 0);
}

/* C[b, i, j] = sum_k A[b, i, k] * T[b, k, j] with T[b, k, j] = Bt[b, j, k] (a transpose stage);
 * scaled: A read through Q[b, i, k] = A[b, i, k] / S[0] (attention's Q / sqrt(d)). */
static weft_te_func *batched_qkt(weft_arena *a, int64_t B, int64_t M, int64_t N, int64_t K, bool scaled)
{
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 3, (int64_t[]){B, M, K});
    weft_tensor *Bt = weft_te_placeholder(a, "Bt", WEFT_F32, 3, (int64_t[]){B, N, K});
    weft_tensor *S = weft_te_placeholder(a, "S", WEFT_F32, 1, (int64_t[]){1});
    weft_tensor *Q = A;
    if (scaled) {
        Q = weft_te_compute(a, "Q", 3, (int64_t[]){B, M, K}, (const char *const[]){"b", "i", "k"});
        weft_te_set_body(Q, WEFT_REDUCE_NONE,
                         weft_div(a, weft_te_at(a, A, weft_te_axis(Q, 0), weft_te_axis(Q, 1), weft_te_axis(Q, 2)),
                                  weft_te_at(a, S, weft_i64(a, 0))));
    }
    weft_tensor *T = weft_te_compute(a, "T", 3, (int64_t[]){B, K, N}, (const char *const[]){"b", "k", "j"});
    weft_te_set_body(T, WEFT_REDUCE_NONE, weft_te_at(a, Bt, weft_te_axis(T, 0), weft_te_axis(T, 2), weft_te_axis(T, 1)));
    weft_tensor *C = weft_te_compute(a, "C", 3, (int64_t[]){B, M, N}, (const char *const[]){"b", "i", "j"});
    const weft_expr *b = weft_te_axis(C, 0), *i = weft_te_axis(C, 1), *j = weft_te_axis(C, 2);
    const weft_expr *k = weft_te_reduce_axis(a, C, "k", K);
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, Q, b, i, k), weft_te_at(a, T, b, k, j)));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "qkt", scaled ? 3 : 2, (const weft_tensor *const[]){A, Bt, S}, 1,
                                         (const weft_tensor *const[]){C}, &f),
                     WEFT_OK);
    return f;
}

static void test_batched_matmul_transposed_operand_is_packed(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][4] = {{4, 128, 128, 32}, {3, 37, 45, 19}, {2, 197, 197, 32}, {1, 7, 333, 5}};
    int failures = 0;
    for (int scaled = 0; scaled < 2; scaled++)
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
            int64_t B = shapes[c][0], M = shapes[c][1], N = shapes[c][2], K = shapes[c][3];
            weft_arena *a = weft_arena_create();
            weft_te_func *f = batched_qkt(a, B, M, N, K, scaled);
            float *in[3];
            reference_inputs(f, in);
            double *ref = malloc(sizeof(double) * (size_t)(B * M * N));
            for (int64_t b = 0; b < B; b++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double acc = 0;
                        for (int64_t k = 0; k < K; k++) {
                            float q = in[0][(b * M + i) * K + k];
                            if (scaled) q = q / in[2][0];
                            acc += (double)q * (double)in[1][(b * N + j) * K + k];
                        }
                        ref[(b * M + i) * N + j] = acc;
                    }
            if (c == 0) { /* enough column blocks per thread: T is packed per block, not inlined;
                           * the divided operand once at root, in parallel, not per column block */
                weft_schedule *s = NULL;
                assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
                assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
                char *text = weft_schedule_text(s);
                assert_non_null(strstr(text, "compute_at T C"));
                assert_null(strstr(text, "compute_inline T"));
                if (scaled) {
                    assert_non_null(strstr(text, "parallel Q b@i"));
                    assert_null(strstr(text, "compute_inline Q"));
                }
                free(text);
                weft_schedule_destroy(s);
            }
            char what[64];
            snprintf(what, sizeof what, "qkt%s %lldx%lldx%lldx%lld", scaled ? " scaled" : "", (long long)B, (long long)M,
                     (long long)N, (long long)K);
            failures += check(fx, f, false, ref, B * M * N * K <= 300000, what);
            free(ref);
            for (int i = 0; i < f->n_inputs; i++) free(in[i]);
            weft_arena_destroy(a);
        }
    assert_int_equal(failures, 0);
}

/* C[b, n] = sum_k A[b, k] * W[floordiv(n, c), k, floormod(n, c)]: a product with its weights
 * pre-laid out in column blocks of c (a recurrent step's product, a pre-blocked Gemm). */
static weft_te_func *blocked_product(weft_arena *a, int64_t B, int64_t N, int64_t K, int64_t c)
{
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){B, K});
    weft_tensor *W = weft_te_placeholder(a, "W", WEFT_F32, 3, (int64_t[]){N / c, K, c});
    weft_tensor *C = weft_te_compute(a, "C", 2, (int64_t[]){B, N}, (const char *const[]){"b", "n"});
    const weft_expr *b = weft_te_axis(C, 0), *n = weft_te_axis(C, 1), *k = weft_te_reduce_axis(a, C, "k", K);
    const weft_expr *w = weft_te_at(a, W, weft_floordiv(a, n, weft_i64(a, c)), k, weft_floormod(a, n, weft_i64(a, c)));
    weft_te_set_body(C, WEFT_REDUCE_SUM, weft_mul(a, weft_te_at(a, A, b, k), w));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "blocked", 2, (const weft_tensor *const[]){A, W}, 1,
                                         (const weft_tensor *const[]){C}, &f),
                     WEFT_OK);
    return f;
}

/* Schedules blocked_product(B, N, K, blk) by default and checks its step text (every string of
 * want present, none of unwanted, NULL-terminated; "%L" in want is replaced by the lanes) and
 * its numbers against a float64 loop (also in the interpreter). Returns the failures. */
static int check_blocked(fixture *fx, const int64_t *shape, const char *const *want, const char *const *unwanted,
                         const char *what)
{
    int64_t B = shape[0], N = shape[1], K = shape[2], blk = shape[3];
    weft_arena *a = weft_arena_create();
    weft_te_func *f = blocked_product(a, B, N, K, blk);
    float *in[2];
    reference_inputs(f, in);
    double *ref = malloc(sizeof(double) * (size_t)(B * N));
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++) acc += (double)in[0][b * K + k] * (double)in[1][((n / blk) * K + k) * blk + n % blk];
            ref[b * N + n] = acc;
        }
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
    char *text = weft_schedule_text(s), name[80];
    snprintf(name, sizeof name, "%s %lldx%lldx%lld/%lld", what, (long long)B, (long long)N, (long long)K, (long long)blk);
    int failures = 0;
    for (int i = 0; want[i]; i++) {
        char w[64];
        const char *l = strstr(want[i], "%L");
        if (l) snprintf(w, sizeof w, "%.*s%lld", (int)(l - want[i]), want[i], (long long)fx->caps.vector_lanes_f32);
        else snprintf(w, sizeof w, "%s", want[i]);
        failures += !strstr(text, w);
    }
    for (int i = 0; unwanted[i]; i++) failures += strstr(text, unwanted[i]) != NULL;
    if (failures) print_error("%s: unexpected steps:\n%s\n", name, text);
    free(text);
    weft_schedule_destroy(s);
    failures += check(fx, f, false, ref, true, name);
    free(ref);
    free(in[0]);
    free(in[1]);
    weft_arena_destroy(a);
    return failures;
}

/* The blocked layout's floormod(n, c) walks the weights at unit stride, so the default schedule
 * register-tiles the product (a cache_write accumulator, weights reused across batch rows) and
 * does not take it for a row reduction (rfactor along k, one output element per task). */
static void test_blocked_weight_product(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][4] = {{16, 96, 64, 32}, {4, 48, 37, 16}, {3, 40, 19, 8}, {1, 320, 96, 32}, {1, 64, 130, 16}};
    static const char *const want[] = {"cache_write C local", NULL}, *const unwanted[] = {"rfactor", NULL};
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        failures += check_blocked(fx, shapes[c], want, unwanted, "blocked");
    assert_int_equal(failures, 0);
}

/* A product whose whole output is one register tile (a recurrent step's [2, 48] over 48 hidden
 * units): it has no loop to be computed at, and is the register tile at root, its vector axis in
 * native vectors (asserted on the steps: split by the lanes, never fused into one parallel loop
 * over the output's elements inside the reduction, as it was: scalar, 1.6 GFLOP/s), and matches. */
static void test_whole_output_tile(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][4] = {{2, 48, 48, 16}, {3, 40, 24, 8}, {1, 16, 50, 16}};
    static const char *const unwanted[] = {"fuse C.local", "parallel C.local", NULL};
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        bool wide = shapes[c][1] > fx->caps.vector_lanes_f32; /* more columns than a vector */
        const char *const want[] = {"reorder C.local k", wide ? "split C.local n %L" : NULL, NULL};
        failures += check_blocked(fx, shapes[c], want, unwanted, "whole tile");
    }
    assert_int_equal(failures, 0);
}

/* A matrix-vector product under an epilogue (dense_bias_relu with N = 1: max(A W + b, 0)) gets
 * the rfactor of its reduction along K (asserted on the step text; vectorized across rows it
 * read A in gathers of stride K), and matches, with K a multiple of the lanes or not. */
static void test_matrix_vector_with_epilogue(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][2] = {{197, 1001}, {37, 256}, {5, 640}};
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int64_t M = shapes[c][0], K = shapes[c][1];
        weft_arena *a = weft_arena_create();
        weft_te_func *f = weft_op_dense_bias_relu(a, M, 1, K);
        assert_non_null(f);
        float *in[3];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)M);
        for (int64_t i = 0; i < M; i++) {
            double acc = in[2][0];
            for (int64_t k = 0; k < K; k++) acc += (double)in[0][i * K + k] * (double)in[1][k];
            ref[i] = acc > 0 ? acc : 0;
        }
        weft_schedule *s = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
        char *text = weft_schedule_text(s);
        /* ... and the last vector of partial sums summed across its lanes (a vectorized
         * reduction into one cell, not a serial chain) */
        if (!strstr(text, "rfactor") || !strstr(text, "vectorize D k.1")) {
            print_error("%lldx1x%lld with an epilogue: want partial sums along K, got:\n%s\n", (long long)M, (long long)K, text);
            failures++;
        }
        free(text);
        weft_schedule_destroy(s);
        char what[64];
        snprintf(what, sizeof what, "matrix-vector %lldx1x%lld + bias, relu", (long long)M, (long long)K);
        failures += check(fx, f, false, ref, true, what);
        free(ref);
        for (int i = 0; i < 3; i++) free(in[i]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* Y = 2 A + 1 and Z = A * A, two elementwise outputs: below SMALL_NEST (4096) elements each
 * nest stays serial (a fork-join costs about what it would save), from there both are parallel;
 * Y matches either way. */
static void test_small_output_nests_are_serial(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][2] = {{2, 256}, {64, 128}};
    int failures = 0;
    for (int c = 0; c < 2; c++) {
        int64_t M = shapes[c][0], N = shapes[c][1];
        weft_arena *a = weft_arena_create();
        weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, N});
        weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){M, N}, (const char *const[]){"i", "j"});
        weft_tensor *Z = weft_te_compute(a, "Z", 2, (int64_t[]){M, N}, (const char *const[]){"i", "j"});
        const weft_expr *ay = weft_te_at(a, A, weft_te_axis(Y, 0), weft_te_axis(Y, 1));
        const weft_expr *az = weft_te_at(a, A, weft_te_axis(Z, 0), weft_te_axis(Z, 1));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_add(a, weft_mul(a, ay, weft_f32(a, 2)), weft_f32(a, 1)));
        weft_te_set_body(Z, WEFT_REDUCE_NONE, weft_mul(a, az, az));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "two", 1, (const weft_tensor *const[]){A}, 2, (const weft_tensor *const[]){Y, Z}, &f),
                         WEFT_OK);
        weft_schedule *s = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
        char *text = weft_schedule_text(s);
        bool par_y = strstr(text, "parallel Y") != NULL, par_z = strstr(text, "parallel Z") != NULL;
        if (par_y != (c == 1) || par_z != (c == 1)) {
            print_error("%lldx%lld: parallel Y %d Z %d, want %d:\n%s\n", (long long)M, (long long)N, par_y, par_z, c == 1, text);
            failures++;
        }
        free(text);
        weft_schedule_destroy(s);
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(M * N));
        for (int64_t e = 0; e < M * N; e++) ref[e] = 2.0 * in[0][e] + 1.0;
        failures += check(fx, f, false, ref, true, "two outputs");
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* 1 (and the schedule printed) when f's default schedule lacks the step `want` or has `avoid`. */
static int schedule_failure(const fixture *fx, weft_te_func *f, const char *want, const char *avoid, const char *what)
{
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK);
    char *text = weft_schedule_text(s);
    int bad = !strstr(text, want) || strstr(text, avoid);
    if (bad) print_error("%s: want \"%s\", not \"%s\":\n%s\n", what, want, avoid, text);
    free(text);
    weft_schedule_destroy(s);
    return bad;
}

/* Y[h, d, t] = X[t, H*D + h*D + d] through an inlined slice stage (attention's K^T out of the
 * QKV product): the default schedule vectorizes d, along which X is contiguous, inside a loop
 * over t (the stores transposed in registers), not t (a gather per vector); extents of t that
 * are not a multiple of the vector (197, 37) too; D a multiple of half or a quarter of a vector
 * only (24, 12 with 16 lanes) in tiles of that width. With D = 7 it keeps t in vectors. Values against the plain index arithmetic, LLVM and interpreter. */
static void test_transposed_output(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][3] = {{128, 8, 32}, {197, 4, 32}, {37, 2, 16}, {40, 3, 7}, {64, 3, 24}, {48, 2, 12}};
    int64_t lanes = fx->caps.vector_lanes_f32 > 1 ? fx->caps.vector_lanes_f32 : 8;
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int64_t T = shapes[c][0], H = shapes[c][1], D = shapes[c][2];
        weft_arena *a = weft_arena_create();
        weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){T, 3 * H * D});
        weft_tensor *S = weft_te_compute(a, "S", 3, (int64_t[]){T, H, D}, (const char *const[]){"t", "h", "d"});
        const weft_expr *col = weft_add(a, weft_add(a, weft_i64(a, H * D), weft_mul(a, weft_te_axis(S, 1), weft_i64(a, D))),
                                        weft_te_axis(S, 2));
        weft_te_set_body(S, WEFT_REDUCE_NONE, weft_te_at(a, X, weft_te_axis(S, 0), col));
        weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){H, D, T}, (const char *const[]){"h", "d", "t"});
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_te_at(a, S, weft_te_axis(Y, 2), weft_te_axis(Y, 0), weft_te_axis(Y, 1)));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "kt", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                         WEFT_OK);
        int64_t w = lanes; /* the tile: a vector, else half or a quarter of one (>= 4) dividing D */
        while (D % w && w / 2 >= 4 && w / 2 >= lanes / 4) w /= 2;
        const char *along_d = D > w ? "vectorize Y d.1" : "vectorize Y d\n", *along_t = "vectorize Y t";
        char what[64];
        snprintf(what, sizeof what, "transpose %lldx%lldx%lld", (long long)T, (long long)H, (long long)D);
        failures += D % w == 0 ? schedule_failure(fx, f, along_d, along_t, what) : schedule_failure(fx, f, along_t, along_d, what);
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(H * D * T));
        for (int64_t h = 0; h < H; h++)
            for (int64_t d = 0; d < D; d++)
                for (int64_t t = 0; t < T; t++) ref[(h * D + d) * T + t] = in[0][t * 3 * H * D + H * D + h * D + d];
        failures += check(fx, f, false, ref, true, what);
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* Y[q, e, t] = X[t, floordiv(q*D + e, H*D)*3*H*D + floormod(q*D + e, H*D) + H*D], q = b*H + h:
 * K^T of heads whose batch and head axes a reshape merged (PyTorch's batch_first
 * nn.MultiheadAttention); the index walks e at stride 1 inside floormod, so e is vectorized
 * (the stores transposed in registers), not t. Values against the plain index arithmetic. */
static void test_transposed_merged_heads(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][4] = {{128, 2, 3, 32}, {40, 2, 2, 16}};
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int64_t T = shapes[c][0], B = shapes[c][1], H = shapes[c][2], D = shapes[c][3], HD = H * D;
        weft_arena *a = weft_arena_create();
        weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){T, B * 3 * HD});
        weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){B * H, D, T}, (const char *const[]){"q", "e", "t"});
        const weft_expr *flat = weft_add(a, weft_mul(a, weft_te_axis(Y, 0), weft_i64(a, D)), weft_te_axis(Y, 1));
        const weft_expr *col = weft_add(a, weft_add(a, weft_mul(a, weft_floordiv(a, flat, weft_i64(a, HD)), weft_i64(a, 3 * HD)),
                                                    weft_floormod(a, flat, weft_i64(a, HD))),
                                        weft_i64(a, HD));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_te_at(a, X, weft_te_axis(Y, 2), col));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "kt", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                         WEFT_OK);
        failures += schedule_failure(fx, f, "vectorize Y e", "vectorize Y t", "merged heads");
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(B * HD * T));
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t e = 0; e < D; e++)
                    for (int64_t t = 0; t < T; t++)
                        ref[(((b * H + h) * D) + e) * T + t] = in[0][t * B * 3 * HD + b * 3 * HD + HD + h * D + e];
        failures += check(fx, f, false, ref, true, "merged heads");
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    /* a divisor smaller than a vector is no such block: Y[c, w] = X[floordiv(c, 2), 2w +
     * floormod(c, 2)] (a pixel unshuffle's channel split) stays vectorized along w, its reads
     * strided by 2, not along c by gathers */
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){16, 128});
    weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){32, 64}, (const char *const[]){"c", "w"});
    const weft_expr *c = weft_te_axis(Y, 0);
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_te_at(a, X, weft_floordiv(a, c, weft_i64(a, 2)),
                                weft_add(a, weft_mul(a, weft_te_axis(Y, 1), weft_i64(a, 2)), weft_floormod(a, c, weft_i64(a, 2)))));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "unshuffle", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    failures += schedule_failure(fx, f, "vectorize Y w", "vectorize Y c", "unshuffle");
    float *in[1];
    reference_inputs(f, in);
    double ref[32 * 64];
    for (int ci = 0; ci < 32; ci++)
        for (int w = 0; w < 64; w++) ref[ci * 64 + w] = in[0][(ci / 2) * 128 + 2 * w + ci % 2];
    failures += check(fx, f, false, ref, true, "unshuffle");
    free(in[0]);
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

static void test_softmax_and_layer_norm_rows(void **state)
{
    fixture *fx = *state;
    static const int64_t shapes[][2] = {{7, 37}, {5, 197}, {3, 1}, {4, 16}, {2, 1000}, {9, 333}, {1, 7}};
    int failures = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int64_t M = shapes[c][0], N = shapes[c][1];
        for (int op = 0; op < 2; op++) {
            weft_arena *a = weft_arena_create();
            weft_te_func *f = op ? weft_op_layer_norm(a, M, N, 1e-5f) : weft_op_softmax(a, M, N);
            assert_non_null(f);
            float *in[3];
            reference_inputs(f, in);
            double *ref = malloc(sizeof(double) * (size_t)(M * N));
            for (int64_t i = 0; i < M; i++) {
                const float *x = in[0] + i * N;
                double *y = ref + i * N;
                if (!op) {
                    double mx = -INFINITY, sum = 0;
                    for (int64_t j = 0; j < N; j++) mx = fmax(mx, x[j]);
                    for (int64_t j = 0; j < N; j++) sum += exp(x[j] - mx);
                    for (int64_t j = 0; j < N; j++) y[j] = exp(x[j] - mx) / sum;
                } else {
                    double mean = 0, var = 0;
                    for (int64_t j = 0; j < N; j++) mean += x[j];
                    mean /= (double)N;
                    for (int64_t j = 0; j < N; j++) var += (x[j] - mean) * (x[j] - mean);
                    var /= (double)N;
                    for (int64_t j = 0; j < N; j++) y[j] = (x[j] - mean) / sqrt(var + 1e-5) * in[1][j] + in[2][j];
                }
            }
            char what[64];
            snprintf(what, sizeof what, "%s %lldx%lld", op ? "layer_norm" : "softmax", (long long)M, (long long)N);
            failures += check(fx, f, false, ref, true, what);
            free(ref);
            for (int i = 0; i < f->n_inputs; i++) free(in[i]);
            weft_arena_destroy(a);
        }
    }
    assert_int_equal(failures, 0);
}

/* Y[i, j] = softmax(X)[j, i] (LeViT's attn.softmax(-1).transpose(-1, -2)): a row of Y needs
 * every row of the softmax, so its max, exp and sum stages are not computed at Y's row loop
 * (there each output row recomputed the whole softmax: 49x the work); the exp rows at root
 * are vectorized. Values against a double softmax, LLVM and interpreter. */
static void test_softmax_read_transposed(void **state)
{
    fixture *fx = *state;
    static const int64_t sizes[] = {49, 64};
    int failures = 0;
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t N = sizes[c];
        weft_arena *a = weft_arena_create();
        const char *const ij[] = {"i", "j"}, *const i_only[] = {"i"};
        weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){N, N});
        weft_tensor *mx = weft_te_compute(a, "mx", 1, (int64_t[]){N}, i_only);
        weft_te_set_body(mx, WEFT_REDUCE_MAX, weft_te_at(a, X, weft_te_axis(mx, 0), weft_te_reduce_axis(a, mx, "k", N)));
        weft_tensor *e = weft_te_compute(a, "e", 2, (int64_t[]){N, N}, ij);
        weft_te_set_body(e, WEFT_REDUCE_NONE,
                         weft_call1(a, WEFT_INTRIN_EXP, weft_sub(a, weft_te_at(a, X, weft_te_axis(e, 0), weft_te_axis(e, 1)),
                                                                  weft_te_at(a, mx, weft_te_axis(e, 0)))));
        weft_tensor *sm = weft_te_compute(a, "sm", 1, (int64_t[]){N}, i_only);
        weft_te_set_body(sm, WEFT_REDUCE_SUM, weft_te_at(a, e, weft_te_axis(sm, 0), weft_te_reduce_axis(a, sm, "k", N)));
        weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){N, N}, ij);
        const weft_expr *i = weft_te_axis(Y, 0), *j = weft_te_axis(Y, 1);
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_mul(a, weft_te_at(a, e, j, i), weft_div(a, weft_f32(a, 1.0), weft_te_at(a, sm, j))));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "smt", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                         WEFT_OK);
        char what[64];
        snprintf(what, sizeof what, "softmax read transposed %lld", (long long)N);
        failures += schedule_failure(fx, f, "vectorize e j", "compute_at sm Y", what);
        failures += schedule_failure(fx, f, "vectorize e j", "compute_at e Y", what);
        failures += schedule_failure(fx, f, "vectorize e j", "compute_at mx Y", what);
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(N * N));
        for (int64_t r = 0; r < N; r++) {
            const float *x = in[0] + r * N;
            double m = -INFINITY, sum = 0;
            for (int64_t k = 0; k < N; k++) m = fmax(m, x[k]);
            for (int64_t k = 0; k < N; k++) sum += exp(x[k] - m);
            for (int64_t k = 0; k < N; k++) ref[k * N + r] = exp(x[k] - m) / sum;
        }
        failures += check(fx, f, false, ref, true, what);
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* A row max of 64 or more at the output's row loop runs in vector partials (split, rfactor,
 * the partial stage vectorized, the final max across lanes) instead of a scalar loop; values
 * are test_softmax_and_layer_norm_rows'. */
static void test_row_reduction_in_vectors(void **state)
{
    fixture *fx = *state;
    int64_t lanes = fx->caps.vector_lanes_f32 > 1 ? fx->caps.vector_lanes_f32 : 8;
    int failures = 0;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = weft_op_softmax(a, 9, 4 * lanes + 13);
    assert_non_null(f);
    failures += schedule_failure(fx, f, "rfactor mx k.1", "parallel mx", "softmax row max");
    failures += schedule_failure(fx, f, "compute_at mx Y", "parallel mx", "softmax row max");
    /* the sum reads the exp row computed at Y's row loop: its vector partials are computed
     * there too (inside the sum they would be the exp's second reader: a scalar loop) */
    failures += schedule_failure(fx, f, "compute_at s.rf Y i", "compute_at s.rf s", "softmax row sum");
    failures += schedule_failure(fx, f, "vectorize s.rf k.1", "parallel s", "softmax row sum");
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

/* Y[c, i, r] = I[i, r] + c with I a select over r of 10 expressions of A (91 nodes; TopK's
 * Indices over its rounds has this form): with 64 values of c, I is computed once at root, not
 * inlined into every element of Y; with 2 it is inlined. Values against plain C. */
static void test_costly_broadcast_computed_once(void **state)
{
    fixture *fx = *state;
    enum { M = 40, R = 10 };
    static const int64_t cs[] = {64, 2, 64}; /* the last read through J = I + 1 (inlined) */
    int failures = 0;
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        int64_t C = cs[t];
        bool through = t == 2;
        weft_arena *a = weft_arena_create();
        weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, R});
        weft_tensor *I = weft_te_compute(a, "I", 2, (int64_t[]){M, R}, (const char *const[]){"i", "r"});
        const weft_expr *i = weft_te_axis(I, 0), *r = weft_te_axis(I, 1), *v = weft_f32(a, 0);
        for (int q = R - 1; q >= 0; q--)
            v = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, r, weft_i64(a, q)),
                            weft_mul(a, weft_te_at(a, A, i, weft_i64(a, (q * 3) % R)), weft_f32(a, (float)(q + 1))), v);
        weft_te_set_body(I, WEFT_REDUCE_NONE, v);
        weft_tensor *J = I;
        if (through) {
            J = weft_te_compute(a, "J", 2, (int64_t[]){M, R}, (const char *const[]){"i", "r"});
            weft_te_set_body(J, WEFT_REDUCE_NONE,
                             weft_add(a, weft_te_at(a, I, weft_te_axis(J, 0), weft_te_axis(J, 1)), weft_f32(a, 1)));
        }
        weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, M, R}, (const char *const[]){"c", "i", "r"});
        weft_te_set_body(Y, WEFT_REDUCE_NONE,
                         weft_add(a, weft_te_at(a, J, weft_te_axis(Y, 1), weft_te_axis(Y, 2)),
                                  weft_cast(a, WEFT_F32, weft_te_axis(Y, 0))));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "bc", 1, (const weft_tensor *const[]){A}, 1, (const weft_tensor *const[]){Y}, &f),
                         WEFT_OK);
        failures += C >= 4 ? schedule_failure(fx, f, "parallel Y", "compute_inline I", "broadcast of 64")
                           : schedule_failure(fx, f, "compute_inline I", "parallel I", "broadcast of 2");
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(C * M * R));
        for (int64_t c = 0; c < C; c++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t q = 0; q < R; q++)
                    ref[(c * M + m) * R + q] = (double)(in[0][m * R + (q * 3) % R] * (float)(q + 1)) + (double)c + (through ? 1 : 0);
        failures += check(fx, f, false, ref, true, "costly broadcast");
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* The same costly expression read once per element through a concatenation (a select over the
 * channel axis; SegFormer's four upsampled maps): not a broadcast, so it is inlined into the
 * copy, and the select, whose condition is the same for every lane of a vector, evaluates one
 * side in a branch. Values against C at 64 channels, a quarter of them from the expression. */
static void test_concat_of_costly_stage_inlined(void **state)
{
    fixture *fx = *state;
    enum { M = 40, R = 10, C = 64, CI = 16 };
    weft_arena *a = weft_arena_create();
    weft_tensor *A = weft_te_placeholder(a, "A", WEFT_F32, 2, (int64_t[]){M, R});
    weft_tensor *I = weft_te_compute(a, "I", 3, (int64_t[]){CI, M, R}, (const char *const[]){"c", "i", "r"});
    const weft_expr *ci = weft_te_axis(I, 0), *i = weft_te_axis(I, 1), *r = weft_te_axis(I, 2), *v = weft_f32(a, 0);
    for (int q = R - 1; q >= 0; q--)
        v = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, r, weft_i64(a, q)),
                        weft_mul(a, weft_te_at(a, A, i, weft_i64(a, (q * 3) % R)), weft_f32(a, (float)(q + 1))), v);
    weft_te_set_body(I, WEFT_REDUCE_NONE, weft_add(a, v, weft_cast(a, WEFT_F32, ci)));
    weft_tensor *Y = weft_te_compute(a, "Y", 3, (int64_t[]){C, M, R}, (const char *const[]){"c", "i", "r"});
    const weft_expr *c = weft_te_axis(Y, 0);
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_select(a, weft_cmp(a, WEFT_EXPR_LT, c, weft_i64(a, CI)),
                                 weft_te_at(a, I, weft_min(a, c, weft_i64(a, CI - 1)), weft_te_axis(Y, 1), weft_te_axis(Y, 2)),
                                 weft_mul(a, weft_cast(a, WEFT_F32, c), weft_f32(a, -1))));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "cat", 1, (const weft_tensor *const[]){A}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    int failures = schedule_failure(fx, f, "compute_inline I", "parallel I", "concatenation of a costly stage");
    float *in[1];
    reference_inputs(f, in);
    double *ref = malloc(sizeof(double) * (size_t)(C * M * R));
    for (int64_t cc = 0; cc < C; cc++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t q = 0; q < R; q++)
                ref[(cc * M + m) * R + q] = cc < CI ? (double)(in[0][m * R + (q * 3) % R] * (float)(q + 1)) + (double)cc : -(double)cc;
    failures += check(fx, f, false, ref, true, "concatenation of a costly stage");
    free(ref);
    free(in[0]);
    weft_arena_destroy(a);
    assert_int_equal(failures, 0);
}

/* A reduction over a leading axis whose reads are contiguous along its last axis (a column sum
 * per batch, CumSum's block totals): Y[b, j] = sum over i of X[b, i, j]. The default schedule
 * vectorizes j with the reduction loop outside it (it ran as a scalar loop over every output);
 * J = 40 and 100 (split by the vector, a partial last vector). Values against float64,
 * LLVM and interpreter. */
static void test_leading_axis_reduction_vectorized(void **state)
{
    fixture *fx = *state;
    static const int64_t js[] = {40, 100};
    enum { NB = 3, I = 50 };
    int failures = 0;
    for (size_t t = 0; t < sizeof js / sizeof js[0]; t++) {
        int64_t J = js[t];
        weft_arena *a = weft_arena_create();
        weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 3, (int64_t[]){NB, I, J});
        weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){NB, J}, (const char *const[]){"b", "j"});
        const weft_expr *i = weft_te_reduce_axis(a, Y, "i", I);
        weft_te_set_body(Y, WEFT_REDUCE_SUM, weft_te_at(a, X, weft_te_axis(Y, 0), i, weft_te_axis(Y, 1)));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "colsum", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                         WEFT_OK);
        failures += schedule_failure(fx, f, J > 2 * fx->caps.vector_lanes_f32 ? "vectorize Y j.1" : "vectorize Y j", "fuse Y b j",
                                     "leading-axis reduction");
        float *in[1];
        reference_inputs(f, in);
        double *ref = malloc(sizeof(double) * (size_t)(NB * J));
        for (int64_t b = 0; b < NB; b++)
            for (int64_t j = 0; j < J; j++) {
                double acc = 0;
                for (int64_t k = 0; k < I; k++) acc += in[0][(b * I + k) * J + j];
                ref[b * J + j] = acc;
            }
        failures += check(fx, f, false, ref, true, "leading-axis reduction");
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* Y[b, j] = SUM over k < 8 of select(X[b, k] * 40 < j - 20, X[b, k], 0): a short reduction
 * whose reads skip the output's last axis, which only its condition compares (a scatter's
 * search over its few rows). The default schedule vectorizes j, the reads the same in every
 * lane; it ran as a scalar loop over every output (a top-8 mask's scatter: 424 -> 181 us).
 * Z, the row sums of Y, reads it, so Y is a stage of its own, as the scatter's search is. */
static void test_short_search_vectorized(void **state)
{
    fixture *fx = *state;
    static const int64_t js[] = {40, 100};
    enum { NB = 64, K = 8 };
    int failures = 0;
    for (size_t t = 0; t < sizeof js / sizeof js[0]; t++) {
        int64_t J = js[t];
        weft_arena *a = weft_arena_create();
        weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){NB, K});
        weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){NB, J}, (const char *const[]){"b", "j"});
        const weft_expr *k = weft_te_reduce_axis(a, Y, "k", K);
        const weft_expr *x = weft_te_at(a, X, weft_te_axis(Y, 0), k);
        const weft_expr *bound = weft_sub(a, weft_cast(a, WEFT_F32, weft_te_axis(Y, 1)), weft_f32(a, 20.0));
        weft_te_set_body(Y, WEFT_REDUCE_SUM,
                         weft_select(a, weft_cmp(a, WEFT_EXPR_LT, weft_mul(a, x, weft_f32(a, 40.0)), bound), x,
                                     weft_f32(a, 0.0)));
        weft_tensor *Z = weft_te_compute(a, "Z", 1, (int64_t[]){NB}, (const char *const[]){"b"});
        const weft_expr *jj = weft_te_reduce_axis(a, Z, "jj", J);
        weft_te_set_body(Z, WEFT_REDUCE_SUM, weft_te_at(a, Y, weft_te_axis(Z, 0), jj));
        weft_te_func *f = NULL;
        assert_int_equal(weft_te_func_create(a, "search", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Z}, &f),
                         WEFT_OK);
        failures += schedule_failure(fx, f, J > 2 * fx->caps.vector_lanes_f32 ? "vectorize Y j.1" : "vectorize Y j", "fuse Y b j",
                                     "short search");
        float *in[1];
        reference_inputs(f, in);
        double *ref = calloc((size_t)NB, sizeof(double));
        for (int64_t b = 0; b < NB; b++)
            for (int64_t j = 0; j < J; j++) {
                double acc = 0;
                for (int64_t q = 0; q < K; q++) {
                    float v = in[0][b * K + q];
                    if (v * 40.0f < (float)j - 20.0f) acc += v; /* some below, some above */
                }
                ref[b] += acc;
            }
        failures += check(fx, f, false, ref, true, "short search");
        free(ref);
        free(in[0]);
        weft_arena_destroy(a);
    }
    assert_int_equal(failures, 0);
}

/* Y = fn(X) over n inputs under the default schedule (vectorized) on the LLVM target, X set by
 * fill; the largest |Y - ref(X)|, a NaN reference wanting a NaN. */
static double unary_error(fixture *fx, weft_intrin fn, int64_t n, void (*fill)(float *, int64_t), float (*ref)(float))
{
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 1, (int64_t[]){n});
    weft_tensor *Y = weft_te_compute(a, "Y", 1, (int64_t[]){n}, (const char *const[]){"i"});
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_call1(a, fn, weft_te_at(a, X, weft_te_axis(Y, 0))));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "unary", 1, (const weft_tensor *const[]){X}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &fx->caps), WEFT_OK); /* vectorized */
    buffers b;
    buffers_init(&b, f);
    fill(b.p[0], n);
    assert_true(run(fx, s, fx->llvm, fx->tl, &b));
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = ref(b.p[0][i]);
        if (isnan(want)) {
            assert_true(isnan(b.p[1][i]));
            continue;
        }
        double d = fabs((double)b.p[1][i] - (double)want);
        if (!(d <= worst)) worst = d;
    }
    buffers_free(&b);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return worst;
}

static void fill_erf(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] = (float)(-6.0 + 12.0 * (double)i / (double)(n - 1));
    x[n / 2 + 1] = NAN;
}

/* erf in vectors (targets/llvm/expr.c fast_erf_f32) against libm's erff on [-6, 6] and NaN. */
static void test_erf_matches_libm(void **state)
{
    double worst = unary_error(*state, WEFT_INTRIN_ERF, 12001, fill_erf, erff);
    print_message("erf: max |weft - erff| = %.3g over [-6, 6]\n", worst);
    assert_true(worst <= 2e-6);
}

static void fill_sincos(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double t = (double)i / (double)(n - 1);
        x[i] = i < n / 2 ? (float)(-100.0 + 400.0 * t) : (float)(-8192.0 + 16384.0 * t);
    }
    static const float odd[] = {1e4f, -3.0e5f, 1.5e7f, 8193.0f, 8191.5f, -8192.0f, 1e-30f, -0.0f};
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) x[100 + 37 * (int64_t)k] = odd[k];
    x[n / 3] = INFINITY;
    x[n / 3 + 1] = NAN;
}

/* sin and cos in vectors (targets/llvm/expr.c fast_sincos_f32: Cody-Waite reduction by pi/2,
 * Cephes' polynomials; libm for |x| > 8192 and infinities) against libm's sinf and cosf on
 * [-100, 100], arguments up to 8192, the large ones that take libm's path mixed into the same
 * vectors, and NaN. Absolute error <= 4e-7 (|sin|, |cos| <= 1). */
static void test_sin_cos_match_libm(void **state)
{
    for (int cosine = 0; cosine < 2; cosine++) {
        double worst = unary_error(*state, cosine ? WEFT_INTRIN_COS : WEFT_INTRIN_SIN, 24001, fill_sincos, cosine ? cosf : sinf);
        print_message("%s: max |weft - libm| = %.3g\n", cosine ? "cos" : "sin", worst);
        assert_true(worst <= 4e-7);
    }
}

/* A concatenation along the vector axis of a costly and a plain source (a NeRF layer's input:
 * 256 features, then sin and cos of an encoding): Y[i, j] = select(j < 40, X[i, min(j, 39)],
 * sin(E[i, max(j - 40, 0)])) over j < 53. Vectors wholly inside one source take one branch
 * (the clamp the branch proves idle is read past: a contiguous load), the one
 * across the boundary both, the last (partial, under a lane mask) the second source only;
 * values against C. */
static void test_concat_along_vector_axis(void **state)
{
    fixture *fx = *state;
    enum { M = 7, A = 40, B = 13 };
    weft_arena *a = weft_arena_create();
    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 2, (int64_t[]){M, A});
    weft_tensor *E = weft_te_placeholder(a, "E", WEFT_F32, 2, (int64_t[]){M, B});
    weft_tensor *Y = weft_te_compute(a, "Y", 2, (int64_t[]){M, A + B}, (const char *const[]){"i", "j"});
    const weft_expr *i = weft_te_axis(Y, 0), *j = weft_te_axis(Y, 1);
    weft_te_set_body(Y, WEFT_REDUCE_NONE,
                     weft_select(a, weft_cmp(a, WEFT_EXPR_LT, j, weft_i64(a, A)), weft_te_at(a, X, i, weft_min(a, j, weft_i64(a, A - 1))),
                                 weft_call1(a, WEFT_INTRIN_SIN, weft_te_at(a, E, i, weft_max(a, weft_sub(a, j, weft_i64(a, A)), weft_i64(a, 0))))));
    weft_te_func *f = NULL;
    assert_int_equal(weft_te_func_create(a, "cat", 2, (const weft_tensor *const[]){X, E}, 1, (const weft_tensor *const[]){Y}, &f),
                     WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(s, "split Y j 8\nvectorize Y j.1\n"), WEFT_OK);
    buffers b;
    buffers_init(&b, f);
    for (int k = 0; k < M * A; k++) b.p[0][k] = (float)k * 0.25f - 3.0f;
    for (int k = 0; k < M * B; k++) b.p[1][k] = (float)k * 0.125f - 5.0f;
    assert_true(run(fx, s, fx->llvm, fx->tl, &b));
    for (int r = 0; r < M; r++)
        for (int c = 0; c < A + B; c++) {
            float want = c < A ? b.p[0][r * A + c] : sinf(b.p[1][r * B + c - A]);
            if (fabsf(b.p[2][r * (A + B) + c] - want) > 4e-7f)
                fail_msg("Y[%d, %d] = %g, want %g", r, c, (double)b.p[2][r * (A + B) + c], (double)want);
        }
    buffers_free(&b);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_matmul_odd_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_register_tile_fits_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batched_matmul_transposed_operand_is_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transposed_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transposed_merged_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocked_weight_product, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_output_tile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matrix_vector_with_epilogue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_output_nests_are_serial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_and_layer_norm_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_read_transposed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_reduction_in_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concat_of_costly_stage_inlined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sin_cos_match_libm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leading_axis_reduction_vectorized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_search_vectorized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concat_along_vector_axis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_costly_broadcast_computed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_erf_matches_libm, setup, teardown),
    };
    return cmocka_run_group_tests_name("numeric_dense_rows", tests, NULL, NULL);
}
