/* The loop-IR interpreter on hand-built loop IR: results with exact dtype semantics, and the
 * checks that make it a checker for lowering bugs (bounds, scoping, poisoned allocations). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/stmt.h"
#include "ir/tensor.h"
#include "targets/interp/interp.h"
#include "targets/target.h"

#define N_MEM 4

typedef struct fixture {
    weft_arena *a;
    const weft_target_ops *ops;
    weft_target *t;
    weft_kernel *k;
    void *mem[N_MEM]; /* argument buffers */
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    *state = fx;
    fx->a = weft_arena_create();
    fx->ops = weft_target_find("interp");
    if (!fx->a || !fx->ops || fx->ops->create(&fx->t) != WEFT_OK) return -1;
    for (int i = 0; i < N_MEM; i++)
        if (!(fx->mem[i] = calloc(1024, 8))) return -1;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    if (fx->ops) {
        fx->ops->kernel_destroy(fx->k);
        fx->ops->destroy(fx->t);
    }
    for (int i = 0; i < N_MEM; i++) free(fx->mem[i]);
    weft_arena_destroy(fx->a);
    free(fx);
    return 0;
}

/* Compiles f (replacing the fixture's kernel) and runs it on the fixture's buffers. */
static weft_status run(fixture *fx, const weft_loop_func *f)
{
    fx->ops->kernel_destroy(fx->k);
    fx->k = NULL;
    weft_status st = fx->ops->compile(fx->t, f, &fx->k);
    if (st != WEFT_OK) return st;
    return fx->ops->run(fx->k, fx->mem, NULL);
}

static weft_buffer *param(fixture *fx, const char *name, weft_dtype t, int64_t n, int index)
{
    return weft_buffer_new(fx->a, name, t, 1, &n, WEFT_SCOPE_GLOBAL, index);
}

static const weft_expr *I(fixture *fx, int64_t v) { return weft_i64(fx->a, v); }

static void assert_error_mentions(const char *s)
{
    const char *msg = weft_last_error();
    if (!strstr(msg, s)) fail_msg("error message '%s' does not mention '%s'", msg, s);
}

static void test_interp_registered_with_caps(void **state)
{
    fixture *fx = *state;
    weft_target_caps caps;
    fx->ops->caps(fx->t, &caps);
    assert_string_equal(fx->ops->name, "interp");
    assert_string_equal(caps.name, "interp");
    assert_int_equal(caps.vector_bits, 0);
    assert_int_equal(caps.vector_lanes_f32, 1);
    assert_int_equal(caps.max_threads, 1);
    assert_true(caps.scopes[WEFT_SCOPE_GLOBAL] && caps.scopes[WEFT_SCOPE_LOCAL]);
    assert_false(caps.scopes[WEFT_SCOPE_SHARED]);
}

/* C[i] = A[i] + B[i]*0.1 over 16 floats, in a vectorized loop. */
static void test_interp_elementwise_float32(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *A = param(fx, "A", WEFT_F32, 16, 0), *B = param(fx, "B", WEFT_F32, 16, 1), *C = param(fx, "C", WEFT_F32, 16, 2);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_stmt *body = weft_store(a, C, i, weft_add(a, weft_load(a, A, i), weft_mul(a, weft_load(a, B, i), weft_f32(a, 0.1))));
    const weft_buffer *params[] = {A, B, C};
    weft_loop_func f = {"add", 3, params, weft_for(a, i, I(fx, 0), I(fx, 16), WEFT_FOR_VECTORIZED, body)};
    float *pa = fx->mem[0], *pb = fx->mem[1], *pc = fx->mem[2];
    for (int x = 0; x < 16; x++) {
        pa[x] = (float)x / 3.0f;
        pb[x] = 1.0f + (float)x * 0.37f;
    }
    assert_int_equal(run(fx, &f), WEFT_OK);
    for (int x = 0; x < 16; x++) {
        float want = pa[x] + pb[x] * 0.1f;
        assert_true(pc[x] == want);
    }
}

