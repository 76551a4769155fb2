/* ScatterElements and ScatterND (ops/nn_scatter.c): every reduction (none, add, mul, max, min) on both
 * formulations, the planned one (constant indices: model compile gives the node its plan) and
 * the run-time one (indices a graph input; from 32 rows a loop kernel), against a direct
 * scatter loop in C written from
 * the ONNX definition (updates applied in row-major order, "none" keeps the last write), at 1 and
 * 2 threads (LLVM) and in the loop-IR interpreter. Tolerance: 1e-5 * max(1, max |ref|) (sums
 * and products of at most 7 terms near 1, in another order than the loop's). Then the plan
 * itself for a small case, bad inputs refused with the node and the problem named, and
 * ScatterND's rows (repeats, negatives, not a box) the same two ways. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"
#include "weft/graph.h"

static const char *const REDS[5] = {"none", "add", "mul", "max", "min"};

typedef struct scase {
    int rank;
    int64_t dshape[3], ishape[3];
    int axis;
} scase;

static int64_t numel(int r, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < r; d++) n *= s[d];
    return n;
}

/* out = data, then out[q | axis = idx[q]] op= upd[q] for q in row-major order. */
static void reference(const scase *c, int red, const float *data, const int64_t *idx, const float *upd, double *out)
{
    int r = c->rank;
    for (int64_t e = 0; e < numel(r, c->dshape); e++) out[e] = data[e];
    for (int64_t q = 0; q < numel(r, c->ishape); q++) {
        int64_t rem = q, off = 0, stride = 1;
        for (int d = r - 1; d >= 0; d--) {
            int64_t k = rem % c->ishape[d];
            rem /= c->ishape[d];
            if (d == c->axis) k = idx[q] < 0 ? idx[q] + c->dshape[d] : idx[q];
            off += k * stride;
            stride *= c->dshape[d];
        }
        double u = upd[q];
        switch (red) {
        case 0: out[off] = u; break;
        case 1: out[off] += u; break;
        case 2: out[off] *= u; break;
        case 3: out[off] = fmax(out[off], u); break;
        default: out[off] = fmin(out[off], u); break;
        }
    }
}

/* Builds data (input), indices (constant or input), updates (input) -> ScatterElements. */
static weft_graph *build(const scase *c, int red, bool const_idx, const int64_t *idx)
{
    weft_graph *g = NULL;
    weft_value dv, iv, uv, y;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "data", WEFT_TYPE_FLOAT32, c->rank, c->dshape, &dv), WEFT_OK);
    if (const_idx)
        assert_int_equal(weft_graph_add_constant(g, "idx", WEFT_TYPE_INT64, c->rank, c->ishape, idx, &iv), WEFT_OK);
    else
        assert_int_equal(weft_graph_add_input(g, "idx", WEFT_TYPE_INT64, c->rank, c->ishape, &iv), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "upd", WEFT_TYPE_FLOAT32, c->rank, c->ishape, &uv), WEFT_OK);
    weft_attr at[2] = {{.name = "axis", .kind = WEFT_ATTR_INT, .i = c->axis},
                       {.name = "reduction", .kind = WEFT_ATTR_STRING, .s = REDS[red]}};
    weft_status rc = weft_graph_add_op(g, "ScatterElements", "sc", 3, (weft_value[]){dv, iv, uv}, 2, at, 1, &y);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    return g;
}

/* g compiled for run t: 1 and 2 threads with LLVM, 3 the interpreter (1 thread). */
static weft_model *compile_run(const weft_graph *g, int t)
{
    weft_model *m = NULL;
    weft_model_options o = weft_model_options_default();
    o.threads = t == 3 ? 1 : t;
    if (t == 3) o.target = "interp";
    weft_status rc = weft_model_compile(g, &o, &m);
    if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
    assert_int_equal(rc, WEFT_OK);
    return m;
}

/* Kernels of m written as loops (a scatter with run-time indices over 32 rows or more). */
static int loop_kernels(const weft_model *m)
{
    int n = 0;
    for (int k = 0; k < m->n_kernels; k++) n += !strcmp(m->kernels[k].schedule_src, "loops");
    return n;
}

