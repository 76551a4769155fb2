/* Shared by tests/model/test_onnx_ops*.c: the committed tiny ONNX models of tests/data/onnx_ops
 * checked against PyTorch (check_case, one CASE(name) test per model), and graphs built to be
 * refused (bad_graph, expect_fail, decompose_fail). Header-only: every helper is static. */
#ifndef WEFT_TESTS_ONNX_OPS_HARNESS_H
#define WEFT_TESTS_ONNX_OPS_HARNESS_H

#define OX_UNUSED __attribute__((unused))

#define DATA "tests/data/onnx_ops/"
#define REL_TOL 1e-4

static OX_UNUSED float *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = len >= 0 ? malloc((size_t)len + 4) : NULL;
    *n = x ? fread(x, 1, (size_t)len, f) / sizeof(float) : 0;
    fclose(f);
    return x;
}

static OX_UNUSED size_t value_elems(const weft_graph *g, weft_value v)
{
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    return n;
}

/* The value's size in 4-byte words (an int64 input counts 2 per element). */
static OX_UNUSED size_t value_words(const weft_graph *g, weft_value v)
{
    return value_elems(g, v) * (weft_graph_value_type(g, v) == WEFT_TYPE_INT64 ? 2 : 1);
}

/* g compiled for `target` (NULL: the default) on `threads` threads; the test fails otherwise. */
static OX_UNUSED weft_model *compile_for(const char *name, const weft_graph *g, const char *target, int threads)
{
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    if (target) o.target = target;
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s (%s): %s\n", name, o.target, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    return m;
}

/* max |out - ref| over n elements; *ref_max = max |ref|. */
static OX_UNUSED double max_error(const float *out, const double *ref, int64_t n, double *ref_max)
{
    double err = 0, mx = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(out[i] - ref[i]);
        if (!(d <= err)) err = d; /* NaN counts as an error */
        if (fabs(ref[i]) > mx) mx = fabs(ref[i]);
    }
    *ref_max = mx;
    return err;
}

/* Runs the compiled model twice (the second run reuses the arena) and returns max |y - ref|. */
static OX_UNUSED double run_and_compare(const char *name, const weft_graph *g, const char *target, int threads, const float *x,
                              const float *ref, float *y, size_t nref)
{
    weft_model *m = compile_for(name, g, target, threads);
    memset(y, 0xff, nref * sizeof(float)); /* NaNs: an unwritten output fails */
    const void *in[1] = {x};
    void *out[1] = {y};
    for (int rep = 0; rep < 2; rep++) {
        weft_status rc = weft_model_run(m, in, out);
        if (rc != WEFT_OK) print_error("%s: %s\n", name, weft_last_error());
        assert_int_equal(rc, WEFT_OK);
    }
    double err = 0;
    for (size_t i = 0; i < nref; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= err)) err = d; /* a NaN sticks */
    }
    weft_model_destroy(m);
    return err;
}

