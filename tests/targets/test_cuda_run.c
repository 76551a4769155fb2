/* The CUDA target's device path without a GPU, on the fake driver (tests/cuda/fake_cuda.h,
 * loaded through WEFT_CUDA_DRIVER): kernels are NVRTC cubins, memory is host memory behind
 * poisoned addresses, launches are recorded, not executed. So this checks the plumbing, not
 * numbers (tests/targets/test_gpu.c checks the kernels' numbers in the interpreter's GPU mode):
 *   - a library that cannot be loaded is "no CUDA driver", a driver without devices "no CUDA
 *     device", both naming the library;
 *   - one op: buffers allocated, uploaded, downloaded, freed; one cuLaunchKernel per launch of
 *     the lowered function, in order, named as in the cubin, with the grid and block of its
 *     bound loops and the caller's buffers as arguments;
 *   - the MLP, ResNet-9 and the transformer compiled for "cuda" (the fake reports compute capability 8.6):
 *     constants uploaded once at compile time, each run uploads exactly the input, launches
 *     every kernel's launches in model order with device arguments only, downloads exactly the
 *     output, synchronizes; everything freed and every module unloaded when the model goes;
 *   - a 4-D softmax: block per row with the outer axes on blockIdx.z, .y, .x;
 *   - driver failures (out of memory, a module that does not load, a launch failure, a fault
 *     reported at synchronize) come back as errors naming the driver call and its error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/build.h"
#include "model/model_internal.h"
#include "ops/ops.h"
#include "weft/graph.h"
#include "weft/model.h"
#include "weft/onnx.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#include "targets/gpu/emit_c.h"
#include "tests/cuda/fake_cuda.h"
#endif

#define DATA "tests/data/models/"

#if defined(WEFT_WITH_CUDA) && defined(FAKECUDA_LIB)

static struct {
    fakecuda_stats_fn stats;
    fakecuda_get_launch_fn launch;
    fakecuda_reset_fn reset;
    fakecuda_fail_fn fail_at;
} fc;

static fakecuda_stats stats(void)
{
    fakecuda_stats s;
    fc.stats(&s);
    return s;
}

static void expect_msg(weft_status rc, weft_status want, const char *a, const char *b)
{
    const char *msg = rc == WEFT_OK ? "(ok)" : weft_last_error();
    if (rc != want || !strstr(msg, a) || (b && !strstr(msg, b)))
        print_error("got %s '%s', wanted %s with '%s' and '%s'\n", weft_status_name(rc), msg, weft_status_name(want), a,
                    b ? b : "");
    assert_int_equal(rc, want);
    assert_non_null(strstr(msg, a));
    if (b) assert_non_null(strstr(msg, b));
}

/* Runs first, before anything loads the fake: the messages without a driver or device. */
static void test_no_driver_no_device(void **state)
{
    (void)state;
    char why[512];
    setenv("WEFT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    assert_false(weft_cuda_driver_available(why, sizeof why));
    assert_non_null(strstr(why, "no CUDA driver"));
    assert_non_null(strstr(why, "WEFT_CUDA_DRIVER=/nonexistent/libcuda.so.1"));
    /* the target compiles without a driver (sm_90 when no device says otherwise) ... */
    const weft_target_ops *ops = weft_target_find("cuda");
    assert_non_null(ops);
    assert_false(weft_target_is_host(ops));
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_string_equal(caps.cpu, "sm_90");
    /* ... and every buffer operation says why it cannot run */
    void *p = (void *)1;
    expect_msg(ops->alloc(t, 64, &p), WEFT_ERR_UNAVAILABLE, "no CUDA driver", NULL);
    assert_null(p);
    expect_msg(ops->synchronize(t, NULL), WEFT_ERR_UNAVAILABLE, "no CUDA driver", NULL);
    ops->destroy(t);

    setenv("WEFT_CUDA_DRIVER", FAKECUDA_LIB, 1);
    setenv("FAKECUDA_DEVICES", "0", 1);
    assert_false(weft_cuda_driver_available(why, sizeof why));
    if (!strstr(why, "no CUDA device")) print_error("%s\n", why);
    assert_non_null(strstr(why, "no CUDA device"));
    assert_non_null(strstr(why, "CUDA_ERROR_NO_DEVICE"));
    /* a failed load closed the library: it starts afresh with the new environment */
    setenv("FAKECUDA_DEVICES", "1", 1);
    setenv("FAKECUDA_CC", "8.6", 1);
    assert_true(weft_cuda_driver_available(why, sizeof why));
    void *h = dlopen(FAKECUDA_LIB, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    fc.stats = (fakecuda_stats_fn)(uintptr_t)dlsym(h, "fakecuda_stats_get");
    fc.launch = (fakecuda_get_launch_fn)(uintptr_t)dlsym(h, "fakecuda_launch_get");
    fc.reset = (fakecuda_reset_fn)(uintptr_t)dlsym(h, "fakecuda_reset");
    fc.fail_at = (fakecuda_fail_fn)(uintptr_t)dlsym(h, "fakecuda_fail");
    assert_true(fc.stats && fc.launch && fc.reset && fc.fail_at);
    dlclose(h); /* weft holds its own reference */
}

/* Lowers op/shape with the default schedule for the target and compiles it. */
static weft_kernel *build(const weft_target_ops *ops, weft_target *t, weft_arena *a, const char *op, int n,
                          const int64_t *shape, weft_te_func **f, weft_loop_func **lf)
{
    weft_schedule *s = NULL;
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_int_equal(weft_op_build(a, op, n, shape, f), WEFT_OK);
    assert_int_equal(weft_schedule_create(*f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    weft_kernel *k = NULL;
    weft_status rc = weft_target_build(ops, t, s, a, lf, &k);
    if (rc != WEFT_OK) print_error("%s: %s\n", op, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_schedule_destroy(s);
    return k;
}

static void test_op_launches(void **state)
{
    (void)state;
    const weft_target_ops *ops = weft_target_find("cuda");
    weft_target *t = NULL;
    assert_int_equal(ops->create(&t), WEFT_OK);
    weft_target_caps caps;
    ops->caps(t, &caps);
    assert_string_equal(caps.cpu, "sm_86"); /* the fake device's compute capability */
    static const struct {
        const char *op;
        int n;
        int64_t shape[4];
        int64_t grid0, block0; /* the default rules: a thread per output, 256 per block; matmul: the GEMM rule's 16 x 16 threads */
    } cases[] = {{"relu", 1, {1000}, 4, 256}, {"matmul", 3, {33, 17, 20}, 2, 16}, {"add", 2, {5, 7}, 1, 35}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_arena *a = weft_arena_create();
        weft_te_func *f = NULL;
        weft_loop_func *lf = NULL;
        weft_kernel *k = build(ops, t, a, cases[c].op, cases[c].n, cases[c].shape, &f, &lf);
        fc.reset();
        fakecuda_stats s0 = stats();
        int np = f->n_inputs + f->n_outputs;
        assert_int_equal(np, lf->n_params);
        void *dev[8];
        float *host[8];
        size_t bytes[8];
        for (int i = 0; i < np; i++) {
            const weft_tensor *te = i < f->n_inputs ? f->inputs[i] : f->outputs[i - f->n_inputs];
            bytes[i] = (size_t)weft_te_numel(te) * 4;
            host[i] = calloc(1, bytes[i]);
            assert_int_equal(ops->alloc(t, bytes[i], &dev[i]), WEFT_OK);
            if (i < f->n_inputs) assert_int_equal(ops->upload(t, dev[i], host[i], bytes[i], NULL), WEFT_OK);
        }
        assert_int_equal(ops->run(k, dev, NULL), WEFT_OK);
        assert_int_equal(ops->download(t, host[np - 1], dev[np - 1], bytes[np - 1], NULL), WEFT_OK);
        assert_int_equal(ops->synchronize(t, NULL), WEFT_OK);
        fakecuda_stats s = stats();
        assert_int_equal(s.bad, 0);
        assert_int_equal(s.htod, f->n_inputs);
        assert_int_equal(s.dtoh, 1);
        assert_int_equal(s.dtoh_bytes, bytes[np - 1]);
        assert_int_equal(s.modules_loaded, 1);
        weft_gpu_launch want[WEFT_GPU_MAX_LAUNCHES];
        const weft_buffer *temps[32];
        int nt = 0;
        int nl = weft_gpu_launches(lf, want, WEFT_GPU_MAX_LAUNCHES, temps, 32, &nt);
        assert_true(nl >= 1);
        assert_int_equal(s.launches, nl);
        assert_int_equal(s.allocs - s0.allocs, np + nt); /* ours, and the kernel's temporaries */
        assert_int_equal(want[0].grid[0], cases[c].grid0);
        assert_int_equal(want[0].block[0], cases[c].block0);
        for (int i = 0; i < nl; i++) {
            fakecuda_launch l;
            assert_true(fc.launch(i, &l));
            char name[96];
            snprintf(name, sizeof name, "%s_k%d", lf->name, i);
            assert_string_equal(l.name, name);
            for (int d = 0; d < 3; d++) {
                assert_int_equal(l.grid[d], want[i].grid[d]);
                assert_int_equal(l.block[d], want[i].block[d]);
            }
            assert_int_equal(l.n_args, np + nt);
            for (int p = 0; p < np; p++) assert_int_equal(l.args[p], (unsigned long long)(uintptr_t)dev[p]);
        }
        printf("%s: %d launch%s, grid %u block %u, %d arguments\n", cases[c].op, nl, nl == 1 ? "" : "es",
               (unsigned)want[0].grid[0], (unsigned)want[0].block[0], np + nt);
        /* a kernel that was never run loads nothing; destroying the run one unloads its module */
        for (int i = 0; i < np; i++) {
            ops->free_buf(t, dev[i]);
            free(host[i]);
        }
        ops->kernel_destroy(k);
        s = stats();
        assert_int_equal(s.modules_live, 0);
        assert_int_equal(s.live, s0.live);
        weft_arena_destroy(a);
    }
    ops->destroy(t);
}

static weft_model *load(const char *file)
{
    weft_graph *g = NULL;
    weft_model *m = NULL;
    assert_int_equal(weft_onnx_load(file, &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.threads = 2;
    o.target = "cuda";
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s: %s\n", file, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    weft_graph_destroy(g);
    return m;
}

static void *read_file(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    void *p = malloc(*n);
    assert_int_equal(fread(p, 1, *n, fp), *n);
    fclose(fp);
    return p;
}

static bool has_arg(const fakecuda_launch *l, unsigned long long dev)
{
    for (int i = 0; i < l->n_args; i++)
        if (l->args[i] == dev) return true;
    return false;
}

/* One run of stem's model: the launches in model order, the copies at its edges. */
static void check_model(const char *stem)
{
    char path[256];
    fakecuda_stats s0 = stats();
    snprintf(path, sizeof path, DATA "%s.onnx", stem);
    weft_model *m = load(path);
    fakecuda_stats sc = stats();
    assert_true(sc.htod > s0.htod); /* constants, once, at compile time */
    assert_int_equal(sc.launches, s0.launches);
    size_t nx = 0, ny = 0;
    snprintf(path, sizeof path, DATA "%s.input.bin", stem);
    void *x = read_file(path, &nx);
    snprintf(path, sizeof path, DATA "%s.output.bin", stem);
    void *y = read_file(path, &ny);
    int expected = 0;
    for (int k = 0; k < m->n_kernels; k++) expected += weft_cuda_kernel_launch(m->kernels[k].k, 0, NULL, NULL);
    for (int rep = 0; rep < 2; rep++) {
        fc.reset();
        fakecuda_stats r0 = stats();
        weft_status rc = weft_model_run_sized(m, 1, (const void *[]){x}, &nx, 1, (void *[]){y}, &ny);
        if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
        assert_int_equal(rc, WEFT_OK);
        fakecuda_stats s = stats();
        printf("%s run %d: %d kernels, %d launches, %d/%d copies in/out (%zu/%zu bytes), %d syncs, %d allocations\n", stem,
               rep, m->n_kernels, s.launches, s.htod, s.dtoh, s.htod_bytes, s.dtoh_bytes, s.syncs, s.allocs);
        assert_int_equal(s.bad, 0);
        assert_int_equal(s.htod, 1);
        assert_int_equal(s.htod_bytes, nx);
        assert_int_equal(s.dtoh, 1);
        assert_int_equal(s.dtoh_bytes, ny);
        assert_true(s.syncs >= 1);
        assert_int_equal(s.launches, expected);
        /* first run: the device arena, and each kernel's temporaries; later runs nothing */
        if (rep) assert_int_equal(s.allocs, r0.allocs);
        int i = 0;
        for (int k = 0; k < m->n_kernels; k++) {
            const char *name;
            weft_gpu_launch want;
            int nl = weft_cuda_kernel_launch(m->kernels[k].k, 0, NULL, NULL);
            for (int j = 0; j < nl; j++, i++) {
                fakecuda_launch l;
                assert_true(fc.launch(i, &l));
                weft_cuda_kernel_launch(m->kernels[k].k, j, &name, &want);
                assert_string_equal(l.name, name);
                for (int d = 0; d < 3; d++) {
                    assert_int_equal(l.grid[d], want.grid[d]);
                    assert_int_equal(l.block[d], want.block[d]);
                }
                assert_true(l.n_args >= m->kernels[k].n_params);
                if (i == 0) assert_true(has_arg(&l, s.last_htod_dst)); /* the first kernel reads the input */
                if (i == expected - 1) assert_true(has_arg(&l, s.last_dtoh_src)); /* the last writes the output */
            }
        }
    }
    weft_model_destroy(m);
    fakecuda_stats s = stats();
    assert_int_equal(s.live, s0.live);
    assert_int_equal(s.modules_live, 0);
    assert_int_equal(s.bad, 0);
    free(x);
    free(y);
}

static void test_models_on_fake_driver(void **state)
{
    (void)state;
    check_model("mlp");
    check_model("resnet9");
    check_model("transformer"); /* 4-D softmax rows: one block per row within the shared limit */
}

/* A softmax over the last axis of [2, 3, 4, 300]: its max and sum get a block per row, the
 * three outer axes on blockIdx.z, .y, .x, 256 threads; the output one thread per element. */
static void test_softmax_block_axes(void **state)
{
    (void)state;
    int64_t shape[4] = {2, 3, 4, 300};
    weft_graph *g = NULL;
    weft_value in, out;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 4, shape, &in), WEFT_OK);
    assert_int_equal(weft_graph_add_op(g, "Softmax", "sm", 1, &in, 0, NULL, 1, &out), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, out, "y"), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.target = "cuda";
    weft_model *m = NULL;
    assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
    float *x = calloc(7200, 4), *y = calloc(7200, 4);
    fc.reset();
    assert_int_equal(weft_model_run(m, (const void *[]){x}, (void *[]){y}), WEFT_OK);
    fakecuda_stats s = stats();
    assert_int_equal(s.launches, 3);
    assert_int_equal(s.bad, 0);
    static const unsigned grid[3][3] = {{4, 3, 2}, {4, 3, 2}, {29, 1, 1}}; /* 7200 / 256 -> 29 */
    for (int i = 0; i < 3; i++) {
        fakecuda_launch l;
        assert_true(fc.launch(i, &l));
        printf("launch %s: grid (%u, %u, %u), block (%u, %u, %u)\n", l.name, l.grid[0], l.grid[1], l.grid[2], l.block[0],
               l.block[1], l.block[2]);
        for (int d = 0; d < 3; d++) assert_int_equal(l.grid[d], grid[i][d]);
        assert_int_equal(l.block[0], 256);
    }
    free(x);
    free(y);
    weft_model_destroy(m);
    weft_graph_destroy(g);
}

static void test_driver_errors(void **state)
{
    (void)state;
    fakecuda_stats s0 = stats();
    weft_model *m = load(DATA "mlp.onnx");
    size_t nx = 0, ny = 0;
    void *x = read_file(DATA "mlp.input.bin", &nx);
    void *y = read_file(DATA "mlp.output.bin", &ny);
    const void *in[] = {x};
    void *out[] = {y};
    /* the device arena cannot be allocated */
    fc.fail_at("cuMemAlloc_v2", 1, 0);
    expect_msg(weft_model_run_sized(m, 1, in, &nx, 1, out, &ny), WEFT_ERR_NOMEM, "device arena",
               "cuMemAlloc_v2 (");
    assert_non_null(strstr(weft_last_error(), "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"));
    /* the first kernel's cubin is refused */
    fc.fail_at("cuModuleLoadData", 1, 200);
    expect_msg(weft_model_run_sized(m, 1, in, &nx, 1, out, &ny), WEFT_ERR_DEVICE, "cuModuleLoadData",
               "CUDA_ERROR_INVALID_IMAGE");
    /* the second launch fails, then a fault shows at synchronize */
    fc.fail_at("cuLaunchKernel", 2, 0);
    expect_msg(weft_model_run_sized(m, 1, in, &nx, 1, out, &ny), WEFT_ERR_DEVICE, "cuLaunchKernel (",
               "CUDA_ERROR_LAUNCH_FAILED");
    assert_non_null(strstr(weft_last_error(), "grid ("));
    fc.fail_at("cuCtxSynchronize", 1, 0);
    expect_msg(weft_model_run_sized(m, 1, in, &nx, 1, out, &ny), WEFT_ERR_DEVICE, "cuCtxSynchronize",
               "unspecified launch failure");
    /* and then it runs */
    fc.fail_at(NULL, 0, 0);
    assert_int_equal(weft_model_run_sized(m, 1, in, &nx, 1, out, &ny), WEFT_OK);
    weft_model_destroy(m);
    /* out of memory for the constants at compile time */
    weft_graph *g = NULL;
    assert_int_equal(weft_onnx_load(DATA "mlp.onnx", &g), WEFT_OK);
    weft_model_options o = weft_model_options_default();
    o.target = "cuda";
    fc.fail_at("cuMemAlloc_v2", 1, 0);
    expect_msg(weft_model_compile(g, &o, &m), WEFT_ERR_NOMEM, "cuMemAlloc_v2", "out of memory");
    fc.fail_at(NULL, 0, 0);
    weft_graph_destroy(g);
    fakecuda_stats s = stats();
    assert_int_equal(s.live, s0.live);
    assert_int_equal(s.modules_live, 0);
    assert_int_equal(s.bad, 0);
    free(x);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_driver_no_device),
        cmocka_unit_test(test_op_launches),
        cmocka_unit_test(test_models_on_fake_driver),
        cmocka_unit_test(test_softmax_block_axes),
        cmocka_unit_test(test_driver_errors),
    };
    return cmocka_run_group_tests_name("cuda_run", tests, NULL, NULL);
}

#else

static void test_skipped(void **state)
{
    (void)state;
    printf("skipped: the CUDA target is not built (NVRTC not found), so there is no fake driver to run it on\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_skipped)};
    return cmocka_run_group_tests_name("cuda_run", tests, NULL, NULL);
}

#endif