static void run_case(const scase *c, const int64_t *idx)
{
    int64_t nd = numel(c->rank, c->dshape), ni = numel(c->rank, c->ishape);
    float *data = malloc(sizeof(float) * (size_t)nd), *upd = malloc(sizeof(float) * (size_t)ni);
    float *out = malloc(sizeof(float) * (size_t)nd);
    double *ref = malloc(sizeof(double) * (size_t)nd);
    assert_true(data && upd && out && ref);
    for (int64_t e = 0; e < nd; e++) data[e] = 0.75f + 0.01f * (float)((e * 7) % 23);
    for (int64_t q = 0; q < ni; q++) upd[q] = 0.8f + 0.02f * (float)((q * 5) % 19);
    for (int red = 0; red < 5; red++) {
        reference(c, red, data, idx, upd, ref);
        double mx = 0;
        for (int64_t e = 0; e < nd; e++) mx = fmax(mx, fabs(ref[e]));
        double tol = 1e-5 * fmax(1, mx);
        for (int planned = 0; planned < 2; planned++) {
            weft_graph *g = build(c, red, planned, idx);
            for (int t = 1; t <= 3; t++) {
                weft_model *m = compile_run(g, t);
                memset(out, 0xff, sizeof(float) * (size_t)nd);
                const void *ins[3] = {data, idx, upd};
                const void *ins_c[2] = {data, upd};
                weft_status rc = weft_model_run(m, planned ? ins_c : ins, (void *[]){out});
                if (rc != WEFT_OK) print_error("%s\n", weft_last_error());
                assert_int_equal(rc, WEFT_OK);
                assert_int_equal(loop_kernels(m), !planned && c->ishape[c->axis] >= 32);
                double err = 0;
                for (int64_t e = 0; e < nd; e++) {
                    double d = fabs(out[e] - ref[e]);
                    if (!(d <= err)) err = d;
                }
                print_message("rank %d axis %d %-4s %-8s %s %d thread(s): max err %.3g (tol %.3g)\n", c->rank,
                              c->axis, REDS[red], planned ? "planned" : "run-time", t == 3 ? "interp" : "llvm",
                              t == 3 ? 1 : t, err, tol);
                assert_true(err <= tol);
                weft_model_destroy(m);
            }
            weft_graph_destroy(g);
        }
    }
    free(data), free(upd), free(out), free(ref);
}

/* Axis 0, more updates than data rows (7 onto 5, with repeats and negative indices), updates
 * narrower than data in the other dim (4 of 6 columns: the last two keep data). */
static void test_scatter_axis0_repeats(void **state)
{
    (void)state;
    scase c = {2, {5, 6}, {7, 4}, 0};
    int64_t idx[7 * 4];
    for (int q = 0; q < 28; q++) idx[q] = (q * 3 + q / 4) % 5 - (q % 3 == 0 ? 5 : 0);
    run_case(&c, idx);
}

/* Axis 1 of a 3-D tensor with the indices equal along dim 0 (an index vector expanded: the
 * plan collapses that dim) and along dim 2. */
static void test_scatter_axis1_expanded(void **state)
{
    (void)state;
    scase c = {3, {3, 8, 5}, {2, 10, 5}, 1};
    int64_t idx[2 * 10 * 5];
    for (int a = 0; a < 2; a++)
        for (int j = 0; j < 10; j++)
            for (int k = 0; k < 5; k++) idx[(a * 10 + j) * 5 + k] = (j * 5) % 7 + (j == 9 ? -8 : 0);
    run_case(&c, idx);
}

/* From 32 rows, run-time indices make a loop kernel (the output = data, then one pass over the
 * updates): along the last axis of a 3-D tensor, 40 rows onto 64 with repeats and negative
 * indices, updates narrower in dim 0; along axis 0 (its pass parallel over dim 1), 45 rows onto
 * 33. Constant indices keep their plan. */
