/* Features of lowered kernels and the XGBoost cost model (tuner/cost_model.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/caps.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "schedule/schedule.h"
#include "tuner/cost_model.h"

/* Feature slots the tests look at (see the layout table in tuner/features.c). */
enum { F_FLOPS = 11, F_S1 = 18, F_VEC_LANES = 34, F_PAR_EXTENT = 40, F_PAR_OUTER = 41, F_DEPTH = 44, F_REG_LANES = 61 };

/* Lowers matmul 64x64x64 with the naive schedule (default = false) or the default one, and
 * extracts its features. */
static void matmul_features(bool default_schedule, float *out)
{
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    weft_te_func *f = weft_op_matmul(a, 64, 64, 64);
    assert_non_null(f);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    if (default_schedule) {
        weft_target_caps caps = weft_caps_cpu(512, 2);
        assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    }
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, NULL, a, &lf), WEFT_OK);
    weft_features_extract(lf, out);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
}

static void test_features_naive_vs_default(void **state)
{
    (void)state;
    float naive[WEFT_FEATURE_DIM], def[WEFT_FEATURE_DIM];
    matmul_features(false, naive);
    matmul_features(true, def);
    if (getenv("WEFT_FEATURES_DUMP"))
        for (int i = 0; i < WEFT_FEATURE_DIM; i++) print_message("%2d %10.4f %10.4f\n", i, naive[i], def[i]);
    for (int i = 0; i < WEFT_FEATURE_DIM; i++) {
        assert_true(isfinite(naive[i]));
        assert_true(isfinite(def[i]));
    }
    assert_true(naive[F_VEC_LANES] == 0.0f);
    assert_true(def[F_VEC_LANES] > 0.0f);
    assert_true(naive[F_PAR_EXTENT] == 0.0f);
    assert_true(def[F_PAR_EXTENT] > 0.0f);
    assert_true(def[F_PAR_OUTER] == 1.0f);
    /* same computation: 64^3 multiply-adds (2 flops each) plus 64^2 zero stores */
    assert_true(fabsf(naive[F_FLOPS] - def[F_FLOPS]) < 0.05f);
    assert_true(fabsf(naive[F_FLOPS] - (float)log2(1.0 + 2.0 * 64 * 64 * 64)) < 0.01f);
    assert_true(naive[F_DEPTH] == 3.0f);
    /* the naive nest's innermost loop is k: B[k*64 + j] is strided, A[i*64 + k] is unit */
    assert_true(naive[F_S1] > 0.0f && naive[F_S1] < 1.0f);
    /* register pressure: the naive nest accumulates into C itself (no register tile); the
     * default's tile keeps several vectors of accumulators (more lanes than one vector) */
    assert_true(naive[F_REG_LANES] == 0.0f);
    assert_true(def[F_VEC_LANES] >= 4.0f && def[F_REG_LANES] > (float)log2(1.0 + 2.0 * def[F_VEC_LANES]));
    /* unused slots stay 0 */
    for (int i = 62; i < WEFT_FEATURE_DIM; i++) {
        assert_true(naive[i] == 0.0f);
        assert_true(def[i] == 0.0f);
    }
    int differ = 0;
    for (int i = 0; i < WEFT_FEATURE_DIM; i++) differ += naive[i] != def[i];
    assert_true(differ >= 3);
}

static void test_features_deterministic(void **state)
{
    (void)state;
    float a[WEFT_FEATURE_DIM], b[WEFT_FEATURE_DIM];
    matmul_features(true, a);
    matmul_features(true, b);
    assert_memory_equal(a, b, sizeof a);
    matmul_features(false, a);
    matmul_features(false, b);
    assert_memory_equal(a, b, sizeof a);
}

/* Features of several ops under default and random schedules: finite, deterministic, the
 * unused slots 0; schedules of one op give more than one distinct vector. */
