/* Target keys of CUDA devices (tuner/target_key.c, weft tune --target cuda): the key holds the
 * device name (with ';' and '=' replaced), compute capability and driver version; the nearest
 * device order (same device under another driver, same compute capability, same major, any
 * other); CPU keys and GPU keys never serve each other; the database lists other devices' best
 * records nearest first. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/measure_gpu.h"
#include "tuner/tuner.h"

static weft_tuner_target h100(int driver)
{
    weft_gpu_device d = {.target = "cuda:sm_90", .name = "NVIDIA H100 80GB HBM3", .cc_major = 9, .cc_minor = 0,
                         .driver_version = driver, .l2_bytes = 50 << 20, .sms = 132};
    weft_tuner_target t;
    weft_tuner_target_init_gpu(&t, &d);
    return t;
}

static void test_key_names_device_cc_and_driver(void **state)
{
    (void)state;
    weft_tuner_target t = h100(13000);
    assert_string_equal(t.key, "cuda;dev=NVIDIA H100 80GB HBM3;cc=9.0;drv=13000");
    assert_string_equal(t.name, "cuda");
    assert_string_equal(t.features, "sm_90");
    assert_string_equal(t.model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(t.cores, 132);
    char d[160];
    weft_tuner_key_describe(t.key, d, sizeof d);
    assert_string_equal(d, "dev=NVIDIA H100 80GB HBM3 cc=9.0 drv=13000");
    /* separators in a name cannot split the key; a long name is cut, the key still ends in drv */
    weft_gpu_device odd = {.name = "GPU;cc=1.0", .cc_major = 8, .cc_minor = 6, .driver_version = 12040};
    weft_tuner_target_init_gpu(&t, &odd);
    assert_string_equal(t.key, "cuda;dev=GPU_cc_1.0;cc=8.6;drv=12040");
    memset(odd.name, 'x', sizeof odd.name - 1);
    odd.name[sizeof odd.name - 1] = '\0';
    weft_tuner_target_init_gpu(&t, &odd);
    assert_non_null(strstr(t.key, ";cc=8.6;drv=12040"));
    assert_true(strlen(t.key) < sizeof t.key - 1);
}

static void test_nearest_device_order(void **state)
{
    (void)state;
    weft_tuner_target t = h100(13000);
    double self = weft_tuner_target_distance(&t, t.key, "sm_90");
    double drv = weft_tuner_target_distance(&t, "cuda;dev=NVIDIA H100 80GB HBM3;cc=9.0;drv=12080", "sm_90");
    double same_cc = weft_tuner_target_distance(&t, "cuda;dev=NVIDIA H200;cc=9.0;drv=13000", "sm_90");
    double sm89 = weft_tuner_target_distance(&t, "cuda;dev=NVIDIA L40S;cc=8.9;drv=13000", "sm_89");
    double sm80 = weft_tuner_target_distance(&t, "cuda;dev=NVIDIA A100;cc=8.0;drv=13000", "sm_80");
    double sm100 = weft_tuner_target_distance(&t, "cuda;dev=NVIDIA B200;cc=10.0;drv=13000", "sm_100");
    double cpu = weft_tuner_target_distance(&t, "llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=2", "+avx512f");
    assert_true(self < 0);
    assert_true(cpu < 0);
    assert_true(drv >= 0 && drv < same_cc);
    assert_true(same_cc < sm89);
    assert_true(sm89 < sm80);   /* 8.9 is nearer 9.0 than 8.0 is */
    assert_true(sm100 > same_cc);
    /* from an 8.6 device: the same major first (8.9, then 8.0), then 9.0 */
    weft_gpu_device a = {.name = "NVIDIA A10", .cc_major = 8, .cc_minor = 6, .driver_version = 13000};
    weft_tuner_target t86;
    weft_tuner_target_init_gpu(&t86, &a);
    double a89 = weft_tuner_target_distance(&t86, "cuda;dev=NVIDIA L40S;cc=8.9;drv=13000", "sm_89");
    double a80 = weft_tuner_target_distance(&t86, "cuda;dev=NVIDIA A100;cc=8.0;drv=13000", "sm_80");
    double a90 = weft_tuner_target_distance(&t86, t.key, "sm_90");
    assert_true(a89 < a80 && a80 < a90);
    /* a CPU machine never takes a GPU record */
    weft_target_caps caps = {.name = "llvm", .cpu = "znver4", .features = "+avx512f"};
    weft_tuner_target c;
    weft_tuner_target_init(&c, &caps, 2);
    assert_true(weft_tuner_target_distance(&c, t.key, "sm_90") < 0);
}

static void test_db_lists_other_devices_nearest_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/weft-test-gpukey-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.db", dir);
    weft_db *db = NULL;
    assert_int_equal(weft_db_open(path, true, &db), WEFT_OK);
    const char *W = "00000000000000a1";
    weft_db_workload w = {W, "C = A * B", "A[4,4] B[4,4] -> C[4,4]", 128};
    assert_int_equal(weft_db_put_workload(db, &w), WEFT_OK);
    weft_tuner_target t = h100(13000);
    const char *keys[] = {t.key, "cuda;dev=NVIDIA A100;cc=8.0;drv=13000", "cuda;dev=NVIDIA H200;cc=9.0;drv=13000",
                          "llvm;cpu=znver4;feat=00000000000000bb;cores=2;threads=2"};
    const char *feats[] = {"sm_90", "sm_80", "sm_90", "+avx512f"};
    const char *steps[] = {"here", "a100", "h200", "cpu"};
    for (int i = 0; i < 4; i++) {
        weft_db_target dt = {keys[i], i == 3 ? "llvm" : "cuda", "test", feats[i], 2};
        assert_int_equal(weft_db_put_target(db, &dt), WEFT_OK);
        double lat[1] = {1e-6 * (i + 1)};
        weft_db_measurement m = {W, keys[i], steps[i], lat, 1, lat[0], NULL};
        assert_int_equal(weft_db_put_measurement(db, &m), WEFT_OK);
    }
    weft_tuner_nearest *near = NULL;
    int n = 0;
    assert_int_equal(weft_tuner_nearest_records(db, &t, W, &near, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_string_equal(near[0].steps, "h200");
    assert_string_equal(near[1].steps, "a100");
    weft_tuner_nearest_free(near, n);
    weft_db_close(db);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_names_device_cc_and_driver),
        cmocka_unit_test(test_nearest_device_order),
        cmocka_unit_test(test_db_lists_other_devices_nearest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