static void test_scatter_loop_kernel(void **state)
{
    (void)state;
    scase c = {3, {3, 4, 64}, {2, 4, 40}, 2};
    int64_t idx[2 * 4 * 40];
    for (int q = 0; q < 2 * 4 * 40; q++) idx[q] = (q * 37 + q / 40) % 64 - (q % 5 == 0 ? 64 : 0);
    idx[3] = idx[7] = idx[11] = 9; /* the last of three rows landing on one element wins */
    run_case(&c, idx);
    scase c0 = {2, {33, 6}, {45, 5}, 0};
    int64_t idx0[45 * 5];
    for (int q = 0; q < 45 * 5; q++) idx0[q] = (q * 13 + q / 7) % 33 - (q % 4 == 0 ? 33 : 0);
    run_case(&c0, idx0);
}

/* The plan of a [4, 3] scatter along axis 0 with indices {2, 0, 2, -1, 2} expanded over the
 * columns: one plan row per data row (the column dim collapses), T = 3 (row 2 receives three),
 * ascending, -1 padded; "none" keeps the last only. */
static void test_scatter_plan_contents(void **state)
{
    (void)state;
    scase c = {2, {4, 3}, {5, 3}, 0};
    static const int64_t rows[5] = {2, 0, 2, -1, 2};
    int64_t idx[15];
    for (int q = 0; q < 15; q++) idx[q] = rows[q / 3];
    for (int red = 0; red < 2; red++) {
        weft_graph *g = build(&c, red, true, idx);
        int ni = -1;
        for (int i = 0; i < g->n_nodes; i++)
            if (strcmp(g->nodes[i].op_type, "ScatterElements") == 0) ni = i;
        assert_true(ni >= 0);
        assert_int_equal(weft_nn_scatter_plan(g, ni), WEFT_OK);
        assert_int_equal(g->nodes[ni].n_inputs, 4);
        const weft_gvalue *p = &g->values[g->nodes[ni].inputs[3]];
        assert_int_equal(p->ndim, 3);
        assert_int_equal(p->shape[0], 4);
        assert_int_equal(p->shape[1], 1);
        const int64_t *pd = p->data;
        if (red == 0) { /* none: the last j per row */
            static const int64_t want[4] = {1, -1, 4, 3};
            assert_int_equal(p->shape[2], 1);
            assert_memory_equal(pd, want, sizeof want);
        } else {
            static const int64_t want[12] = {1, -1, -1, -1, -1, -1, 0, 2, 4, 3, -1, -1};
            assert_int_equal(p->shape[2], 3);
            assert_memory_equal(pd, want, sizeof want);
        }
        /* a second call leaves the planned node alone */
        assert_int_equal(weft_nn_scatter_plan(g, ni), WEFT_OK);
        assert_int_equal(g->nodes[ni].n_inputs, 4);
        weft_graph_destroy(g);
    }
}

static void expect_refused(int n_in, int64_t idx0, int64_t plan0, const char *red, const int64_t *ushape,
                           weft_status want, const char *needle)
{
    weft_graph *g = NULL;
    weft_value dv, iv, uv, pv, y;
    static const float u[12] = {0};
    int64_t idx[12] = {idx0}, plan[4] = {plan0, -1, -1, -1};
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "data", WEFT_TYPE_FLOAT32, 2, (int64_t[]){4, 3}, &dv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){2, 3}, idx, &iv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "upd", WEFT_TYPE_FLOAT32, 2, ushape, u, &uv), WEFT_OK);
    assert_int_equal(weft_graph_add_constant(g, "plan", WEFT_TYPE_INT64, 3, (int64_t[]){4, 1, 1}, plan, &pv), WEFT_OK);
    weft_attr at[1] = {{.name = "reduction", .kind = WEFT_ATTR_STRING, .s = red}};
    weft_status rc = weft_graph_add_op(g, "ScatterElements", "bad", n_in, (weft_value[]){dv, iv, uv, pv}, 1, at, 1, &y);
    print_message("%s\n", weft_last_error());
    assert_int_equal(rc, want);
    if (want != WEFT_OK) {
        assert_non_null(strstr(weft_last_error(), "ScatterElements node 'bad'"));
        assert_non_null(strstr(weft_last_error(), needle));
    }
    weft_graph_destroy(g);
}