static void test_features_many_kernels(void **state)
{
    (void)state;
    static const struct { const char *op; int n; int64_t shape[9]; } ops[] = {
        {"matmul", 3, {48, 40, 24}},
        {"dense_bias_relu", 3, {16, 32, 20}},
        {"conv2d", 9, {1, 3, 10, 10, 4, 3, 3, 1, 1}},
        {"softmax", 2, {8, 33}},
        {"layer_norm", 2, {6, 16}},
        {"reduce_sum", 2, {12, 20}},
        {"relu", 2, {7, 9}},
    };
    weft_target_caps caps = weft_caps_cpu(256, 2);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        int distinct = 0;
        float prev[WEFT_FEATURE_DIM] = {0};
        for (int k = 0; k < 8; k++) {
            float v[2][WEFT_FEATURE_DIM];
            for (int rep = 0; rep < 2; rep++) {
                weft_arena *a = weft_arena_create();
                weft_te_func *f = NULL;
                assert_int_equal(weft_op_build(a, ops[o].op, ops[o].n, ops[o].shape, &f), WEFT_OK);
                weft_schedule *s = NULL;
                assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
                if (k == 1) assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
                else if (k > 1) assert_int_equal(weft_schedule_random(s, 77 + (uint64_t)k, 10), WEFT_OK);
                weft_loop_func *lf = NULL;
                assert_int_equal(weft_lower(s, NULL, a, &lf), WEFT_OK);
                weft_features_extract(lf, v[rep]);
                weft_schedule_destroy(s);
                weft_arena_destroy(a);
            }
            assert_memory_equal(v[0], v[1], sizeof v[0]);
            for (int i = 0; i < WEFT_FEATURE_DIM; i++) {
                assert_true(isfinite(v[0][i]));
                assert_true(v[0][i] >= 0.0f);
            }
            for (int i = 62; i < WEFT_FEATURE_DIM; i++) assert_true(v[0][i] == 0.0f);
            assert_true(v[0][F_FLOPS] > 0.0f || !strcmp(ops[o].op, "relu"));
            if (k == 0 || memcmp(prev, v[0], sizeof prev)) distinct++;
            memcpy(prev, v[0], sizeof prev);
        }
        assert_true(distinct >= 2);
    }
}

static void test_features_null(void **state)
{
    (void)state;
    float v[WEFT_FEATURE_DIM];
    memset(v, 0xff, sizeof v);
    weft_features_extract(NULL, v);
    for (int i = 0; i < WEFT_FEATURE_DIM; i++) assert_true(v[i] == 0.0f);
}

/* ---- synthetic data for the model ---------------------------------------------------------- */

static uint64_t rng_state;
static double rnd(void) /* uniform [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* y = a known nonlinear function of columns 0, 3, 7, 20 plus noise; the other columns are noise. */
static void synth(uint64_t seed, int n, float *x, float *y)
{
    rng_state = seed;
    for (int r = 0; r < n; r++) {
        float *row = x + (size_t)r * WEFT_FEATURE_DIM;
        for (int c = 0; c < WEFT_FEATURE_DIM; c++) row[c] = (float)(4.0 * rnd());
        double v = sin(row[0]) * row[3] + (row[7] > 2.0f ? row[20] * row[20] * 0.5 : -row[20]) +
                   0.05 * (rnd() - 0.5);
        y[r] = (float)v;
    }
}

static void ranks(const float *v, int n, double *rank)
{
    for (int i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (int j = 0; j < n; j++) {
            if (v[j] < v[i]) less++;
            else if (v[j] == v[i]) eq++;
        }
        rank[i] = less + (eq + 1) / 2.0;
    }
}