/* C[i, j] = sum_k A[i, k]*B[k, j] for 8x8x8 with an init loop: exact against a float loop. */
static void test_interp_matmul_reduction(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    enum { M = 8 };
    weft_buffer *A = param(fx, "A", WEFT_F32, M * M, 0), *B = param(fx, "B", WEFT_F32, M * M, 1), *C = param(fx, "C", WEFT_F32, M * M, 2);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64), *k = weft_var(a, "k", WEFT_I64);
    const weft_expr *cij = weft_add(a, weft_mul(a, i, I(fx, M)), j);
    const weft_expr *prod = weft_mul(a, weft_load(a, A, weft_add(a, weft_mul(a, i, I(fx, M)), k)),
                                     weft_load(a, B, weft_add(a, weft_mul(a, k, I(fx, M)), j)));
    const weft_stmt *items[] = {
        weft_store(a, C, cij, weft_f32(a, 0.0)),
        weft_for(a, k, I(fx, 0), I(fx, M), WEFT_FOR_SERIAL, weft_store(a, C, cij, weft_add(a, weft_load(a, C, cij), prod))),
    };
    const weft_stmt *nest = weft_for(a, i, I(fx, 0), I(fx, M), WEFT_FOR_PARALLEL,
                                     weft_for(a, j, I(fx, 0), I(fx, M), WEFT_FOR_SERIAL, weft_seq(a, 2, items)));
    const weft_buffer *params[] = {A, B, C};
    weft_loop_func f = {"matmul", 3, params, nest};
    float *pa = fx->mem[0], *pb = fx->mem[1], *pc = fx->mem[2];
    for (int x = 0; x < M * M; x++) {
        pa[x] = sinf((float)x);
        pb[x] = cosf((float)x * 0.5f);
        pc[x] = 12345.0f;
    }
    assert_int_equal(run(fx, &f), WEFT_OK);
    for (int r = 0; r < M; r++)
        for (int c = 0; c < M; c++) {
            float acc = 0.0f;
            for (int x = 0; x < M; x++) acc = acc + pa[r * M + x] * pb[x * M + c];
            assert_true(pc[r * M + c] == acc);
        }
}

/* for i: allocate t[4]: { for j: t[j] = A[i*4 + j]*2; allocate u[1]: for j: { u[0] = t[3 - j];
 * B[i*4 + j] = u[0] } } -- rows reversed and doubled through two nested local buffers. */
static void test_interp_nested_allocate(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *A = param(fx, "A", WEFT_I32, 16, 0), *B = param(fx, "B", WEFT_I32, 16, 1);
    weft_buffer *t = weft_buffer_new(a, "t", WEFT_I32, 1, (int64_t[]){4}, WEFT_SCOPE_LOCAL, -1);
    weft_buffer *u = weft_buffer_new(a, "u", WEFT_I32, 1, (int64_t[]){1}, WEFT_SCOPE_LOCAL, -1);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *row = weft_add(a, weft_mul(a, i, I(fx, 4)), j);
    const weft_stmt *fill = weft_for(a, j, I(fx, 0), I(fx, 4), WEFT_FOR_UNROLLED,
                                     weft_store(a, t, j, weft_mul(a, weft_load(a, A, row), weft_int(a, WEFT_I32, 2))));
    const weft_stmt *copy_items[] = {weft_store(a, u, I(fx, 0), weft_load(a, t, weft_sub(a, I(fx, 3), j))),
                                     weft_store(a, B, row, weft_load(a, u, I(fx, 0)))};
    const weft_stmt *copy = weft_allocate(a, u, weft_for(a, j, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_seq(a, 2, copy_items)));
    const weft_stmt *items[] = {fill, copy};
    const weft_buffer *params[] = {A, B};
    weft_loop_func f = {"rev", 2, params,
                        weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_allocate(a, t, weft_seq(a, 2, items)))};
    int32_t *pa = fx->mem[0], *pb = fx->mem[1];
    for (int x = 0; x < 16; x++) pa[x] = x;
    assert_int_equal(run(fx, &f), WEFT_OK);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) assert_int_equal(pb[r * 4 + c], 2 * (r * 4 + 3 - c));
}

/* Reading an allocated buffer before writing it gives the poison pattern (NaN for floats). */
static void test_interp_allocate_is_poisoned(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_F32, 1, 0);
    weft_buffer *t = weft_buffer_new(a, "t", WEFT_F32, 1, (int64_t[]){2}, WEFT_SCOPE_LOCAL, -1);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"poison", 1, params, weft_allocate(a, t, weft_store(a, C, I(fx, 0), weft_load(a, t, I(fx, 1))))};
    ((float *)fx->mem[0])[0] = 1.0f;
    assert_int_equal(run(fx, &f), WEFT_OK);
    assert_true(isnan(((float *)fx->mem[0])[0]));
}