static void test_scatter_bad(void **state)
{
    (void)state;
    static const int64_t ok[2] = {2, 3}, wide[2] = {2, 4};
    expect_refused(3, 0, 0, "sum", ok, WEFT_ERR_UNSUPPORTED, "reduction='sum'");
    expect_refused(3, 4, 0, "add", ok, WEFT_ERR_INVALID_ARG, "index 4 is out of range");
    expect_refused(3, -5, 0, "add", ok, WEFT_ERR_INVALID_ARG, "index -5 is out of range");
    expect_refused(3, 0, 0, "add", wide, WEFT_ERR_SHAPE, "updates [2,4]");
    /* a 4th input holding 7 (>= the 2 updates along the axis) is no plan; one in range is */
    expect_refused(4, 0, 7, "add", ok, WEFT_ERR_INVALID_ARG, "scatter plan");
    expect_refused(4, 0, 1, "add", ok, WEFT_OK, "");
}

/* ScatterND with k = 2 of data [5, 4, 3]: 7 index rows (repeats, negatives; not a box) and
 * updates [7, 3], every reduction, planned (constant indices) and at run time (indices a graph
 * input), against the loop out[i0, i1, :] op= upd[row, :] in row order. */
/* ScatterND of `rows` rows of 2 indices into [5, 4, 3] (slices of 3), every reduction, planned
 * and at run time; rows is 7 (the plan's contents checked too) or 40 (a loop kernel at run time). */
static void scatter_nd_case(int rows, const int64_t *idx)
{
    enum { A = 5, B = 4, C = 3 };
    static float data[A * B * C], upd[64 * C], out[A * B * C];
    static double ref[A * B * C];
    assert_true(rows <= 64);
    for (int e = 0; e < A * B * C; e++) data[e] = 0.75f + 0.01f * (float)((e * 7) % 23);
    for (int q = 0; q < rows * C; q++) upd[q] = 0.8f + 0.02f * (float)((q * 5) % 19);
    for (int red = 0; red < 5; red++) {
        for (int e = 0; e < A * B * C; e++) ref[e] = data[e];
        for (int q = 0; q < rows; q++) {
            int64_t i0 = idx[2 * q] < 0 ? idx[2 * q] + A : idx[2 * q], i1 = idx[2 * q + 1] < 0 ? idx[2 * q + 1] + B : idx[2 * q + 1];
            for (int c = 0; c < C; c++) {
                double *o = &ref[(i0 * B + i1) * C + c], v = upd[q * C + c];
                *o = red == 0 ? v : red == 1 ? *o + v : red == 2 ? *o * v : red == 3 ? fmax(*o, v) : fmin(*o, v);
            }
        }
        for (int planned = 0; planned < 2; planned++) {
            weft_graph *g = NULL;
            weft_value dv, iv, uv, y;
            assert_int_equal(weft_graph_create(&g), WEFT_OK);
            assert_int_equal(weft_graph_add_input(g, "data", WEFT_TYPE_FLOAT32, 3, (int64_t[]){A, B, C}, &dv), WEFT_OK);
            if (planned)
                assert_int_equal(weft_graph_add_constant(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){rows, 2}, idx, &iv), WEFT_OK);
            else
                assert_int_equal(weft_graph_add_input(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){rows, 2}, &iv), WEFT_OK);
            assert_int_equal(weft_graph_add_input(g, "upd", WEFT_TYPE_FLOAT32, 2, (int64_t[]){rows, C}, &uv), WEFT_OK);
            weft_attr at[1] = {{.name = "reduction", .kind = WEFT_ATTR_STRING, .s = REDS[red]}};
            assert_int_equal(weft_graph_add_op(g, "ScatterND", "sc", 3, (weft_value[]){dv, iv, uv}, 1, at, 1, &y), WEFT_OK);
            assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
            for (int t = 1; t <= 3; t++) {
                weft_model *m = compile_run(g, t);
                memset(out, 0xff, sizeof out);
                const void *ins[3] = {data, idx, upd}, *ins_c[2] = {data, upd};
                assert_int_equal(weft_model_run(m, planned ? ins_c : ins, (void *[]){out}), WEFT_OK);
                assert_int_equal(loop_kernels(m), !planned && rows >= 32);
                double err = 0, mx = 0;
                for (int e = 0; e < A * B * C; e++) {
                    double d = fabs(out[e] - ref[e]);
                    if (!(d <= err)) err = d;
                    mx = fmax(mx, fabs(ref[e]));
                }
                print_message("ScatterND %-4s %-8s %s %d thread(s): max err %.3g\n", REDS[red],
                              planned ? "planned" : "run-time", t == 3 ? "interp" : "llvm", t == 3 ? 1 : t, err);
                assert_true(err <= 1e-5 * fmax(1, mx));
                weft_model_destroy(m);
            }
            if (planned && rows == 7) { /* the plan: [5, 4, T], (1, 2) receives three rows, (4, 0) two */
                int ni = g->n_nodes - 1;
                assert_int_equal(weft_nn_scatter_plan(g, ni), WEFT_OK);
                assert_int_equal(g->nodes[ni].n_inputs, 4);
                const weft_gvalue *pv = &g->values[g->nodes[ni].inputs[3]];
                assert_int_equal(pv->ndim, 3);
                assert_int_equal(pv->shape[2], red == 0 ? 1 : 3);
                const int64_t *pd = pv->data;
                if (red == 0) assert_int_equal(pd[1 * B + 2], 5); /* the last of rows 0, 2, 5 */
                else assert_true(pd[(1 * B + 2) * 3] == 0 && pd[(1 * B + 2) * 3 + 1] == 2 && pd[(1 * B + 2) * 3 + 2] == 5);
            }
            weft_graph_destroy(g);
        }
    }
}

