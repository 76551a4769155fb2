/* The HIP target without an AMD GPU: hiprtc compiles every op's default GPU schedule and >= 200
 * random launchable GPU schedules for gfx90a (CDNA, wavefronts of 64) and gfx1030 (RDNA,
 * wavefronts of 32), each code object checked to be an AMDGPU ELF for that architecture
 * (e_machine 224, e_flags' machine field); the same lowered functions run in the
 * interpreter's GPU mode (threads forward and reversed) and match the naive schedule; golden
 * HIP source (tests/golden/hip); an unknown architecture (gfx1234, and gfx940/gfx1100, which
 * abort ROCm 5.2's hiprtc) is a clear error with the process alive; hiprtc's log reaches the
 * error message; on a machine without a device, run and the buffer operations say "no HIP
 * device" (or "no HIP runtime"). Skipped, saying so, where the HIP target is not built.
 * WEFT_HIP_TEST_TIMES=1 prints the time of every hiprtc compile to stderr.
 *
 * Tolerance: max |x - ref| <= 1e-4 * max(1, max |ref|) (schedules reassociate float sums of at
 * most a few hundred terms of inputs in [-1, 1]). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/slurp.h"
#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "runtime/runtime.h"
#include "targets/gpu/emit_c.h"
#include "targets/interp/interp.h"
#include "tests/targets/gpu_io.h"
#include "tuner/tuner.h"
#ifdef WEFT_WITH_HIP
#include "targets/hip/hip.h"


/* The two architectures every kernel is compiled for, with their ELF e_flags machine value
 * (EF_AMDGPU_MACH_AMDGCN_GFX90A, _GFX1030 of the LLVM AMDGPU ELF spec: e_flags & 0xff) and wavefront. */
static const struct {
    const char *arch, *target;
    unsigned mach;
    int wave;
} archs[2] = {{"gfx90a", "hip:gfx90a", 0x3f, 64}, {"gfx1030", "hip:gfx1030", 0x36, 32}};

static int n_compiled;
static bool runtime_present; /* libamdhip64.so.5 loads: hiprtc can compile */

/* The caps of registered target `name` (created and destroyed here). */
static weft_target_caps target_caps(const char *name)
{
    const weft_target_ops *ops = weft_target_find(name);
    assert_non_null(ops);
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    ops->destroy(t);
    return caps;
}

/* hiprtc compiles lf's HIP source for archs[i]: a non-empty AMDGPU ELF for that machine. */
static bool hiprtc_ok(const weft_loop_func *lf, int i)
{
    weft_gpu_source src;
    if (weft_gpu_emit(lf, &weft_gpu_dialect_hip, &src) != WEFT_OK) {
        print_error("emit %s: %s\n", lf->name, weft_last_error());
        return false;
    }
    void *code = NULL;
    size_t size = 0;
    double t0 = weft_rt_now();
    weft_status rc = weft_hip_hiprtc(src.text, archs[i].arch, &code, &size);
    if (getenv("WEFT_HIP_TEST_TIMES")) fprintf(stderr, "%.3f s %s %s\n", weft_rt_now() - t0, lf->name, archs[i].arch);

    if (rc != WEFT_OK) print_error("hiprtc %s (%s): %s\nsource:\n%s\n", lf->name, archs[i].arch, weft_last_error(), src.text);
    const unsigned char *e = code;
    bool elf = rc == WEFT_OK && size > 52 && !memcmp(e, "\177ELF", 4) && e[4] == 2 && (e[18] | e[19] << 8) == 224 &&
               e[48] == archs[i].mach;
    if (rc == WEFT_OK && !elf) print_error("hiprtc %s (%s): %zu bytes, not an AMDGPU ELF for this machine\n", lf->name,
                                           archs[i].arch, size);
    free(src.text);
    free(code);
    n_compiled += elf;
    return elf;
}

/* Lowers op/shape with text (NULL: the default GPU schedule) for the caps of archs[ai], checks
 * it in the interpreter's GPU mode against the naive schedule, and compiles it with hiprtc for
 * archs[ai] (both archs when `both`; neither when libamdhip64.so.5 does not load). Returns
 * false when it does not lower (not launchable); fails the test on a wrong result or a failed
 * compile. */