/* For v in [-7, 8): D = floordiv(v, 3), M = floormod(v, 3), T = v/3 (truncating), and the same
 * with divisor -3. */
static void test_interp_floordiv_floormod_negative(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *D = param(fx, "D", WEFT_I64, 30, 0), *M = param(fx, "M", WEFT_I64, 30, 1), *T = param(fx, "T", WEFT_I64, 30, 2);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *s = weft_var(a, "s", WEFT_I64);
    const weft_expr *v = weft_sub(a, i, I(fx, 7));
    const weft_expr *d = weft_sub(a, I(fx, 3), weft_mul(a, s, I(fx, 6))); /* s=0: 3, s=1: -3 */
    const weft_expr *at = weft_add(a, weft_mul(a, s, I(fx, 15)), i);
    const weft_stmt *items[] = {weft_store(a, D, at, weft_floordiv(a, v, d)), weft_store(a, M, at, weft_floormod(a, v, d)),
                                weft_store(a, T, at, weft_div(a, v, d))};
    const weft_stmt *nest = weft_for(a, s, I(fx, 0), I(fx, 2), WEFT_FOR_SERIAL,
                                     weft_for(a, i, I(fx, 0), I(fx, 15), WEFT_FOR_SERIAL, weft_seq(a, 3, items)));
    const weft_buffer *params[] = {D, M, T};
    weft_loop_func f = {"fdiv", 3, params, nest};
    assert_int_equal(run(fx, &f), WEFT_OK);
    int64_t *pd = fx->mem[0], *pm = fx->mem[1], *pt = fx->mem[2];
    for (int sv = 0; sv < 2; sv++)
        for (int x = 0; x < 15; x++) {
            int64_t val = x - 7, div = sv ? -3 : 3, q = (int64_t)floor((double)val / (double)div);
            assert_int_equal(pd[sv * 15 + x], q);
            assert_int_equal(pm[sv * 15 + x], val - q * div);
            assert_int_equal(pt[sv * 15 + x], val / div);
        }
    assert_int_equal(pd[0], -3);  /* floordiv(-7, 3) */
    assert_int_equal(pm[0], 2);   /* floormod(-7, 3) */
    assert_int_equal(pt[0], -2);  /* -7 / 3 */
    assert_int_equal(pm[15], -1); /* floormod(-7, -3) */
}

/* C[i] = A[i]*65536 + 2147483647 in int32 wraps like two's complement. */
static void test_interp_int32_wraps(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *A = param(fx, "A", WEFT_I32, 8, 0), *C = param(fx, "C", WEFT_I32, 8, 1);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_expr *val = weft_add(a, weft_mul(a, weft_load(a, A, i), weft_int(a, WEFT_I32, 65536)), weft_int(a, WEFT_I32, INT32_MAX));
    const weft_buffer *params[] = {A, C};
    weft_loop_func f = {"wrap", 2, params, weft_for(a, i, I(fx, 0), I(fx, 8), WEFT_FOR_SERIAL, weft_store(a, C, i, val))};
    int32_t *pa = fx->mem[0], *pc = fx->mem[1];
    const int32_t in[8] = {0, 1, -1, 32767, 32768, -32768, 65536, 123456};
    memcpy(pa, in, sizeof in);
    assert_int_equal(run(fx, &f), WEFT_OK);
    for (int x = 0; x < 8; x++) {
        int32_t want = (int32_t)((uint32_t)in[x] * 65536u + (uint32_t)INT32_MAX);
        assert_int_equal(pc[x], want);
    }
    assert_int_equal(pc[1], INT32_MIN + 65535);
}