static OX_UNUSED void check_case(const char *name)
{
    char path[256];
    weft_graph *g = NULL;
    snprintf(path, sizeof path, DATA "%s.onnx", name);
    weft_status rc = weft_onnx_load(path, &g);
    if (rc != WEFT_OK) print_error("%s: %s\n", path, weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(weft_graph_n_inputs(g), 1);
    assert_int_equal(weft_graph_n_outputs(g), 1);
    size_t nx = 0, nref = 0;
    snprintf(path, sizeof path, DATA "%s.input.bin", name);
    float *x = read_all(path, &nx);
    snprintf(path, sizeof path, DATA "%s.output.bin", name);
    float *ref = read_all(path, &nref);
    assert_non_null(x);
    assert_non_null(ref);
    assert_int_equal(nx, value_words(g, weft_graph_input(g, 0)));
    assert_int_equal(nref, value_elems(g, weft_graph_output(g, 0)));
    double mx = 0;
    for (size_t i = 0; i < nref; i++)
        if (fabs(ref[i]) > mx) mx = fabs(ref[i]);
    assert_true(mx > 0);
    double tol = REL_TOL * (mx > 1 ? mx : 1);
    float *y = malloc(nref * sizeof(float) + 4);
    assert_non_null(y);
    for (int threads = 1; threads <= 3; threads++) {
        const char *target = threads == 3 ? "interp" : "llvm";
        int t = threads == 3 ? 1 : threads;
        double err = run_and_compare(name, g, target, t, x, ref, y, nref);
        print_message("%-30s %-6s %d thread(s): max |weft - torch| = %.3g (tolerance %.3g)\n", name, target, t, err,
                      tol);
        assert_true(err <= tol);
    }
    free(y);
    free(ref);
    free(x);
    weft_graph_destroy(g);
}

#define CASE(n)                                                                                                        \
    static void test_##n(void **state)                                                                                 \
    {                                                                                                                  \
        (void)state;                                                                                                   \
        check_case(#n);                                                                                                \
    }
/* ---- bad attributes and unsupported modes ------------------------------------------------- */

typedef struct bad_graph {
    weft_graph *g;
    weft_value x; /* input [1, 2, 4, 4] */
} bad_graph;

static OX_UNUSED bad_graph bad_new(void)
{
    bad_graph b = {0};
    assert_int_equal(weft_graph_create(&b.g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(b.g, "x", WEFT_TYPE_FLOAT32, 4, (int64_t[]){1, 2, 4, 4}, &b.x), WEFT_OK);
    return b;
}

static OX_UNUSED weft_value f32_const(bad_graph *b, const char *name, int n, const float *v)
{
    weft_value c;
    assert_int_equal(weft_graph_add_constant(b->g, name, WEFT_TYPE_FLOAT32, 1, (int64_t[]){n}, v, &c), WEFT_OK);
    return c;
}

static OX_UNUSED weft_value i64_const(bad_graph *b, const char *name, int n, const int64_t *v)
{
    weft_value c;
    assert_int_equal(weft_graph_add_constant(b->g, name, WEFT_TYPE_INT64, 1, (int64_t[]){n}, v, &c), WEFT_OK);
    return c;
}

/* Adding the op fails with `want` and a message holding every string of `needles`. */
static OX_UNUSED void expect_fail(bad_graph *b, const char *op, int n_in, const weft_value *ins, int n_attrs,
                        const weft_attr *attrs, weft_status want, const char *const *needles)
{
    weft_value out;
    weft_status rc = weft_graph_add_op(b->g, op, "bad", n_in, ins, n_attrs, attrs, 1, &out);
    const char *msg = weft_last_error();
    print_message("%s: %s\n", op, msg);
    assert_int_equal(rc, want);
    for (int i = 0; needles[i]; i++) {
        if (!strstr(msg, needles[i])) print_error("missing '%s' in: %s\n", needles[i], msg);
        assert_non_null(strstr(msg, needles[i]));
    }
    weft_graph_destroy(b->g);
}

static OX_UNUSED weft_attr str_attr(const char *name, const char *s) { return (weft_attr){.name = name, .kind = WEFT_ATTR_STRING, .s = s}; }
static OX_UNUSED weft_attr ints_attr(const char *name, int n, const int64_t *v)
{
    return (weft_attr){.name = name, .kind = WEFT_ATTR_INTS, .n = n, .ints = v};
}

/* ---- the frontend's rewrites (frontend/onnx_decompose.c): errors and kernel counts ---------- */

/* weft_onnx_decompose(op) on b's graph fails with `want`, rewrites nothing and says every
 * string of `needles`. */
static OX_UNUSED void decompose_fail(bad_graph *b, const char *op, int n_in, const weft_value *ins, int n_attrs,
                           const weft_attr *attrs, weft_status want, const char *const *needles)
{
    weft_value out = -1;
    bool done = true;
    weft_status rc = weft_onnx_decompose(b->g, op, "bad", n_in, ins, n_attrs, attrs, 1, &out, &done);
    const char *msg = weft_last_error();
    print_message("%s: %s\n", op, msg);
    assert_int_equal(rc, want);
    assert_false(done);
    for (int i = 0; needles[i]; i++) {
        if (!strstr(msg, needles[i])) print_error("missing '%s' in: %s\n", needles[i], msg);
        assert_non_null(strstr(msg, needles[i]));
    }
    weft_graph_destroy(b->g);
}

static OX_UNUSED weft_attr int_attr(const char *name, int64_t v) { return (weft_attr){.name = name, .kind = WEFT_ATTR_INT, .i = v}; }

#endif