static double spearman(const float *a, const float *b, int n)
{
    double *ra = malloc(sizeof(double) * (size_t)n), *rb = malloc(sizeof(double) * (size_t)n);
    ranks(a, n, ra);
    ranks(b, n, rb);
    double ma = 0, mb = 0;
    for (int i = 0; i < n; i++) { ma += ra[i]; mb += rb[i]; }
    ma /= n;
    mb /= n;
    double sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    free(rb);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

#define N_TRAIN 300
#define N_TEST 100

static float train_x[N_TRAIN * WEFT_FEATURE_DIM], train_y[N_TRAIN];
static float test_x[N_TEST * WEFT_FEATURE_DIM], test_y[N_TEST];

static int setup_data(void **state)
{
    (void)state;
    synth(1, N_TRAIN, train_x, train_y);
    synth(2, N_TEST, test_x, test_y);
    return 0;
}

static weft_cost_model *trained_model(void)
{
    weft_cost_model *m = NULL;
    assert_int_equal(weft_cost_model_create(&m), WEFT_OK);
    assert_false(weft_cost_model_trained(m));
    weft_status st = weft_cost_model_train(m, train_x, train_y, N_TRAIN);
    if (st != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(st, WEFT_OK);
    assert_true(weft_cost_model_trained(m));
    return m;
}

static void test_model_learns(void **state)
{
    (void)state;
    weft_cost_model *m = trained_model();
    float pred[N_TEST];
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, pred), WEFT_OK);
    double rho = spearman(pred, test_y, N_TEST);
    print_message("held-out Spearman %.4f\n", rho);
    assert_true(rho > 0.9);
    weft_cost_model_destroy(m);
}

static void test_untrained_predicts_zero(void **state)
{
    (void)state;
    weft_cost_model *m = NULL;
    assert_int_equal(weft_cost_model_create(&m), WEFT_OK);
    float pred[N_TEST];
    for (int i = 0; i < N_TEST; i++) pred[i] = 123.0f;
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, pred), WEFT_OK);
    for (int i = 0; i < N_TEST; i++) assert_true(pred[i] == 0.0f);
    /* too few rows: stays untrained, not an error */
    assert_int_equal(weft_cost_model_train(m, train_x, train_y, 3), WEFT_OK);
    assert_false(weft_cost_model_trained(m));
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, pred), WEFT_OK);
    for (int i = 0; i < N_TEST; i++) assert_true(pred[i] == 0.0f);
    /* nothing to save yet */
    void *buf = NULL;
    size_t len = 0;
    assert_int_not_equal(weft_cost_model_save(m, &buf, &len), WEFT_OK);
    assert_null(buf);
    weft_cost_model_destroy(m);
    weft_cost_model_destroy(NULL);
}

static void test_few_rows_keep_old_model(void **state)
{
    (void)state;
    weft_cost_model *m = trained_model();
    float before[N_TEST], after[N_TEST];
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, before), WEFT_OK);
    assert_int_equal(weft_cost_model_train(m, train_x + 5 * WEFT_FEATURE_DIM, train_y + 5, 2), WEFT_OK);
    assert_true(weft_cost_model_trained(m));
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, after), WEFT_OK);
    assert_memory_equal(before, after, sizeof before);
    weft_cost_model_destroy(m);
}

static void test_save_load_roundtrip(void **state)
{
    (void)state;
    weft_cost_model *m = trained_model();
    void *buf = NULL;
    size_t len = 0;
    assert_int_equal(weft_cost_model_save(m, &buf, &len), WEFT_OK);
    assert_non_null(buf);
    assert_true(len > 0);
    weft_cost_model *m2 = NULL;
    assert_int_equal(weft_cost_model_create(&m2), WEFT_OK);
    weft_status st = weft_cost_model_load(m2, buf, len);
    if (st != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(st, WEFT_OK);
    assert_true(weft_cost_model_trained(m2));
    float p1[N_TEST], p2[N_TEST];
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, p1), WEFT_OK);
    assert_int_equal(weft_cost_model_predict(m2, test_x, N_TEST, p2), WEFT_OK);
    assert_memory_equal(p1, p2, sizeof p1);
    /* saving the loaded model gives the same bytes */
    void *buf2 = NULL;
    size_t len2 = 0;
    assert_int_equal(weft_cost_model_save(m2, &buf2, &len2), WEFT_OK);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    /* without weft's 16-byte checksum trailer it is a plain XGBoost UBJSON model: loads too */
    weft_cost_model *m3 = NULL;
    assert_int_equal(weft_cost_model_create(&m3), WEFT_OK);
    assert_int_equal(weft_cost_model_load(m3, buf, len - 16), WEFT_OK);
    assert_int_equal(weft_cost_model_predict(m3, test_x, N_TEST, p2), WEFT_OK);
    assert_memory_equal(p1, p2, sizeof p1);
    weft_cost_model_destroy(m3);
    free(buf);
    free(buf2);
    weft_cost_model_destroy(m);
    weft_cost_model_destroy(m2);
}