static bool check_hip(const char *op, int n, const int64_t *shape, const char *text, int ai, bool both)
{
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
    weft_target_caps caps = target_caps(archs[ai].target);
    if (gpu_lower(a, f, text, &caps, &lf) != WEFT_OK) {
        if (!text) print_error("%s default (%s): %s\n", op, archs[ai].arch, weft_last_error());
        assert_non_null(text); /* default schedules must lower */
        weft_arena_destroy(a);
        return false;
    }
    char what[96];
    snprintf(what, sizeof what, "%s (%s)", op, archs[ai].arch);
    expect_gpu_matches_naive(f, lf, what, text);
    for (int i = 0; i < 2; i++)
        if (runtime_present && (i == ai || both)) assert_true(hiprtc_ok(lf, i));
    weft_arena_destroy(a);
    return true;
}

/* ---- the tests ------------------------------------------------------------------------------ */


static void test_architectures(void **state)
{
    (void)state;
    assert_int_equal(weft_hip_check_arch("gfx90a"), WEFT_OK);
    assert_int_equal(weft_hip_check_arch("gfx1030"), WEFT_OK);
    assert_int_equal(weft_hip_wavefront("gfx90a"), 64);
    assert_int_equal(weft_hip_wavefront("gfx1030"), 32);
    /* Unknown to ROCm 5.2 (gfx940, gfx1100 abort its hiprtc) or a typo: a clear error, and we
     * are still here to check it. */
    static const char *const bad[] = {"gfx1234", "gfx940", "gfx1100", "sm_90", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        void *code = (void *)1;
        size_t size = 7;
        assert_int_equal(weft_hip_hiprtc("extern \"C\" __global__ void k() {}", bad[i], &code, &size), WEFT_ERR_UNAVAILABLE);
        char want[64];
        snprintf(want, sizeof want, "unknown GPU architecture '%s'", bad[i]);
        assert_non_null(strstr(weft_last_error(), want));
        assert_non_null(strstr(weft_last_error(), "gfx90a gfx90c"));
        assert_null(code);
        assert_int_equal(size, 0);
    }
    assert_null(weft_target_find("hip:gfx1234"));
    assert_non_null(strstr(weft_last_error(), "unknown GPU architecture 'gfx1234'"));
    assert_null(weft_target_find("hip:"));
    /* Caps: wavefront, architecture, the device name in the features (the record key). */
    for (int i = 0; i < 2; i++) {
        weft_target_caps c = target_caps(archs[i].target);
        assert_string_equal(c.name, "hip");
        assert_string_equal(c.cpu, archs[i].arch);
        assert_int_equal(c.warp_size, archs[i].wave);
        assert_true(c.has_thread_binding);
        assert_int_equal(strncmp(c.features, "device=", 7), 0);
    }
    /* Tuning records: keyed by backend, architecture and (through the features' hash) device. */
    weft_target_caps c90 = target_caps("hip:gfx90a"), c1030 = target_caps("hip:gfx1030"), other = c90;
    snprintf(other.features, sizeof other.features, "device=AMD Instinct MI210");
    weft_tuner_target k90, k1030, kother;
    weft_tuner_target_init(&k90, &c90, 1);
    weft_tuner_target_init(&k1030, &c1030, 1);
    weft_tuner_target_init(&kother, &other, 1);
    assert_int_equal(strncmp(k90.key, "hip;cpu=gfx90a;", 15), 0);
    assert_int_equal(strncmp(k1030.key, "hip;cpu=gfx1030;", 16), 0);
    assert_string_not_equal(k90.key, kother.key);
    assert_non_null(weft_target_find("hip"));
    assert_false(weft_target_is_host(weft_target_find("hip:gfx90a")));
    assert_int_equal(weft_target_check(weft_target_find("hip:gfx90a")), WEFT_OK);
}

static void test_hiprtc_log_in_error(void **state)
{
    (void)state;
    void *code = NULL;
    size_t size = 0;
    weft_status rc = weft_hip_hiprtc("extern \"C\" __global__ void k() { undefined_thing(); }", "gfx90a", &code, &size);
    assert_int_not_equal(rc, WEFT_OK);
    if (!runtime_present) {
        assert_non_null(strstr(weft_last_error(), "no HIP runtime"));
        return;
    }
    assert_non_null(strstr(weft_last_error(), "undefined_thing"));
    assert_null(code);
}

