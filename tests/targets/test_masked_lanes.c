/* Masked loads of a lane count that is not a power of two (targets/llvm/vector.c,
 * masked_intrinsic): a 3x3 conv over 9 x 9 planes, padding inlined, each output row a vector
 * of 9 lanes, rows and the column taps unrolled under a serial loop over the kernel rows. The
 * border rows' reads are masked loads whose mask depends on that loop; LLVM 19's x86 backend,
 * widening <9 x float> masked loads itself on AVX2, read the ninth lane where its mask was
 * false (the next row's values at the image's bottom edge). They are now made at 16 lanes with
 * the added lanes masked off. Checked: the LLVM IR has no 9-lane masked load, and the values
 * equal the interpreter's exactly (integer-valued data: every sum is exact in float). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/build.h"
#include "lower/lower.h"
#include "ops/ops.h"

enum { N = 2, C = 4, H = 9, F = 8 };

static void test_nine_lane_masked_loads(void **state)
{
    (void)state;
    const weft_target_ops *L = weft_target_find("llvm"), *I = weft_target_find("interp");
    if (!L) skip();
    weft_target *tl = NULL, *ti = NULL;
    assert_int_equal(L->create(&tl), WEFT_OK);
    assert_int_equal(I->create(&ti), WEFT_OK);
    weft_target_caps caps;
    L->caps(tl, &caps);
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    const int64_t shape[9] = {N, C, H, H, F, 3, 3, 1, 1};
    assert_int_equal(weft_op_build(a, "conv2d", 9, shape, &f), WEFT_OK);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(s, "compute_inline pad\ncache_write Y local\ncompute_at Y.local Y f\n"
                                                 "reorder Y.local rc ry y rx x\nvectorize Y.local x\n"
                                                 "unroll Y.local rx\nunroll Y.local y\n"),
                     WEFT_OK);
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, &caps, a, &lf), WEFT_OK);
    char *ir = NULL;
    assert_int_equal(L->dump(tl, lf, WEFT_DUMP_IR, &ir), WEFT_OK);
    if (!strstr(ir, "llvm.masked.load.v16f32") || strstr(ir, "masked.load.v9f32"))
        fail_msg("want the 9-lane masked loads made at 16 lanes:\n%s", ir);
    free(ir);
    static float X[N * C * H * H], W[F * C * 9], Y1[N * F * H * H], Y2[N * F * H * H];
    for (int i = 0; i < N * C * H * H; i++) X[i] = (float)(i % 13) - 6.0f;
    for (int i = 0; i < F * C * 9; i++) W[i] = (float)(i % 7) - 3.0f;
    weft_kernel *kl = NULL, *ki = NULL;
    assert_int_equal(L->compile(tl, lf, &kl), WEFT_OK);
    assert_int_equal(weft_target_build(I, ti, s, a, NULL, &ki), WEFT_OK);
    assert_int_equal(L->run(kl, (void *[]){X, W, Y1}, NULL), WEFT_OK);
    assert_int_equal(I->run(ki, (void *[]){X, W, Y2}, NULL), WEFT_OK);
    for (int i = 0; i < N * F * H * H; i++)
        if (Y1[i] != Y2[i]) fail_msg("Y[%d] = %g, the interpreter's %g", i, (double)Y1[i], (double)Y2[i]);
    L->kernel_destroy(kl);
    I->kernel_destroy(ki);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    L->destroy(tl);
    I->destroy(ti);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nine_lane_masked_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