static void test_scatter_nd_rows(void **state)
{
    (void)state;
    static const int64_t idx[7 * 2] = {1, 2, 4, 0, 1, 2, -1, -4, 0, 3, 1, -2, 2, 1};
    scatter_nd_case(7, idx);
    int64_t many[40 * 2];
    for (int q = 0; q < 40; q++) many[2 * q] = (q * 3) % 5 - (q % 3 == 0 ? 5 : 0), many[2 * q + 1] = (q * 7) % 4 - (q % 4 == 1 ? 4 : 0);
    scatter_nd_case(40, many);
}

/* Bool data (a mask assigned at positions): ScatterND and ScatterElements with reduction none
 * select, never combine, so any dtype goes; a reduction on bool data is refused. */
static void test_scatter_bool_data(void **state)
{
    (void)state;
    enum { A = 4, B = 5 };
    static const int64_t rows[3 * 2] = {0, 1, 3, 4, 2, 0}, cols[2 * B] = {1, 3, 0, 2, 1, 0, 2, 3, 1, 0};
    static const uint8_t upd[3] = {1, 1, 1}, upd_e[2 * B] = {1, 0, 1, 1, 0, 1, 1, 0, 1, 1};
    static uint8_t data[A * B], out[A * B], ref[A * B];
    for (int e = 0; e < A * B; e++) data[e] = (uint8_t)(e % 3 == 0);
    for (int op = 0; op < 2; op++) {
        memcpy(ref, data, sizeof ref);
        if (op == 0)
            for (int q = 0; q < 3; q++) ref[rows[2 * q] * B + rows[2 * q + 1]] = upd[q];
        else
            for (int q = 0; q < 2 * B; q++) ref[cols[q] * B + q % B] = upd_e[q];
        weft_graph *g = NULL;
        weft_value dv, iv, uv, y;
        assert_int_equal(weft_graph_create(&g), WEFT_OK);
        assert_int_equal(weft_graph_add_input(g, "data", WEFT_TYPE_BOOL, 2, (int64_t[]){A, B}, &dv), WEFT_OK);
        if (op == 0) {
            assert_int_equal(weft_graph_add_constant(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){3, 2}, rows, &iv), WEFT_OK);
            assert_int_equal(weft_graph_add_constant(g, "upd", WEFT_TYPE_BOOL, 1, (int64_t[]){3}, upd, &uv), WEFT_OK);
        } else {
            assert_int_equal(weft_graph_add_constant(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){2, B}, cols, &iv), WEFT_OK);
            assert_int_equal(weft_graph_add_constant(g, "upd", WEFT_TYPE_BOOL, 2, (int64_t[]){2, B}, upd_e, &uv), WEFT_OK);
        }
        const char *opn = op == 0 ? "ScatterND" : "ScatterElements";
        assert_int_equal(weft_graph_add_op(g, opn, "sc", 3, (weft_value[]){dv, iv, uv}, 0, NULL, 1, &y), WEFT_OK);
        assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
        weft_model *m = NULL;
        weft_model_options o = weft_model_options_default();
        assert_int_equal(weft_model_compile(g, &o, &m), WEFT_OK);
        memset(out, 7, sizeof out);
        assert_int_equal(weft_model_run(m, (const void *[]){data}, (void *[]){out}), WEFT_OK);
        assert_memory_equal(out, ref, sizeof ref);
        weft_model_destroy(m);
        /* with a reduction: refused */
        weft_attr at[1] = {{.name = "reduction", .kind = WEFT_ATTR_STRING, .s = "add"}};
        assert_int_equal(weft_graph_add_op(g, opn, "bad", 3, (weft_value[]){dv, iv, uv}, 1, at, 1, &y), WEFT_ERR_INVALID_ARG);
        assert_non_null(strstr(weft_last_error(), "node 'bad'"));
        assert_non_null(strstr(weft_last_error(), "with a reduction"));
        weft_graph_destroy(g);
    }
}