/* The default GPU schedule of every op (weft_op_build's list) for both architectures. */
static void test_default_schedules(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n;
        int64_t shape[9];
    } cases[] = {
        {"matmul", 3, {33, 17, 20}},   {"dense_bias_relu", 3, {9, 40, 12}}, {"conv2d", 9, {2, 3, 9, 9, 4, 3, 3, 2, 1}},
        {"softmax", 2, {5, 300}},      {"layer_norm", 2, {6, 50}},          {"reduce_sum", 2, {7, 29}},
        {"conv2d", 9, {1, 4, 8, 8, 8, 1, 1, 1, 0}},
    };
    for (int ai = 0; ai < 2; ai++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            assert_true(check_hip(cases[i].op, cases[i].n, cases[i].shape, NULL, ai, false));
        for (int k = 0; k < WEFT_ELEMENTWISE_COUNT; k++) {
            int64_t shape[3] = {3, 5, 70 + k};
            assert_true(check_hip(weft_elementwise_names[k], 3, shape, NULL, ai, false));
        }
    }
}

/* >= 200 launchable random GPU schedules, drawn with each architecture's wavefront in turn,
 * each compiled for both. */
static void test_random_schedules(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int n;
        int64_t shape[9];
    } cases[] = {
        {"matmul", 3, {19, 24, 11}},       {"conv2d", 9, {1, 3, 7, 7, 4, 3, 3, 1, 1}}, {"softmax", 2, {6, 21}},
        {"dense_bias_relu", 3, {8, 20, 9}}, {"layer_norm", 2, {5, 18}},                  {"gelu", 2, {9, 100}},
    };
    int valid = 0, tried = 0, warp_sized = 0;
    for (uint64_t seed = 1; valid < 200 && tried < 3000; seed++) {
        size_t c = seed % (sizeof cases / sizeof cases[0]);
        int ai = (int)(seed / 7 % 2);
        weft_target_caps caps = target_caps(archs[ai].target);
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_schedule *s = NULL;
        assert_int_equal(weft_op_build(a, cases[c].op, cases[c].n, cases[c].shape, &f), WEFT_OK);
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_random_gpu_for(s, &caps, seed, 6), WEFT_OK);
        char *text = weft_schedule_text(s);
        tried++;
        if (strstr(text, "bind")) {
            bool ok = check_hip(cases[c].op, cases[c].n, cases[c].shape, text, ai, true);
            valid += ok;
            char split[32];
            snprintf(split, sizeof split, " %d\n", archs[ai].wave);
            warp_sized += ok && strstr(text, split) != NULL;
        }
        free(text);
        weft_schedule_destroy(s);
        weft_arena_destroy(a);
    }
    printf("random GPU schedules: %d launchable of %d drawn (%d with a wavefront-sized split), all match the naive "
           "schedule and compile for gfx90a and gfx1030\n", valid, tried, warp_sized);
    assert_true(valid >= 200);
    assert_true(warp_sized > 0);
}

/* tests/golden/hip/NAME.steps ("# OP SHAPE", then steps or "default") against NAME.hip, lowered
 * with the caps of hip:gfx90a (what `weft show --target hip:gfx90a --print hip` prints). */
static void test_golden_hip_source(void **state)
{
    (void)state;
    static const char *const names[] = {"matmul_shared", "softmax_default", "conv2d_default", "gelu_default"};
    weft_target_caps caps = target_caps("hip:gfx90a");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/golden/hip/%s.steps", names[i]);
        char *steps = slurp(path);
        snprintf(path, sizeof path, "tests/golden/hip/%s.hip", names[i]);
        char *expected = slurp(path);
        if (!steps || !expected) print_error("missing %s (run from the repository root)\n", path);
        assert_non_null(steps);
        assert_non_null(expected);
        char op[64], shape_s[128];
        assert_int_equal(sscanf(steps, "# %63s %127s", op, shape_s), 2);
        int64_t shape[16];
        int n = 0;
        for (char *p = strtok(shape_s, ","); p && n < 16; p = strtok(NULL, ",")) shape[n++] = atoll(p);
        const char *body = strchr(steps, '\n') + 1;
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_loop_func *lf = NULL;
        assert_int_equal(weft_op_build(a, op, n, shape, &f), WEFT_OK);
        assert_int_equal(gpu_lower(a, f, strcmp(body, "default\n") ? body : NULL, &caps, &lf), WEFT_OK);
        weft_gpu_source src;
        assert_int_equal(weft_gpu_emit(lf, &weft_gpu_dialect_hip, &src), WEFT_OK);
        size_t len = strlen(expected);
        while (len && expected[len - 1] == '\n') expected[--len] = '\0';
        len = strlen(src.text);
        while (len && src.text[len - 1] == '\n') src.text[--len] = '\0';
        if (strcmp(src.text, expected)) print_error("%s: HIP source differs\n--- got\n%s\n", names[i], src.text);
        assert_string_equal(src.text, expected);
        if (runtime_present) assert_true(hiprtc_ok(lf, 0) && hiprtc_ok(lf, 1));
        free(src.text);
        free(steps);
        free(expected);
        weft_arena_destroy(a);
    }
}