/* exp, sigmoid, rsqrt, tanh, erf, pow and casts match the float libm calls exactly. */
static void test_interp_intrinsics_and_casts(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *X = param(fx, "X", WEFT_F32, 8, 0), *Y = param(fx, "Y", WEFT_F32, 48, 1), *Z = param(fx, "Z", WEFT_I32, 8, 2);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *x = weft_load(a, X, i);
    const weft_expr *pw[] = {x, weft_f32(a, 1.5)};
    const weft_expr *vals[] = {weft_call1(a, WEFT_INTRIN_EXP, x), weft_call1(a, WEFT_INTRIN_SIGMOID, x),
                               weft_call1(a, WEFT_INTRIN_RSQRT, weft_call1(a, WEFT_INTRIN_FABS, x)),
                               weft_call1(a, WEFT_INTRIN_TANH, x), weft_call1(a, WEFT_INTRIN_ERF, x),
                               weft_call(a, WEFT_INTRIN_POW, 2, pw)};
    const weft_stmt *items[7];
    for (int v = 0; v < 6; v++) items[v] = weft_store(a, Y, weft_add(a, weft_mul(a, i, I(fx, 6)), I(fx, v)), vals[v]);
    items[6] = weft_store(a, Z, i, weft_cast(a, WEFT_I32, weft_mul(a, x, weft_f32(a, 10.0))));
    const weft_buffer *params[] = {X, Y, Z};
    weft_loop_func f = {"math", 3, params, weft_for(a, i, I(fx, 0), I(fx, 8), WEFT_FOR_SERIAL, weft_seq(a, 7, items))};
    float *px = fx->mem[0], *py = fx->mem[1];
    int32_t *pz = fx->mem[2];
    const float in[8] = {-2.5f, -1.0f, -0.26f, 0.0f, 0.3f, 1.0f, 2.0f, 7.75f};
    memcpy(px, in, sizeof in);
    assert_int_equal(run(fx, &f), WEFT_OK);
    for (int v = 0; v < 8; v++) {
        float t = in[v];
        assert_true(py[v * 6 + 0] == expf(t));
        assert_true(py[v * 6 + 1] == 1.0f / (1.0f + expf(-t)));
        assert_true(py[v * 6 + 2] == 1.0f / sqrtf(fabsf(t)));
        assert_true(py[v * 6 + 3] == tanhf(t));
        assert_true(py[v * 6 + 4] == erff(t));
        float p = powf(t, 1.5f);
        assert_true(py[v * 6 + 5] == p || (isnan(p) && isnan(py[v * 6 + 5])));
        assert_int_equal(pz[v], (int32_t)(t * 10.0f));
    }
    assert_int_equal(pz[2], -2); /* truncation toward zero */
}

static void test_interp_out_of_bounds_store_is_internal_error(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "Cout", WEFT_F32, 16, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"oob", 1, params,
                        weft_for(a, i, I(fx, 0), I(fx, 17), WEFT_FOR_SERIAL, weft_store(a, C, i, weft_f32(a, 1.0)))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("Cout");
    assert_error_mentions("index 16");
    assert_error_mentions("size 16");
    assert_error_mentions("store");
    assert_true(((float *)fx->mem[0])[15] == 1.0f); /* everything before the bad store ran */
}

static void test_interp_out_of_bounds_load_in_allocated_buffer(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_F32, 4, 0);
    weft_buffer *t = weft_buffer_new(a, "tmp", WEFT_F32, 1, (int64_t[]){4}, WEFT_SCOPE_LOCAL, -1);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_buffer *params[] = {C};
    const weft_stmt *body = weft_store(a, C, i, weft_load(a, t, weft_sub(a, i, I(fx, 1))));
    weft_loop_func f = {"oob_load", 1, params, weft_allocate(a, t, weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, body))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("load from buffer tmp");
    assert_error_mentions("index -1");
}

/* Both select arms are evaluated, as in compiled code: a guarded out-of-bounds read is caught. */
static void test_interp_select_evaluates_both_arms(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *A = param(fx, "A", WEFT_F32, 8, 0), *C = param(fx, "C", WEFT_F32, 8, 1);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_expr *guarded = weft_select(a, weft_cmp(a, WEFT_EXPR_GT, i, I(fx, 0)), weft_load(a, A, weft_sub(a, i, I(fx, 1))),
                                           weft_f32(a, 0.0));
    const weft_buffer *params[] = {A, C};
    weft_loop_func f = {"sel", 2, params, weft_for(a, i, I(fx, 0), I(fx, 8), WEFT_FOR_SERIAL, weft_store(a, C, i, guarded))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("index -1");
}

static void test_interp_integer_division_by_zero_is_internal_error(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_I64, 4, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"divz", 1, params,
                        weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_store(a, C, i, weft_floordiv(a, I(fx, 8), weft_sub(a, i, I(fx, 2)))))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("by zero");
    assert_int_equal(((int64_t *)fx->mem[0])[1], -8);
}

static void test_interp_rejects_variable_outside_its_loop(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_F32, 4, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *stray = weft_var(a, "stray", WEFT_I64);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"scope", 1, params,
                        weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_store(a, C, stray, weft_f32(a, 1.0)))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("stray");
    assert_null(fx->k);
}

