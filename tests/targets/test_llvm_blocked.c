/* The LLVM target's vector accesses into blocked layouts (targets/llvm/vector.c): with j.1
 * VECTORIZED over L = 16 lanes and x = j.0*S + j.1 + OFF,
 *   Y[j.0*32 + j.1] = A[200 + floordiv(x, C)*(C + 8) + floormod(x, C)]   (a load)
 *   Z[200 + floordiv(x, C)*(C + 8) + floormod(x, C)] = Y[...] + 1        (a store)
 * is one contiguous vector access when every lane lies in one block of C (x's lane-0 value a
 * known multiple of g with gcd(g, C) >= L: S = 32, OFF = 64, C = 32 or 64; S = 48, C = 16), and a gather /
 * scatter otherwise (C = 24: 16 does not divide it; C = 8: fewer than L; S = 8: lane 0 only a
 * multiple of 8; a loop starting at 8). Every case is checked element by element against the
 * same formula in C (floor division), and the IR for which kind of access it got. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ir/tensor.h"
#include "runtime/runtime.h"
#include "targets/target.h"

static const weft_target_ops *L = &weft_target_llvm_ops;

enum { OUTER = 6, LANES = 16, N = 1024, BASE = 200 }; /* BASE keeps a negative x's index in range */

static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

typedef struct blk_case {
    int64_t stride, off, c, min; /* x = j.0*stride + j.1 + off, j.1 from min to min + 16 */
    bool contiguous;
} blk_case;

static void check_case(weft_target *t, const blk_case *bc)
{
    weft_arena *a = weft_arena_create();
    assert_non_null(a);
    int64_t n = N;
    const weft_buffer *A = weft_buffer_new(a, "A", WEFT_F32, 1, &n, WEFT_SCOPE_GLOBAL, 0);
    const weft_buffer *Y = weft_buffer_new(a, "Y", WEFT_F32, 1, &n, WEFT_SCOPE_GLOBAL, 1);
    const weft_buffer *Z = weft_buffer_new(a, "Z", WEFT_F32, 1, &n, WEFT_SCOPE_GLOBAL, 2);
    const weft_expr *j0 = weft_var(a, "j.0", WEFT_I64), *j1 = weft_var(a, "j.1", WEFT_I64);
    const weft_expr *x = weft_add(a, weft_add(a, weft_mul(a, j0, weft_i64(a, bc->stride)), j1), weft_i64(a, bc->off));
    const weft_expr *c = weft_i64(a, bc->c);
    const weft_expr *at = weft_add(a, weft_add(a, weft_mul(a, weft_floordiv(a, x, c), weft_i64(a, bc->c + 8)), weft_floormod(a, x, c)),
                                   weft_i64(a, BASE));
    const weft_expr *yi = weft_add(a, weft_mul(a, j0, weft_i64(a, 2 * LANES)), j1);
    const weft_stmt *st[2] = {weft_store(a, Y, yi, weft_load(a, A, at)),
                              weft_store(a, Z, at, weft_add(a, weft_load(a, Y, yi), weft_f32(a, 1)))};
    const weft_stmt *inner = weft_for(a, j1, weft_i64(a, bc->min), weft_i64(a, LANES), WEFT_FOR_VECTORIZED, weft_seq(a, 2, st));
    weft_loop_func lf = {.name = "blocked", .n_params = 3, .params = (const weft_buffer *[]){A, Y, Z},
                         .body = weft_for(a, j0, weft_i64(a, 0), weft_i64(a, OUTER), WEFT_FOR_SERIAL, inner)};
    char *ir = NULL;
    assert_int_equal(L->dump(t, &lf, WEFT_DUMP_IR, &ir), WEFT_OK);
    bool gathers = strstr(ir, "llvm.masked.gather") != NULL, scatters = strstr(ir, "llvm.masked.scatter") != NULL;
    if (gathers == bc->contiguous || scatters == bc->contiguous)
        fail_msg("stride %lld off %lld block %lld min %lld: gather %d scatter %d, want contiguous %d", (long long)bc->stride,
                 (long long)bc->off, (long long)bc->c, (long long)bc->min, gathers, scatters, bc->contiguous);
    free(ir);
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(t, &lf, &k), WEFT_OK);
    float *av = calloc(N, sizeof(float)), *yv = calloc(N, sizeof(float)), *zv = calloc(N, sizeof(float));
    float *yw = calloc(N, sizeof(float)), *zw = calloc(N, sizeof(float));
    for (int i = 0; i < N; i++) av[i] = (float)i * 0.5f - 100.0f;
    for (int64_t o = 0; o < OUTER; o++)
        for (int64_t l = bc->min; l < bc->min + LANES; l++) {
            int64_t xv = o * bc->stride + l + bc->off, q = floordiv(xv, bc->c), idx = BASE + q * (bc->c + 8) + (xv - q * bc->c);
            assert_true(idx >= 0 && idx < N && o * 2 * LANES + l < N);
            yw[o * 2 * LANES + l] = av[idx];
            zw[idx] = av[idx] + 1;
        }
    void *args[3] = {av, yv, zv};
    weft_exec ex = {0};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
    for (int i = 0; i < N; i++) {
        if (yv[i] != yw[i] || zv[i] != zw[i])
            fail_msg("stride %lld block %lld min %lld: element %d: Y %g want %g, Z %g want %g", (long long)bc->stride,
                     (long long)bc->c, (long long)bc->min, i, (double)yv[i], (double)yw[i], (double)zv[i], (double)zw[i]);
    }
    L->kernel_destroy(k);
    free(av), free(yv), free(zv), free(yw), free(zw);
    weft_arena_destroy(a);
}

static void test_blocked_accesses(void **state)
{
    (void)state;
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    static const blk_case cases[] = {
        {32, 64, 32, 0, true},   /* lanes 0..15 or 16..31 of a block of 32 */
        {32, 64, 64, 0, true},   /* 16 divides 64 */
        {48, 0, 16, 0, true},    /* exactly one block per vector */
        {32, 64, 24, 0, false},  /* 16 does not divide 24: a vector may straddle two blocks */
        {32, 64, 8, 0, false},   /* blocks narrower than the vector */
        {8, 64, 32, 0, false},   /* lane 0 only known to be a multiple of 8 */
        {32, 64, 32, 8, false},  /* the loop starts at 8 */
        {32, 64, 32, 16, true},  /* ... at 16 */
        {32, -64, 32, 0, true},  /* negative x: floor division */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(t, &cases[i]);
    L->destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_blocked_accesses)};
    return cmocka_run_group_tests_name("targets_llvm_blocked", tests, NULL, NULL);
}