static void test_training_deterministic(void **state)
{
    (void)state;
    weft_cost_model *m = trained_model();
    float p1[N_TEST], p2[N_TEST];
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, p1), WEFT_OK);
    /* retrain the same model, and train a second one */
    assert_int_equal(weft_cost_model_train(m, train_x, train_y, N_TRAIN), WEFT_OK);
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, p2), WEFT_OK);
    assert_memory_equal(p1, p2, sizeof p1);
    weft_cost_model *m2 = trained_model();
    assert_int_equal(weft_cost_model_predict(m2, test_x, N_TEST, p2), WEFT_OK);
    assert_memory_equal(p1, p2, sizeof p1);
    weft_cost_model_destroy(m);
    weft_cost_model_destroy(m2);
}

static void test_load_garbage_fails(void **state)
{
    (void)state;
    weft_cost_model *m = trained_model();
    float before[N_TEST], after[N_TEST];
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, before), WEFT_OK);
    static const char *garbage[] = {"not a model at all", "{\"learner\": 1}", "{", "[1,2,3]", "\x7b\x4c\x00\x00"};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        size_t len = strlen(garbage[i]) + 1;
        weft_status st = weft_cost_model_load(m, garbage[i], len);
        assert_int_not_equal(st, WEFT_OK);
        assert_true(strlen(weft_last_error()) > 0);
    }
    unsigned char noise[4096];
    rng_state = 99;
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (unsigned char)(rnd() * 256);
    assert_int_not_equal(weft_cost_model_load(m, noise, sizeof noise), WEFT_OK);
    /* a truncated real model */
    void *buf = NULL;
    size_t len = 0;
    assert_int_equal(weft_cost_model_save(m, &buf, &len), WEFT_OK);
    assert_int_not_equal(weft_cost_model_load(m, buf, len / 2), WEFT_OK);
    free(buf);
    assert_int_not_equal(weft_cost_model_load(m, NULL, 10), WEFT_OK);
    /* the old model survives */
    assert_true(weft_cost_model_trained(m));
    assert_int_equal(weft_cost_model_predict(m, test_x, N_TEST, after), WEFT_OK);
    assert_memory_equal(before, after, sizeof before);
    /* a fresh model stays untrained */
    weft_cost_model *m2 = NULL;
    assert_int_equal(weft_cost_model_create(&m2), WEFT_OK);
    assert_int_not_equal(weft_cost_model_load(m2, garbage[0], strlen(garbage[0])), WEFT_OK);
    assert_false(weft_cost_model_trained(m2));
    weft_cost_model_destroy(m);
    weft_cost_model_destroy(m2);
}

/* Bytes of a saved model flipped in turn (over a stride), and the model truncated there: load
 * rejects every one (the checksum trailer). */