static void test_interp_rejects_tload(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_tensor *A = weft_te_placeholder(a, "Atensor", WEFT_F32, 1, (int64_t[]){4});
    weft_buffer *C = param(fx, "C", WEFT_F32, 4, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"tl", 1, params,
                        weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_store(a, C, i, weft_te_at(a, A, i)))};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("TLOAD");
    assert_error_mentions("Atensor");
}

static void test_interp_rejects_buffer_outside_its_allocate(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_F32, 4, 0);
    weft_buffer *t = weft_buffer_new(a, "scratch", WEFT_F32, 1, (int64_t[]){4}, WEFT_SCOPE_LOCAL, -1);
    const weft_buffer *params[] = {C};
    const weft_stmt *items[] = {weft_allocate(a, t, weft_store(a, t, I(fx, 0), weft_f32(a, 1.0))),
                                weft_store(a, C, I(fx, 0), weft_load(a, t, I(fx, 0)))};
    weft_loop_func f = {"escape", 1, params, weft_seq(a, 2, items)};
    assert_int_equal(run(fx, &f), WEFT_ERR_INTERNAL);
    assert_error_mentions("scratch");
    assert_error_mentions("outside its allocate");
}

static void test_interp_null_argument_is_invalid(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_F32, 4, 0);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"null", 1, params, weft_store(a, C, I(fx, 0), weft_f32(a, 1.0))};
    assert_int_equal(fx->ops->compile(fx->t, &f, &fx->k), WEFT_OK);
    void *args[] = {NULL};
    assert_int_equal(fx->ops->run(fx->k, args, NULL), WEFT_ERR_INVALID_ARG);
    assert_error_mentions("argument 0");
}

static void test_interp_run_helper_and_dump(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_I64, 4, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64);
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"iota", 1, params, weft_for(a, i, I(fx, 0), I(fx, 4), WEFT_FOR_SERIAL, weft_store(a, C, i, weft_mul(a, i, i)))};
    assert_int_equal(weft_interp_run(&f, fx->mem), WEFT_OK);
    assert_int_equal(((int64_t *)fx->mem[0])[3], 9);
    char *text = NULL;
    assert_int_equal(fx->ops->dump(fx->t, &f, WEFT_DUMP_IR, &text), WEFT_OK);
    int found = text && strstr(text, "C[i] = i*i") != NULL;
    free(text);
    assert_true(found);
}

/* The work budget: a 1000 x 1000 nest (1001000 iterations) stops with WEFT_ERR_TIMEOUT under a
 * budget of 5000; one of 1001000 runs it whole, as weft_interp_run does. */
static void test_interp_budget_stops_long_runs(void **state)
{
    fixture *fx = *state;
    weft_arena *a = fx->a;
    weft_buffer *C = param(fx, "C", WEFT_I64, 4, 0);
    const weft_expr *i = weft_var(a, "i", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *c0 = I(fx, 0);
    const weft_stmt *inc = weft_store(a, C, c0, weft_add(a, weft_load(a, C, c0), I(fx, 1)));
    const weft_buffer *params[] = {C};
    weft_loop_func f = {"count", 1, params,
                        weft_for(a, i, c0, I(fx, 1000), WEFT_FOR_SERIAL, weft_for(a, j, c0, I(fx, 1000), WEFT_FOR_SERIAL, inc))};
    int64_t *pc = fx->mem[0];
    pc[0] = 0;
    assert_int_equal(weft_interp_run_budget(&f, fx->mem, 5000), WEFT_ERR_TIMEOUT);
    assert_error_mentions("budget");
    assert_true(pc[0] < 5000);
    pc[0] = 0;
    assert_int_equal(weft_interp_run_budget(&f, fx->mem, 1001000), WEFT_OK);
    assert_int_equal(pc[0], 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_interp_registered_with_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_elementwise_float32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_matmul_reduction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_nested_allocate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_allocate_is_poisoned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_floordiv_floormod_negative, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_int32_wraps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_intrinsics_and_casts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_out_of_bounds_store_is_internal_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_out_of_bounds_load_in_allocated_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_select_evaluates_both_arms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_integer_division_by_zero_is_internal_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_rejects_variable_outside_its_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_rejects_tload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_rejects_buffer_outside_its_allocate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_null_argument_is_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_run_helper_and_dump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interp_budget_stops_long_runs, setup, teardown),
    };
    return cmocka_run_group_tests_name("targets_interp", tests, NULL, NULL);
}