/* Without a device (this machine, CI): compile works, running and buffers say why not. */
static void test_without_device(void **state)
{
    (void)state;
    char why[320];
    if (weft_hip_device_available(why, sizeof why)) {
        printf("skipped: a HIP device is present (%s); this test checks the messages without one\n", why);
        return;
    }
    assert_true(strstr(why, "no HIP device") || strstr(why, "no HIP runtime"));
    assert_null(strchr(why, '\n'));
    const weft_target_ops *ops = weft_target_find("hip:gfx90a");
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_string_equal(caps.features, "device=none");
    void *dev = (void *)1;
    assert_int_equal(ops->alloc(t, 1024, &dev), WEFT_ERR_UNAVAILABLE);
    assert_null(dev);
    assert_non_null(strstr(weft_last_error(), why));
    assert_int_equal(ops->synchronize(t, NULL), WEFT_ERR_UNAVAILABLE);
    ops->free_buf(t, NULL);
    if (runtime_present) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_loop_func *lf = NULL;
        int64_t shape[1] = {100};
        assert_int_equal(weft_op_build(a, "relu", 1, shape, &f), WEFT_OK);
        assert_int_equal(gpu_lower(a, f, NULL, &caps, &lf), WEFT_OK);
        weft_kernel *k = NULL;
        assert_int_equal(ops->compile(t, lf, &k), WEFT_OK);
        void *args[2] = {NULL, NULL};
        assert_int_equal(ops->run(k, args, NULL), WEFT_ERR_UNAVAILABLE);
        assert_non_null(strstr(weft_last_error(), "no HIP device"));
        char *txt = NULL;
        assert_int_equal(ops->dump(t, lf, WEFT_DUMP_ASM, &txt), WEFT_OK);
        assert_non_null(strstr(txt, "code object for gfx90a"));
        assert_non_null(strstr(txt, "ELF64 amdgcn-amd-amdhsa, kernels: relu_k0"));
        free(txt);
        ops->kernel_destroy(k);
        weft_arena_destroy(a);
    }
    ops->destroy(t);
}

static void test_count(void **state)
{
    (void)state;
    printf("hiprtc compiled %d code objects in this run\n", n_compiled);
    if (runtime_present) assert_true(n_compiled >= 400);
}

int main(void)
{
    char why[320];
    void *code = NULL;
    size_t size = 0;
    runtime_present = weft_hip_hiprtc("extern \"C\" __global__ void k() {}", "gfx90a", &code, &size) == WEFT_OK;
    free(code);
    if (!runtime_present) {
        snprintf(why, sizeof why, "%s", weft_last_error());
        printf("libamdhip64.so.5 does not load (%s): only the checks that need no hiprtc run\n", why);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_architectures),     cmocka_unit_test(test_hiprtc_log_in_error),
        cmocka_unit_test(test_golden_hip_source), cmocka_unit_test(test_default_schedules),
        cmocka_unit_test(test_without_device),    cmocka_unit_test(test_random_schedules),
        cmocka_unit_test(test_count),
    };
    return cmocka_run_group_tests_name("hip", tests, NULL, NULL);
}
#else
int main(void)
{
    printf("skipped: the HIP target is not built (configured with WEFT_HIP=OFF, or hip/hiprtc.h not found); "
           "nothing was compiled\n");
    return 0;
}
#endif