/* Bool data with run-time indices over 40 rows: the loop kernel copies and stores bytes (one
 * mask row per batch row, the last of repeated positions wins), LLVM and the interpreter. */
static void test_scatter_bool_loop(void **state)
{
    (void)state;
    enum { A = 3, B = 64, J = 40 };
    static int64_t idx[A * J];
    static uint8_t data[A * B], upd[A * J], out[A * B], ref[A * B];
    for (int e = 0; e < A * B; e++) data[e] = (uint8_t)(e % 5 == 0);
    for (int q = 0; q < A * J; q++) idx[q] = (q * 29) % B - (q % 7 == 0 ? B : 0), upd[q] = (uint8_t)(q % 3 != 0);
    memcpy(ref, data, sizeof ref);
    for (int q = 0; q < A * J; q++) ref[(q / J) * B + (idx[q] < 0 ? idx[q] + B : idx[q])] = upd[q];
    weft_graph *g = NULL;
    weft_value dv, iv, uv, y;
    assert_int_equal(weft_graph_create(&g), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "data", WEFT_TYPE_BOOL, 2, (int64_t[]){A, B}, &dv), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "idx", WEFT_TYPE_INT64, 2, (int64_t[]){A, J}, &iv), WEFT_OK);
    assert_int_equal(weft_graph_add_input(g, "upd", WEFT_TYPE_BOOL, 2, (int64_t[]){A, J}, &uv), WEFT_OK);
    weft_attr at[1] = {{.name = "axis", .kind = WEFT_ATTR_INT, .i = 1}};
    assert_int_equal(weft_graph_add_op(g, "ScatterElements", "sc", 3, (weft_value[]){dv, iv, uv}, 1, at, 1, &y), WEFT_OK);
    assert_int_equal(weft_graph_set_output(g, y, "y"), WEFT_OK);
    for (int t = 1; t <= 3; t++) {
        weft_model *m = compile_run(g, t);
        assert_int_equal(loop_kernels(m), 1);
        memset(out, 7, sizeof out);
        assert_int_equal(weft_model_run(m, (const void *[]){data, idx, upd}, (void *[]){out}), WEFT_OK);
        assert_memory_equal(out, ref, sizeof ref);
        weft_model_destroy(m);
    }
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scatter_axis0_repeats), cmocka_unit_test(test_scatter_axis1_expanded),
        cmocka_unit_test(test_scatter_plan_contents), cmocka_unit_test(test_scatter_bad),
        cmocka_unit_test(test_scatter_loop_kernel),
        cmocka_unit_test(test_scatter_nd_rows), cmocka_unit_test(test_scatter_bool_data),
        cmocka_unit_test(test_scatter_bool_loop),
    };
    return cmocka_run_group_tests_name("model_scatter_elements", tests, NULL, NULL);
}