static void test_load_corrupted_model(void **state)
{
    (void)state;
    weft_cost_model *m = NULL;
    assert_int_equal(weft_cost_model_create(&m), WEFT_OK);
    assert_int_equal(weft_cost_model_train(m, train_x, train_y, 40), WEFT_OK);
    void *buf = NULL;
    size_t len = 0;
    assert_int_equal(weft_cost_model_save(m, &buf, &len), WEFT_OK);
    unsigned char *copy = malloc(len);
    static const unsigned char flips[] = {0x01, 0x80, 0xff};
    size_t step = len / 1500 + 1;
    int loaded = 0, rejected = 0;
    for (size_t i = 0; i < len; i += step) {
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(copy, buf, len);
            copy[i] ^= flips[f];
            weft_cost_model *m2 = NULL;
            assert_int_equal(weft_cost_model_create(&m2), WEFT_OK);
            if (weft_cost_model_load(m2, copy, len) == WEFT_OK) loaded++;
            else rejected++;
            assert_false(weft_cost_model_trained(m2));
            weft_cost_model_destroy(m2);
        }
        /* and truncated there */
        weft_cost_model *m3 = NULL;
        assert_int_equal(weft_cost_model_create(&m3), WEFT_OK);
        assert_int_not_equal(weft_cost_model_load(m3, buf, i), WEFT_OK);
        weft_cost_model_destroy(m3);
    }
    assert_int_equal(loaded, 0);
    assert_true(rejected > 0);
    free(copy);
    free(buf);
    weft_cost_model_destroy(m);
}

static void test_bad_args(void **state)
{
    (void)state;
    weft_cost_model *m = NULL;
    assert_int_equal(weft_cost_model_create(&m), WEFT_OK);
    assert_int_not_equal(weft_cost_model_train(m, NULL, train_y, 10), WEFT_OK);
    assert_int_not_equal(weft_cost_model_train(m, train_x, train_y, -1), WEFT_OK);
    float y[8];
    memcpy(y, train_y, sizeof y);
    y[3] = NAN;
    assert_int_not_equal(weft_cost_model_train(m, train_x, y, 8), WEFT_OK);
    assert_false(weft_cost_model_trained(m));
    assert_int_equal(weft_cost_model_predict(m, train_x, 0, NULL), WEFT_OK);
    weft_cost_model_destroy(m);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Timing report (train 2000 rows, predict 500); asserts only a generous bound. */
static void test_timing(void **state)
{
    (void)state;
    enum { NT = 2000, NP = 500 };
    float *x = malloc(sizeof(float) * NT * WEFT_FEATURE_DIM), *y = malloc(sizeof(float) * NT);
    float *px = malloc(sizeof(float) * NP * WEFT_FEATURE_DIM), *py = malloc(sizeof(float) * NP);
    float *pred = malloc(sizeof(float) * NP);
    synth(7, NT, x, y);
    synth(8, NP, px, py);
    weft_cost_model *m = NULL;
    assert_int_equal(weft_cost_model_create(&m), WEFT_OK);
    double t0 = now_s();
    assert_int_equal(weft_cost_model_train(m, x, y, NT), WEFT_OK);
    double t1 = now_s();
    assert_int_equal(weft_cost_model_predict(m, px, NP, pred), WEFT_OK);
    double t2 = now_s();
    float one;
    assert_int_equal(weft_cost_model_predict(m, px, 1, &one), WEFT_OK);
    double t3 = now_s();
    print_message("train %d rows: %.3f s; predict %d rows: %.2f ms; predict 1 row: %.3f ms; Spearman %.4f\n", NT,
                  t1 - t0, NP, (t2 - t1) * 1e3, (t3 - t2) * 1e3, spearman(pred, py, NP));
    assert_true(t1 - t0 < 30.0);
    weft_cost_model_destroy(m);
    free(x);
    free(y);
    free(px);
    free(py);
    free(pred);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features_naive_vs_default),
        cmocka_unit_test(test_features_deterministic),
        cmocka_unit_test(test_features_many_kernels),
        cmocka_unit_test(test_features_null),
        cmocka_unit_test(test_model_learns),
        cmocka_unit_test(test_untrained_predicts_zero),
        cmocka_unit_test(test_few_rows_keep_old_model),
        cmocka_unit_test(test_save_load_roundtrip),
        cmocka_unit_test(test_training_deterministic),
        cmocka_unit_test(test_load_garbage_fails),
        cmocka_unit_test(test_load_corrupted_model),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, setup_data, NULL);
}
