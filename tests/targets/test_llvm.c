/* The LLVM CPU target: loop IR built by hand, JIT-compiled, run, and compared with plain C.
 * Covers scalar and widened (VECTORIZED) code paths, the register-tile matmul and its assembly,
 * parallel outlining with a 2-thread pool, integer floor division, casts, intrinsics, gathers,
 * max reductions, large ALLOCATEs, and the error paths. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ir/tensor.h"
#include "runtime/runtime.h"
#include "targets/target.h"
#include "targets/llvm/llvm_test.h" /* slow_gather, set both ways on a target of its own */

static const weft_target_ops *L = &weft_target_llvm_ops;
static weft_target *T;

enum { MAX_MEM = 48, MAX_KERNELS = 16 };

typedef struct fx {
    weft_arena *a;
    void *mem[MAX_MEM];
    int n_mem;
    weft_kernel *k[MAX_KERNELS];
    int n_k;
    weft_threadpool *pool;
    char *text;
} fx;

static int group_setup(void **state)
{
    (void)state;
    return L->create(&T) == WEFT_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    L->destroy(T);
    T = NULL;
    return 0;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->a = weft_arena_create();
    *state = f;
    return f->a ? 0 : -1;
}

static int teardown(void **state)
{
    fx *f = *state;
    for (int i = 0; i < f->n_k; i++) L->kernel_destroy(f->k[i]);
    for (int i = 0; i < f->n_mem; i++) free(f->mem[i]);
    weft_threadpool_destroy(f->pool);
    free(f->text);
    weft_arena_destroy(f->a);
    free(f);
    return 0;
}

/* Zeroed, 64-byte aligned memory owned by the fixture. */
static void *mem(fx *f, size_t bytes)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    assert_non_null(p);
    memset(p, 0, n ? n : 64);
    assert_true(f->n_mem < MAX_MEM);
    f->mem[f->n_mem++] = p;
    return p;
}

static const weft_buffer *buf(fx *f, const char *name, weft_dtype t, int64_t n, int param)
{
    const weft_buffer *b = weft_buffer_new(f->a, name, t, 1, &n, param >= 0 ? WEFT_SCOPE_GLOBAL : WEFT_SCOPE_LOCAL, param);
    assert_non_null(b);
    return b;
}

static weft_loop_func *func(fx *f, const char *name, int n, const weft_buffer *const *params, const weft_stmt *body)
{
    assert_non_null(body);
    weft_loop_func *lf = weft_arena_alloc(f->a, sizeof *lf);
    const weft_buffer **ps = weft_arena_alloc(f->a, sizeof *ps * (size_t)(n ? n : 1));
    assert_non_null(lf);
    assert_non_null(ps);
    memcpy(ps, params, sizeof *ps * (size_t)n);
    lf->name = name;
    lf->n_params = n;
    lf->params = ps;
    lf->body = body;
    return lf;
}

static weft_kernel *compile(fx *f, const weft_loop_func *lf)
{
    weft_kernel *k = NULL;
    weft_status st = L->compile(T, lf, &k);
    if (st != WEFT_OK) fprintf(stderr, "compile %s: %s: %s\n", lf->name, weft_status_name(st), weft_last_error());
    assert_int_equal(st, WEFT_OK);
    assert_non_null(k);
    assert_true(f->n_k < MAX_KERNELS);
    f->k[f->n_k++] = k;
    return k;
}

static void run(weft_kernel *k, void *const *args, weft_threadpool *pool)
{
    weft_exec ex = {.pool = pool};
    assert_int_equal(L->run(k, args, &ex), WEFT_OK);
}

static void assert_close(const float *got, const float *want, int n, double rel, const char *what)
{
    for (int i = 0; i < n; i++) {
        double tol = rel * fmax(1.0, fabs((double)want[i]));
        if (!(fabs((double)got[i] - (double)want[i]) <= tol) && !(isnan(got[i]) && isnan(want[i]))) {
            fail_msg("%s[%d]: got %.9g, want %.9g", what, i, (double)got[i], (double)want[i]);
        }
    }
}

#define V(name) weft_var(f->a, name, WEFT_I64)
#define I(v) weft_i64(f->a, v)
#define LD(b, i) weft_load(f->a, b, i)

/* ---- caps ---- */

static void test_caps_report_host_vector_width(void **state)
{
    (void)state;
    weft_target_caps c;
    L->caps(T, &c);
    assert_string_equal(c.name, "llvm");
    assert_true(c.vector_bits == 128 || c.vector_bits == 256 || c.vector_bits == 512);
    assert_int_equal(c.vector_lanes_f32, c.vector_bits / 32);
    assert_true(c.max_threads >= 1);
    assert_false(c.has_thread_binding);
    assert_true(c.scopes[WEFT_SCOPE_GLOBAL] && c.scopes[WEFT_SCOPE_LOCAL]);
    assert_true(strlen(c.cpu) > 0);
    if (strstr(c.features, "+avx512f,") || strstr(c.features, "+avx512f")) assert_int_equal(c.vector_bits, 512);
}

/* ---- elementwise ---- */

/* C[i] = A[i] + B[i] with i = i0*16 + ii, ii VECTORIZED; n not a multiple of 16 adds an IF
 * guard, which takes the serial fallback. */
static weft_loop_func *add_func(fx *f, int64_t n, bool guard)
{
    const weft_buffer *A = buf(f, "A", WEFT_F32, n, 0), *B = buf(f, "B", WEFT_F32, n, 1), *C = buf(f, "C", WEFT_F32, n, 2);
    const weft_expr *i0 = V("i0"), *ii = V("ii");
    const weft_expr *i = weft_add(f->a, weft_mul(f->a, i0, I(16)), ii);
    const weft_stmt *st = weft_store(f->a, C, i, weft_add(f->a, LD(A, i), LD(B, i)));
    if (guard) st = weft_if(f->a, weft_cmp(f->a, WEFT_EXPR_LT, i, I(n)), st, NULL);
    const weft_stmt *body = weft_for(f->a, i0, I(0), I((n + 15) / 16), WEFT_FOR_SERIAL,
                                     weft_for(f->a, ii, I(0), I(16), WEFT_FOR_VECTORIZED, st));
    const weft_buffer *ps[] = {A, B, C};
    return func(f, guard ? "add_tail" : "add", 3, ps, body);
}

static void check_add(fx *f, int64_t n, bool guard)
{
    int64_t cap = (n + 15) / 16 * 16;
    float *a = mem(f, sizeof(float) * (size_t)cap), *b = mem(f, sizeof(float) * (size_t)cap);
    float *c = mem(f, sizeof(float) * (size_t)cap), *want = mem(f, sizeof(float) * (size_t)cap);
    for (int64_t i = 0; i < cap; i++) {
        a[i] = (float)i * 0.5f - 3.0f;
        b[i] = (float)(i % 7) * 1.25f;
        c[i] = -999.0f;
        want[i] = i < n ? a[i] + b[i] : -999.0f;
    }
    weft_kernel *k = compile(f, add_func(f, n, guard));
    void *args[] = {a, b, c};
    run(k, args, NULL);
    assert_close(c, want, (int)cap, 0, "C");
}

static void test_add_vectorized(void **state) { check_add(*state, 64, false); }
/* The guard of the last partial vector becomes a lane mask: masked loads and stores, nothing
 * written past n (check_add's want keeps -999 there). */
static void test_add_tail_guard_is_masked_vector_code(void **state)
{
    fx *f = *state;
    check_add(f, 100, true);
    char *ir = NULL;
    assert_int_equal(L->dump(T, add_func(f, 100, true), WEFT_DUMP_IR, &ir), WEFT_OK);
    assert_non_null(strstr(ir, "llvm.masked.store"));
    assert_non_null(strstr(ir, "llvm.masked.load"));
    free(ir);
}

/* WEFT_CPU: another CPU of the host's ISA family, or a clear refusal. */
static void test_cpu_selection_from_environment(void **state)
{
    (void)state;
    weft_target_caps host;
    L->caps(T, &host);
    const char *prev = getenv("WEFT_CPU");
    char *saved = prev ? strdup(prev) : NULL;
    weft_target *t = NULL;
    weft_target_caps c;
    if (host.vector_bits >= 256 && strstr(host.features, "+avx2") && strstr(host.features, "+fma")) {
        setenv("WEFT_CPU", "haswell", 1);
        assert_int_equal(L->create(&t), WEFT_OK);
        L->caps(t, &c);
        assert_string_equal(c.cpu, "haswell");
        assert_int_equal(c.vector_bits, 256);
        assert_int_equal(c.vector_regs, 16);
        assert_null(strstr(c.features, "+avx512f"));
        assert_true(c.l1d_bytes > 0 && c.l2_bytes >= c.l1d_bytes);
        L->destroy(t);
        t = NULL;
    }
    if (!strstr(host.features, "+avx512f")) {
        setenv("WEFT_CPU", "znver4", 1); /* above the host's level: refused, naming it */
        assert_int_equal(L->create(&t), WEFT_ERR_UNAVAILABLE);
        assert_non_null(strstr(weft_last_error(), "znver4"));
        L->destroy(t);
        t = NULL;
    } else {
        assert_int_equal(host.vector_regs, 32);
    }
    const char *bad[] = {"pentium-x", "haswell:avx2", "haswell:+nosuchfeature", ":+avx2", "haswell:+a;b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("WEFT_CPU", bad[i], 1);
        assert_int_equal(L->create(&t), WEFT_ERR_INVALID_ARG);
        assert_non_null(strstr(weft_last_error(), "WEFT_CPU"));
        L->destroy(t);
        t = NULL;
    }
    setenv("WEFT_CPU", "host", 1);
    assert_int_equal(L->create(&t), WEFT_OK);
    L->caps(t, &c);
    assert_int_equal(c.vector_bits, host.vector_bits);
    L->destroy(t);
    if (saved) setenv("WEFT_CPU", saved, 1);
    else unsetenv("WEFT_CPU");
    free(saved);
}

/* ---- matmul register tile ---- */

enum { TR = 6, TC = 32 };

/* C = A x B with a TRxTC register tile in a local buffer Cl:
 *   for i0: for j0: alloc Cl: {ii unrolled, jj vectorized: Cl = 0;
 *     for k: ii unrolled: jj vectorized: Cl[ii*TC+jj] += A[(i0*TR+ii)*K + k] * B[k*N + j0*TC+jj];
 *     ii, jj: C[...] = Cl[...]} */
static weft_loop_func *matmul_func(fx *f, int64_t M, int64_t N, int64_t K, weft_for_kind outer)
{
    weft_arena *a = f->a;
    const weft_buffer *A = buf(f, "A", WEFT_F32, M * K, 0), *B = buf(f, "B", WEFT_F32, K * N, 1);
    const weft_buffer *C = buf(f, "C", WEFT_F32, M * N, 2), *Cl = buf(f, "Cl", WEFT_F32, TR * TC, -1);
    const weft_expr *i0 = V("i0"), *j0 = V("j0"), *k = V("k");
    const weft_expr *ii[3] = {V("ii"), V("ii"), V("ii")}, *jj[3] = {V("jj"), V("jj"), V("jj")};
    const weft_expr *cl[3], *row[3], *col[3];
    for (int s = 0; s < 3; s++) {
        cl[s] = weft_add(a, weft_mul(a, ii[s], I(TC)), jj[s]);
        row[s] = weft_add(a, weft_mul(a, i0, I(TR)), ii[s]);
        col[s] = weft_add(a, weft_mul(a, j0, I(TC)), jj[s]);
    }
    const weft_stmt *init = weft_store(a, Cl, cl[0], weft_f32(a, 0.0));
    const weft_expr *prod = weft_mul(a, LD(A, weft_add(a, weft_mul(a, row[1], I(K)), k)),
                                     LD(B, weft_add(a, weft_mul(a, k, I(N)), col[1])));
    const weft_stmt *upd = weft_store(a, Cl, cl[1], weft_add(a, LD(Cl, cl[1]), prod));
    const weft_stmt *wb = weft_store(a, C, weft_add(a, weft_mul(a, row[2], I(N)), col[2]), LD(Cl, cl[2]));
    const weft_stmt *tile[3];
    const weft_stmt *inner[3] = {init, upd, wb};
    for (int s = 0; s < 3; s++)
        tile[s] = weft_for(a, ii[s], I(0), I(TR), WEFT_FOR_UNROLLED,
                           weft_for(a, jj[s], I(0), I(TC), WEFT_FOR_VECTORIZED, inner[s]));
    tile[1] = weft_for(a, k, I(0), I(K), WEFT_FOR_SERIAL, tile[1]);
    const weft_stmt *body = weft_allocate(a, Cl, weft_seq(a, 3, tile));
    body = weft_for(a, i0, I(0), I(M / TR), outer, weft_for(a, j0, I(0), I(N / TC), WEFT_FOR_SERIAL, body));
    const weft_buffer *ps[] = {A, B, C};
    return func(f, "matmul", 3, ps, body);
}

static void check_matmul(fx *f, int64_t M, int64_t N, int64_t K, weft_for_kind outer, weft_threadpool *pool)
{
    float *A = mem(f, sizeof(float) * (size_t)(M * K)), *B = mem(f, sizeof(float) * (size_t)(K * N));
    float *C = mem(f, sizeof(float) * (size_t)(M * N)), *W = mem(f, sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)((i * 5) % 11) / 11.0f - 0.4f;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += (double)A[i * K + k] * B[k * N + j];
            W[i * N + j] = (float)s;
        }
    weft_kernel *k = compile(f, matmul_func(f, M, N, K, outer));
    void *args[] = {A, B, C};
    run(k, args, pool);
    assert_close(C, W, (int)(M * N), 1e-4, "C");
}

static void test_matmul_register_tile(void **state) { check_matmul(*state, 12, 64, 37, WEFT_FOR_SERIAL, NULL); }

static void test_matmul_parallel_two_threads(void **state)
{
    fx *f = *state;
    assert_int_equal(weft_threadpool_create(2, &f->pool), WEFT_OK);
    check_matmul(f, 24, 96, 50, WEFT_FOR_PARALLEL, f->pool);
}

static void test_dump_asm_matmul_uses_zmm_fma(void **state)
{
    fx *f = *state;
    weft_target_caps c;
    L->caps(T, &c);
    assert_int_equal(L->dump(T, matmul_func(f, 12, 64, 256, WEFT_FOR_SERIAL), WEFT_DUMP_ASM, &f->text), WEFT_OK);
    assert_non_null(f->text);
    if (getenv("WEFT_TEST_SHOW_ASM")) fputs(f->text, stderr);
    assert_non_null(strstr(f->text, "vfmadd"));
    if (c.vector_bits == 512) assert_non_null(strstr(f->text, "zmm"));
    free(f->text);
    f->text = NULL;
    assert_int_equal(L->dump(T, matmul_func(f, 12, 64, 256, WEFT_FOR_SERIAL), WEFT_DUMP_IR, &f->text), WEFT_OK);
    assert_non_null(strstr(f->text, "define"));
    assert_non_null(strstr(f->text, "<32 x float>"));
}

/* ---- parallel ---- */

/* for i PARALLEL 37: alloc tmp[8] {j vec 8: tmp[j] = A[i*8+j]*2;  j serial: C[i*8+j] = tmp[j]+1}
 * then for p PARALLEL 8: for q PARALLEL 8 (runs serially): D[p*8+q] = cast(p*8+q). */
static void test_parallel_outlined_with_local_buffer(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    enum { NI = 37 };
    const weft_buffer *A = buf(f, "A", WEFT_F32, NI * 8, 0), *C = buf(f, "C", WEFT_F32, NI * 8, 1);
    const weft_buffer *D = buf(f, "D", WEFT_F32, 64, 2), *tmp = buf(f, "tmp", WEFT_F32, 8, -1);
    const weft_expr *i = V("i"), *j1 = V("j"), *j2 = V("j"), *p = V("p"), *q = V("q");
    const weft_stmt *s1 = weft_for(a, j1, I(0), I(8), WEFT_FOR_VECTORIZED,
                                   weft_store(a, tmp, j1, weft_mul(a, LD(A, weft_add(a, weft_mul(a, i, I(8)), j1)), weft_f32(a, 2))));
    const weft_stmt *s2 = weft_for(a, j2, I(0), I(8), WEFT_FOR_SERIAL,
                                   weft_store(a, C, weft_add(a, weft_mul(a, i, I(8)), j2), weft_add(a, LD(tmp, j2), weft_f32(a, 1))));
    const weft_stmt *two[] = {s1, s2};
    const weft_stmt *l1 = weft_for(a, i, I(0), I(NI), WEFT_FOR_PARALLEL, weft_allocate(a, tmp, weft_seq(a, 2, two)));
    const weft_expr *pq = weft_add(a, weft_mul(a, p, I(8)), q);
    const weft_stmt *l2 = weft_for(a, p, I(0), I(8), WEFT_FOR_PARALLEL,
                                   weft_for(a, q, I(0), I(8), WEFT_FOR_PARALLEL, weft_store(a, D, pq, weft_cast(a, WEFT_F32, pq))));
    const weft_stmt *both[] = {l1, l2};
    const weft_buffer *ps[] = {A, C, D};
    weft_kernel *k = compile(f, func(f, "par", 3, ps, weft_seq(a, 2, both)));
    float *av = mem(f, sizeof(float) * NI * 8), *cv = mem(f, sizeof(float) * NI * 8), *dv = mem(f, sizeof(float) * 64);
    float *want = mem(f, sizeof(float) * NI * 8), *dw = mem(f, sizeof(float) * 64);
    for (int n = 0; n < NI * 8; n++) {
        av[n] = (float)n * 0.25f;
        want[n] = av[n] * 2 + 1;
    }
    for (int n = 0; n < 64; n++) dw[n] = (float)n;
    assert_int_equal(weft_threadpool_create(2, &f->pool), WEFT_OK);
    void *args[] = {av, cv, dv};
    for (int rep = 0; rep < 3; rep++) {
        memset(cv, 0, sizeof(float) * NI * 8);
        memset(dv, 0, sizeof(float) * 64);
        run(k, args, rep == 2 ? NULL : f->pool);
        assert_close(cv, want, NI * 8, 0, "C");
        assert_close(dv, dw, 64, 0, "D");
    }
}

/* Rows of an odd width (7) in a local buffer: a row read where the loop does not store to the
 * buffer, in loops of more than 100 trips, loads 8 lanes (the allocation's slack covers the
 * last row's extra lane) and drops one; the accumulator row the loop stores stays a
 * <7 x float> access (LLVM keeps it in registers).
 * for c < 3: alloc P[49] { y, x vec 7: P[y*7+x] = A[c*49+y*7+x]*2;
 *                          y, x vec 7: P[y*7+x] = P[y*7+x] + 0.5;
 *                          r < 16, y, x vec 7: C[c*49+y*7+x] = P[y*7+x] + 1 } */
static void test_odd_rows_of_local_buffer_read_as_power_of_two(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    enum { NC = 3, W = 7, NP = W * W };
    const weft_buffer *A = buf(f, "A", WEFT_F32, NC * NP, 0), *C = buf(f, "C", WEFT_F32, NC * NP, 1);
    const weft_buffer *P = buf(f, "P", WEFT_F32, NP, -1);
    const weft_expr *c = V("c");
    const weft_stmt *nest[3];
    for (int k = 0; k < 3; k++) {
        const weft_expr *y = V("y"), *x = V("x");
        const weft_expr *px = weft_add(a, weft_mul(a, y, I(W)), x), *gx = weft_add(a, weft_mul(a, c, I(NP)), px);
        const weft_stmt *st = k == 0   ? weft_store(a, P, px, weft_mul(a, LD(A, gx), weft_f32(a, 2)))
                              : k == 1 ? weft_store(a, P, px, weft_add(a, LD(P, px), weft_f32(a, 0.5)))
                                       : weft_store(a, C, gx, weft_add(a, LD(P, px), weft_f32(a, 1)));
        nest[k] = weft_for(a, y, I(0), I(W), WEFT_FOR_SERIAL, weft_for(a, x, I(0), I(W), WEFT_FOR_VECTORIZED, st));
        if (k == 2) nest[k] = weft_for(a, V("r"), I(0), I(16), WEFT_FOR_SERIAL, nest[k]);
    }
    const weft_stmt *body = weft_for(a, c, I(0), I(NC), WEFT_FOR_SERIAL, weft_allocate(a, P, weft_seq(a, 3, nest)));
    const weft_buffer *ps[] = {A, C};
    const weft_loop_func *lf = func(f, "odd_rows", 2, ps, body);
    assert_int_equal(L->dump(T, lf, WEFT_DUMP_IR, &f->text), WEFT_OK);
    if (getenv("WEFT_TEST_SHOW_IR")) fputs(f->text, stderr);
    assert_non_null(strstr(f->text, "load <8 x float>"));
    assert_non_null(strstr(f->text, "load <7 x float>"));
    free(f->text);
    f->text = NULL;
    weft_kernel *k = compile(f, lf);
    float *av = mem(f, sizeof(float) * NC * NP), *cv = mem(f, sizeof(float) * NC * NP);
    float *want = mem(f, sizeof(float) * NC * NP);
    for (int n = 0; n < NC * NP; n++) {
        av[n] = (float)n * 0.25f - 3;
        want[n] = av[n] * 2 + 1.5f;
    }
    void *args[] = {av, cv};
    run(k, args, NULL);
    assert_close(cv, want, NC * NP, 0, "C");
}

/* A guarded vector loop (tiles of tl over 322 outputs: the last has 2 live lanes) reading a
 * local buffer P of 324 floats at x and x + 2: with tl = 8 the last tile's lanes reach index
 * 329, past P's end but inside its 64-byte slack (16 floats, zeroed with P), so the reads are
 * plain vector loads, not masked; with tl = 32 they reach 353, past the slack, and stay
 * masked. The values are exact either way (C[i] = A[i] + A[i + 2]). */
static void check_guarded_slack_read(fx *f, int64_t tl, bool want_masked)
{
    weft_arena *a = f->a;
    enum { NP = 324, NO = 322, OFF = 2 };
    const weft_buffer *A = buf(f, "A", WEFT_F32, NP, 0), *C = buf(f, "C", WEFT_F32, NO, 1);
    const weft_buffer *P = buf(f, "P", WEFT_F32, NP, -1);
    const weft_expr *i = V("i"), *t = V("t"), *x = V("x");
    const weft_expr *o = weft_add(a, weft_mul(a, t, I(tl)), x);
    const weft_stmt *fill = weft_for(a, i, I(0), I(NP), WEFT_FOR_SERIAL, weft_store(a, P, i, LD(A, i)));
    const weft_expr *val = weft_add(a, LD(P, o), LD(P, weft_add(a, o, I(OFF))));
    const weft_stmt *use = weft_for(a, t, I(0), I((NO + tl - 1) / tl), WEFT_FOR_SERIAL,
                                    weft_for(a, x, I(0), I(tl), WEFT_FOR_VECTORIZED,
                                             weft_if(a, weft_cmp(a, WEFT_EXPR_LT, o, I(NO)), weft_store(a, C, o, val), NULL)));
    const weft_stmt *body = weft_allocate(a, P, weft_seq(a, 2, (const weft_stmt *[]){fill, use}));
    const weft_buffer *ps[] = {A, C};
    const weft_loop_func *lf = func(f, want_masked ? "slack_far" : "slack_near", 2, ps, body);
    assert_int_equal(L->dump(T, lf, WEFT_DUMP_IR, &f->text), WEFT_OK);
    if (getenv("WEFT_TEST_SHOW_IR")) fputs(f->text, stderr);
    if ((strstr(f->text, "llvm.masked.load") != NULL) != want_masked)
        fail_msg("tiles of %lld: masked load %s", (long long)tl, want_masked ? "missing" : "present");
    free(f->text);
    f->text = NULL;
    weft_kernel *k = compile(f, lf);
    float *av = mem(f, sizeof(float) * NP), *cv = mem(f, sizeof(float) * NO), *want = mem(f, sizeof(float) * NO);
    for (int n = 0; n < NP; n++) av[n] = (float)(n % 37) * 0.5f - 4;
    for (int n = 0; n < NO; n++) want[n] = av[n] + av[n + OFF];
    void *args[] = {av, cv};
    run(k, args, NULL);
    assert_close(cv, want, NO, 0, "C");
}

static void test_guarded_reads_into_local_slack(void **state)
{
    check_guarded_slack_read(*state, 8, false);
    check_guarded_slack_read(*state, 32, true);
}

/* The blocked conv's write-back shape: for u < U (serial), for v < 16 (vectorized):
 * C[v * S + u] = A[u * 16 + v] * 2 + 1 (each vector of 16 "filters" is one "pixel"; lane v goes
 * to row v, S apart). Codegen transposes the U vectors in registers and stores each row's U
 * values at once (vector.c "transposed stores"): with U = 8 the IR has <8 x float> row stores
 * and no scalar store; with U = 7 (rows of 7: a masked store where AVX-512 has them, else the
 * scalar stores) the values only are checked. The rows' gaps (S > U) keep their sentinel. */
static void check_transposed_store(fx *f, int U, int S, bool check_ir)
{
    weft_arena *a = f->a;
    enum { LN = 16 };
    const weft_buffer *A = buf(f, "A", WEFT_F32, U * LN, 0), *C = buf(f, "C", WEFT_F32, LN * S, 1);
    const weft_expr *u = V("u"), *v = V("v");
    const weft_stmt *st = weft_store(a, C, weft_add(a, weft_mul(a, v, I(S)), u),
                                     weft_add(a, weft_mul(a, LD(A, weft_add(a, weft_mul(a, u, I(LN)), v)), weft_f32(a, 2)),
                                              weft_f32(a, 1)));
    const weft_stmt *body = weft_for(a, u, I(0), I(U), WEFT_FOR_SERIAL, weft_for(a, v, I(0), I(LN), WEFT_FOR_VECTORIZED, st));
    const weft_buffer *ps[] = {A, C};
    const weft_loop_func *lf = func(f, U == 8 ? "transposed8" : "transposed7", 2, ps, body);
    if (check_ir) {
        assert_int_equal(L->dump(T, lf, WEFT_DUMP_IR, &f->text), WEFT_OK);
        if (getenv("WEFT_TEST_SHOW_IR")) fputs(f->text, stderr);
        if (!strstr(f->text, "store <8 x float>") || strstr(f->text, "store float"))
            fail_msg("U = %d: want <8 x float> row stores and no scalar store", U);
        free(f->text);
        f->text = NULL;
    }
    weft_kernel *k = compile(f, lf);
    float *av = mem(f, sizeof(float) * (size_t)(U * LN)), *cv = mem(f, sizeof(float) * (size_t)(LN * S));
    float *want = mem(f, sizeof(float) * (size_t)(LN * S));
    for (int n = 0; n < U * LN; n++) av[n] = (float)n * 0.25f - 7;
    for (int n = 0; n < LN * S; n++) cv[n] = want[n] = -100; /* the gaps between rows stay */
    for (int uu = 0; uu < U; uu++)
        for (int vv = 0; vv < LN; vv++) want[vv * S + uu] = av[uu * LN + vv] * 2 + 1;
    void *args[] = {av, cv};
    run(k, args, NULL);
    assert_close(cv, want, LN * S, 0, "C");
}

static void test_write_back_across_rows_is_transposed(void **state)
{
    check_transposed_store(*state, 8, 11, true);
    check_transposed_store(*state, 7, 9, false);
}

/* ---- integer floor division ---- */

static int64_t ref_floordiv(int64_t x, int64_t y)
{
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}

/* For each of int32/int64 and serial/vectorized loops: out[6*i + s] = floordiv/floormod of X[i]
 * by 4 (power of two), 3, -3 and by Y[i]. */
static void check_floor(fx *f, weft_dtype t, weft_for_kind kind)
{
    weft_arena *a = f->a;
    enum { N = 48, NS = 8 };
    const weft_buffer *X = buf(f, "X", t, N, 0), *Y = buf(f, "Y", t, N, 1), *O = buf(f, "O", t, N * NS, 2);
    const weft_expr *i = V("i");
    const weft_expr *x = LD(X, i), *y = LD(Y, i);
    const weft_expr *divs[4] = {weft_int(a, t, 4), weft_int(a, t, 3), weft_int(a, t, -3), y};
    const weft_stmt *st[NS];
    for (int s = 0; s < NS; s++) {
        const weft_expr *v = (s & 1) ? weft_floormod(a, x, divs[s / 2]) : weft_floordiv(a, x, divs[s / 2]);
        st[s] = weft_store(a, O, weft_add(a, weft_mul(a, i, I(NS)), I(s)), v);
    }
    const weft_stmt *body = weft_for(a, i, I(0), I(N), kind, weft_seq(a, NS, st));
    if (kind == WEFT_FOR_VECTORIZED) {
        const weft_expr *i0 = V("i0"), *ii = V("ii");
        const weft_expr *from[] = {i}, *to[] = {weft_add(a, weft_mul(a, i0, I(16)), ii)};
        const weft_stmt *st2[NS];
        for (int s = 0; s < NS; s++)
            st2[s] = weft_store(a, O, weft_expr_substitute(a, st[s]->u.store.index, 1, from, to),
                                weft_expr_substitute(a, st[s]->u.store.value, 1, from, to));
        body = weft_for(a, i0, I(0), I(N / 16), WEFT_FOR_SERIAL,
                        weft_for(a, ii, I(0), I(16), WEFT_FOR_VECTORIZED, weft_seq(a, NS, st2)));
    }
    const weft_buffer *ps[] = {X, Y, O};
    weft_kernel *k = compile(f, func(f, "floor", 3, ps, body));
    int bytes = t.bits / 8;
    char *xv = mem(f, (size_t)(bytes * N)), *yv = mem(f, (size_t)(bytes * N)), *ov = mem(f, (size_t)(bytes * N * NS));
    int64_t xs[N], ys[N];
    for (int n = 0; n < N; n++) {
        xs[n] = n - 24;
        ys[n] = (n % 5) - 2;
        if (ys[n] == 0) ys[n] = 7;
        if (t.bits == 32) {
            ((int32_t *)xv)[n] = (int32_t)xs[n];
            ((int32_t *)yv)[n] = (int32_t)ys[n];
        } else {
            ((int64_t *)xv)[n] = xs[n];
            ((int64_t *)yv)[n] = ys[n];
        }
    }
    void *args[] = {xv, yv, ov};
    run(k, args, NULL);
    for (int n = 0; n < N; n++)
        for (int s = 0; s < NS; s++) {
            int64_t d = s / 2 == 0 ? 4 : s / 2 == 1 ? 3 : s / 2 == 2 ? -3 : ys[n];
            int64_t want = (s & 1) ? xs[n] - ref_floordiv(xs[n], d) * d : ref_floordiv(xs[n], d);
            int64_t got = t.bits == 32 ? ((int32_t *)ov)[n * NS + s] : ((int64_t *)ov)[n * NS + s];
            if (got != want)
                fail_msg("%s %s x=%lld d=%lld: got %lld want %lld", weft_dtype_name(t), (s & 1) ? "floormod" : "floordiv",
                         (long long)xs[n], (long long)d, (long long)got, (long long)want);
        }
}

static void test_floordiv_floormod_negative_operands(void **state)
{
    check_floor(*state, WEFT_I32, WEFT_FOR_SERIAL);
    check_floor(*state, WEFT_I64, WEFT_FOR_SERIAL);
    check_floor(*state, WEFT_I32, WEFT_FOR_VECTORIZED);
    check_floor(*state, WEFT_I64, WEFT_FOR_VECTORIZED);
}

/* ---- select, casts, bool buffers ---- */

/* R[i] = select(X[i] > 0, X[i], 0.1*X[i]); Q[i] = cast<i32>(X[i]*3) (truncation);
 * M[i] = (bool)(cast<i32>(X[i]) & ...) as X[i] >= 1 stored in a bool buffer;
 * S[i] = cast<f32>(M[i]) + cast<f32>(Q[i] / 2)  (bool->float, sdiv truncation). */
static void check_select_cast(fx *f, weft_for_kind kind)
{
    weft_arena *a = f->a;
    enum { N = 32 };
    const weft_buffer *X = buf(f, "X", WEFT_F32, N, 0), *R = buf(f, "R", WEFT_F32, N, 1);
    const weft_buffer *Q = buf(f, "Q", WEFT_I32, N, 2), *M = buf(f, "M", WEFT_BOOL, N, 3);
    const weft_buffer *S = buf(f, "S", WEFT_F32, N, 4), *Z = buf(f, "Z", WEFT_I64, N, 5);
    const weft_expr *i = V("i"), *x = LD(X, i);
    const weft_expr *r = weft_select(a, weft_cmp(a, WEFT_EXPR_GT, x, weft_f32(a, 0)), x, weft_mul(a, weft_f32(a, 0.1), x));
    const weft_expr *q = weft_cast(a, WEFT_I32, weft_mul(a, x, weft_f32(a, 3)));
    const weft_expr *m = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, x, weft_f32(a, 1)),
                                  weft_not(a, weft_cmp(a, WEFT_EXPR_EQ, x, weft_f32(a, 2))));
    const weft_expr *s = weft_add(a, weft_cast(a, WEFT_F32, LD(M, i)),
                                  weft_cast(a, WEFT_F32, weft_div(a, LD(Q, i), weft_int(a, WEFT_I32, 2))));
    /* int -> bool -> int64, min/max on ints */
    const weft_expr *z = weft_add(a, weft_cast(a, WEFT_I64, weft_cast(a, WEFT_BOOL, LD(Q, i))),
                                  weft_max(a, weft_min(a, weft_cast(a, WEFT_I64, LD(Q, i)), I(5)), I(-4)));
    const weft_stmt *st[] = {weft_store(a, R, i, r), weft_store(a, Q, i, q), weft_store(a, M, i, m),
                             weft_store(a, S, i, s), weft_store(a, Z, i, z)};
    const weft_buffer *ps[] = {X, R, Q, M, S, Z};
    weft_kernel *k = compile(f, func(f, "selcast", 6, ps, weft_for(a, i, I(0), I(N), kind, weft_seq(a, 5, st))));
    float *xv = mem(f, 4 * N), *rv = mem(f, 4 * N), *sv = mem(f, 4 * N), *rw = mem(f, 4 * N), *sw = mem(f, 4 * N);
    int32_t *qv = mem(f, 4 * N);
    uint8_t *mv = mem(f, N);
    int64_t *zv = mem(f, 8 * N);
    for (int n = 0; n < N; n++) xv[n] = (float)(n - 12) * 0.37f;
    xv[20] = 2.0f;
    void *args[] = {xv, rv, qv, mv, sv, zv};
    run(k, args, NULL);
    for (int n = 0; n < N; n++) {
        float x0 = xv[n];
        rw[n] = x0 > 0 ? x0 : 0.1f * x0;
        int32_t q0 = (int32_t)(x0 * 3.0f);
        bool m0 = x0 >= 1 && x0 != 2;
        sw[n] = (float)m0 + (float)(q0 / 2);
        int64_t z0 = (q0 != 0) + (q0 < 5 ? (q0 > -4 ? q0 : -4) : 5);
        assert_int_equal(qv[n], q0);
        assert_int_equal(mv[n], m0);
        assert_int_equal(zv[n], z0);
    }
    assert_close(rv, rw, N, 1e-6, "R");
    assert_close(sv, sw, N, 0, "S");
}

static void test_select_and_casts(void **state)
{
    check_select_cast(*state, WEFT_FOR_SERIAL);
    check_select_cast(*state, WEFT_FOR_VECTORIZED);
}

/* ---- intrinsics ---- */

enum { NFN = 9, NX = 64 };

static void check_intrinsics(fx *f, weft_for_kind kind)
{
    weft_arena *a = f->a;
    const weft_buffer *X = buf(f, "X", WEFT_F32, NX, 0), *P = buf(f, "P", WEFT_F32, NX, 1);
    const weft_buffer *O = buf(f, "O", WEFT_F32, NX * NFN, 2);
    const weft_expr *i0 = V("i0"), *ii = V("ii");
    const weft_expr *i = weft_add(a, weft_mul(a, i0, I(16)), ii);
    const weft_expr *x = LD(X, i), *p = LD(P, i);
    const weft_expr *pw[2] = {p, x};
    const weft_expr *v[NFN] = {
        weft_call1(a, WEFT_INTRIN_EXP, x),  weft_call1(a, WEFT_INTRIN_TANH, x),  weft_call1(a, WEFT_INTRIN_ERF, x),
        weft_call1(a, WEFT_INTRIN_LOG, p),  weft_call1(a, WEFT_INTRIN_SQRT, p),  weft_call1(a, WEFT_INTRIN_RSQRT, p),
        weft_call1(a, WEFT_INTRIN_SIGMOID, x), weft_call(a, WEFT_INTRIN_POW, 2, pw), weft_call1(a, WEFT_INTRIN_FABS, x),
    };
    const weft_stmt *st[NFN];
    for (int s = 0; s < NFN; s++) st[s] = weft_store(a, O, weft_add(a, I(s * NX), i), v[s]);
    const weft_stmt *body = weft_for(a, i0, I(0), I(NX / 16), WEFT_FOR_SERIAL,
                                     weft_for(a, ii, I(0), I(16), kind, weft_seq(a, NFN, st)));
    const weft_buffer *ps[] = {X, P, O};
    weft_kernel *k = compile(f, func(f, "intrin", 3, ps, body));
    float *xv = mem(f, 4 * NX), *pv = mem(f, 4 * NX), *ov = mem(f, 4 * NX * NFN), *w = mem(f, 4 * NX * NFN);
    for (int n = 0; n < NX; n++) {
        xv[n] = -3.0f + 6.0f * (float)n / (NX - 1);
        pv[n] = 0.1f + 3.9f * (float)n / (NX - 1);
        float xx = xv[n], pp = pv[n];
        float r[NFN] = {expf(xx), tanhf(xx), erff(xx), logf(pp), sqrtf(pp), 1.0f / sqrtf(pp),
                        1.0f / (1.0f + expf(-xx)), powf(pp, xx), fabsf(xx)};
        for (int s = 0; s < NFN; s++) w[s * NX + n] = r[s];
    }
    void *args[] = {xv, pv, ov};
    run(k, args, NULL);
    assert_close(ov, w, NX * NFN, 1e-5, "O");
}

static void test_intrinsics_match_libm(void **state)
{
    check_intrinsics(*state, WEFT_FOR_SERIAL);
    check_intrinsics(*state, WEFT_FOR_VECTORIZED);
}

/* exp, sigmoid, tanh and erf over their whole float32 range, against double-precision libm:
 * the vectorizing polynomials of targets/llvm/expr.c (FMAs, exp's rounding by 1.5 * 2^23, the
 * reciprocal estimate + Newton step of their divisions) keep a relative error of a few ulp
 * (4e-7 = about 3.4 ulp; erf's absolute error 1e-7 near 0 allowed as well), and NaN stays NaN. */
enum { NR = 4096 };

/* The sweep with an inner loop of `lanes` (vectors of that many lanes when vectorized: 16, and
 * odd widths that AVX-512's vscalefps path widens to 8 or 16 lanes and narrows back). */
static void check_intrinsics_range(fx *f, weft_for_kind kind, int lanes)
{
    weft_arena *a = f->a;
    const int nr = lanes * (NR / lanes);
    const weft_buffer *X = buf(f, "X", WEFT_F32, nr, 0), *O = buf(f, "O", WEFT_F32, nr * 4, 1);
    const weft_expr *i0 = V("i0"), *ii = V("ii");
    const weft_expr *i = weft_add(a, weft_mul(a, i0, I(lanes)), ii);
    const weft_expr *x = LD(X, i);
    const weft_intrin fn[4] = {WEFT_INTRIN_EXP, WEFT_INTRIN_SIGMOID, WEFT_INTRIN_TANH, WEFT_INTRIN_ERF};
    const weft_stmt *st[4];
    for (int s = 0; s < 4; s++) st[s] = weft_store(a, O, weft_add(a, I(s * nr), i), weft_call1(a, fn[s], x));
    const weft_stmt *body = weft_for(a, i0, I(0), I(nr / lanes), WEFT_FOR_SERIAL,
                                     weft_for(a, ii, I(0), I(lanes), kind, weft_seq(a, 4, st)));
    const weft_buffer *ps[] = {X, O};
    weft_kernel *k = compile(f, func(f, "intrin_range", 2, ps, body));
    float *xv = mem(f, 4 * (size_t)nr), *ov = mem(f, 4 * (size_t)nr * 4);
    for (int n = 0; n < nr - 1; n++) xv[n] = -87.0f + 175.0f * (float)n / (nr - 2); /* [-87, 88] */
    xv[nr - 1] = NAN;
    void *args[] = {xv, ov};
    run(k, args, NULL);
    for (int n = 0; n < nr - 1; n++) {
        double xx = xv[n], want[4] = {exp(xx), 1.0 / (1.0 + exp(-xx)), tanh(xx), erf(xx)};
        for (int s = 0; s < 4; s++) {
            double got = ov[s * nr + n], err = fabs(got - want[s]);
            double tol = 4e-7 * fabs(want[s]) + (s == 3 ? 1e-7 : s == 1 ? 1e-38 : 0);
            if (!(err <= tol)) fail_msg("fn %d, %d lanes, at x = %.9g: got %.9g, want %.9g", s, lanes, xx, got, want[s]);
        }
    }
    for (int s = 0; s < 4; s++) assert_true(isnan(ov[s * nr + nr - 1]));
}

static void check_intrinsics_range_all(fx *f)
{
    check_intrinsics_range(f, WEFT_FOR_SERIAL, 16);
    const int lanes[] = {16, 11, 8, 5};
    for (int l = 0; l < 4; l++) check_intrinsics_range(f, WEFT_FOR_VECTORIZED, lanes[l]);
}

/* On an AVX-512 host the sweep also runs on an AVX2 target (WEFT_CPU=haswell): exp's 2^n is
 * then built in the exponent bits rather than by vscalefps, and both must hold. */
static void test_intrinsics_accurate_over_range(void **state)
{
    fx *f = *state;
    check_intrinsics_range_all(f);
    weft_target_caps c;
    L->caps(T, &c);
    if (!strstr(c.features, "+avx512f") || !strstr(c.features, "+avx2") || !strstr(c.features, "+fma")) return;
    weft_target *host = T, *avx2 = NULL;
    setenv("WEFT_CPU", "haswell", 1);
    weft_status st = L->create(&avx2);
    unsetenv("WEFT_CPU");
    assert_int_equal(st, WEFT_OK);
    T = avx2;
    check_intrinsics_range_all(f);
    for (int i = 0; i < f->n_k; i++) L->kernel_destroy(f->k[i]); /* compiled by avx2 */
    f->n_k = 0;
    T = host;
    L->destroy(avx2);
}

/* tanh near 0 and in its tails, where the linear sweep above has no points: log-spaced |x| from
 * 1e-42 (denormal: tanh(x) is x, the square underflows) through the 0.0004 switch to the
 * rational form, up to 20 (clamped to 1), both signs, and +-inf; relative error 4e-7 as above. */
enum { NT = 512 };

static void check_tanh_tiny_and_tails(fx *f, weft_for_kind kind)
{
    weft_arena *a = f->a;
    const weft_buffer *X = buf(f, "X", WEFT_F32, NT, 0), *O = buf(f, "O", WEFT_F32, NT, 1);
    const weft_expr *i0 = V("i0"), *ii = V("ii");
    const weft_expr *i = weft_add(a, weft_mul(a, i0, I(16)), ii);
    const weft_stmt *body =
        weft_for(a, i0, I(0), I(NT / 16), WEFT_FOR_SERIAL,
                 weft_for(a, ii, I(0), I(16), kind, weft_store(a, O, i, weft_call1(a, WEFT_INTRIN_TANH, LD(X, i)))));
    const weft_buffer *ps[] = {X, O};
    weft_kernel *k = compile(f, func(f, "tanh_tails", 2, ps, body));
    float *xv = mem(f, 4 * NT), *ov = mem(f, 4 * NT);
    for (int n = 0; n < NT - 2; n++) {
        double mag = pow(10.0, -42.0 + 43.3 * (double)(n / 2) / (NT / 2 - 2)); /* 1e-42 .. 20 */
        xv[n] = (float)(n % 2 ? -mag : mag);
    }
    xv[NT - 2] = INFINITY, xv[NT - 1] = -INFINITY;
    void *args[] = {xv, ov};
    run(k, args, NULL);
    for (int n = 0; n < NT; n++) {
        double want = tanh((double)xv[n]), err = fabs(ov[n] - want);
        if (!(err <= 4e-7 * fabs(want))) fail_msg("tanh(%.9g): got %.9g, want %.9g", xv[n], ov[n], want);
    }
}

static void test_tanh_accurate_near_zero_and_in_tails(void **state)
{
    check_tanh_tiny_and_tails(*state, WEFT_FOR_SERIAL);
    check_tanh_tiny_and_tails(*state, WEFT_FOR_VECTORIZED);
}

/* A vectorized loop whose body is a reduction into one cell (S[i] = S[i] OP e, i not using the
 * loop's variable): summed across lanes (vector.c), against the serial loop. Float sum (of
 * integers, so exact in any order), max, min and an int32 sum, at 16 and 11 lanes (rows of 4
 * cells, S starting at 1.5 / -1e30 / 1e30 / 7 to show the cell's value is kept). */
static const weft_loop_func *check_cell_reduction(fx *f, int lanes, weft_for_kind kind, float *out_f, int32_t *out_i)
{
    weft_arena *a = f->a;
    enum { ROWS = 4 };
    const weft_buffer *X = buf(f, "X", WEFT_F32, ROWS * lanes, 0), *XI = buf(f, "XI", WEFT_I32, ROWS * lanes, 1);
    const weft_buffer *S = buf(f, "S", WEFT_F32, 3 * ROWS, 2), *SI = buf(f, "SI", WEFT_I32, ROWS, 3);
    const weft_expr *i = V("i"), *k = V("k"), *ik = weft_add(a, weft_mul(a, i, I(lanes)), k);
    const weft_expr *cell[3] = {i, weft_add(a, i, I(ROWS)), weft_add(a, i, I(2 * ROWS))};
    const weft_expr *upd[3] = {weft_add(a, LD(S, cell[0]), LD(X, ik)),
                               weft_max(a, LD(X, ik), LD(S, cell[1])), /* the cell on either side */
                               weft_min(a, LD(S, cell[2]), weft_mul(a, LD(X, ik), LD(X, ik)))};
    const weft_stmt *loops[4];
    for (int o = 0; o < 3; o++) loops[o] = weft_for(a, k, I(0), I(lanes), kind, weft_store(a, S, cell[o], upd[o]));
    loops[3] = weft_for(a, k, I(0), I(lanes), kind, weft_store(a, SI, i, weft_add(a, LD(SI, i), LD(XI, ik))));
    const weft_stmt *body = weft_for(a, i, I(0), I(ROWS), WEFT_FOR_SERIAL, weft_seq(a, 4, loops));
    const weft_buffer *ps[] = {X, XI, S, SI};
    const weft_loop_func *lf = func(f, "cell_reduction", 4, ps, body);
    weft_kernel *kk = compile(f, lf);
    float *xv = mem(f, 4 * ROWS * (size_t)lanes);
    int32_t *xi = mem(f, 4 * ROWS * (size_t)lanes);
    for (int n = 0; n < ROWS * lanes; n++) {
        xv[n] = (float)((n * 37) % 23 - 11);
        xi[n] = (n * 53) % 101 - 50;
    }
    for (int r = 0; r < ROWS; r++) {
        out_f[r] = 1.5f, out_f[ROWS + r] = -1e30f, out_f[2 * ROWS + r] = 1e30f;
        out_i[r] = 7;
    }
    void *args[] = {xv, xi, out_f, out_i};
    run(kk, args, NULL);
    return lf;
}

static void test_vectorized_reduction_into_one_cell(void **state)
{
    fx *f = *state;
    const int lanes[] = {16, 11};
    const weft_loop_func *vec = NULL;
    for (int l = 0; l < 2; l++) {
        float sv[12], vv[12];
        int32_t si[4], vi[4];
        check_cell_reduction(f, lanes[l], WEFT_FOR_SERIAL, sv, si);
        vec = check_cell_reduction(f, lanes[l], WEFT_FOR_VECTORIZED, vv, vi);
        for (int n = 0; n < 12; n++) assert_true(sv[n] == vv[n]);
        for (int n = 0; n < 4; n++) assert_int_equal(si[n], vi[n]);
        assert_true(sv[0] != 1.5f && sv[4] > -1e30f && sv[8] < 1e30f && si[0] != 7); /* something was reduced */
    }
    /* the vectorized one is one horizontal reduction, not a serial loop */
    char *text = NULL;
    assert_int_equal(L->dump(T, vec, WEFT_DUMP_IR, &text), WEFT_OK);
    assert_non_null(strstr(text, "llvm.vector.reduce.fadd"));
    assert_non_null(strstr(text, "llvm.vector.reduce.fmax"));
    assert_non_null(strstr(text, "llvm.vector.reduce.fmin"));
    assert_non_null(strstr(text, "llvm.vector.reduce.add"));
    free(text);
}

/* ---- gather / scatter ---- */

/* j VECTORIZED 16: G[j] = A[3*j + 1] (gather), S[2*j] = A[j] (scatter), R[15 - j] = A[j]
 * (negative stride). */
static void test_gather_scatter_non_unit_stride(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    const weft_buffer *A = buf(f, "A", WEFT_F32, 64, 0), *G = buf(f, "G", WEFT_F32, 16, 1);
    const weft_buffer *S = buf(f, "S", WEFT_F32, 32, 2), *R = buf(f, "R", WEFT_F32, 16, 3);
    const weft_expr *j = V("j");
    const weft_stmt *st[] = {
        weft_store(a, G, j, LD(A, weft_add(a, weft_mul(a, I(3), j), I(1)))),
        weft_store(a, S, weft_mul(a, j, I(2)), LD(A, j)),
        weft_store(a, R, weft_sub(a, I(15), j), LD(A, j)),
    };
    const weft_buffer *ps[] = {A, G, S, R};
    const weft_loop_func *lf = func(f, "gather", 4, ps, weft_for(a, j, I(0), I(16), WEFT_FOR_VECTORIZED, weft_seq(a, 3, st)));
    /* constant-stride stores: one scalar store per lane on AMD Zen (and without AVX-512), a
     * scatter instruction on other AVX-512 CPUs */
    weft_target_caps c;
    L->caps(T, &c);
    weft_target *t2 = NULL;
    assert_int_equal(L->create(&t2), WEFT_OK);
    for (int slow = 0; slow < 2; slow++) {
        weft_llvm_test_set_slow_gather(t2, slow);
        assert_int_equal(L->dump(t2, lf, WEFT_DUMP_IR, &f->text), WEFT_OK);
        bool scatter = strstr(f->text, "llvm.masked.scatter") != NULL;
        assert_true(scatter == (!slow && c.vector_bits == 512));
        free(f->text);
        f->text = NULL;
    }
    L->destroy(t2);
    weft_kernel *k = compile(f, lf);
    float *av = mem(f, 4 * 64), *gv = mem(f, 4 * 16), *sv = mem(f, 4 * 32), *rv = mem(f, 4 * 16);
    for (int n = 0; n < 64; n++) av[n] = (float)n * 1.5f;
    for (int n = 0; n < 32; n++) sv[n] = -1;
    void *args[] = {av, gv, sv, rv};
    run(k, args, NULL);
    for (int n = 0; n < 16; n++) {
        assert_true(gv[n] == av[3 * n + 1]);
        assert_true(sv[2 * n] == av[n]);
        assert_true(sv[2 * n + 1] == -1);
        assert_true(rv[15 - n] == av[n]);
    }
}

/* ---- reductions ---- */

/* out[i] = max_k A[i*100+k] from a -inf identity (serial), acc[j] = max_k A[k*16+j] with j
 * VECTORIZED, and m[0] = max_j A[j] over a VECTORIZED j (store to one cell: serial fallback). */
static void test_max_reduction_from_neg_infinity(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    const weft_buffer *A = buf(f, "A", WEFT_F32, 400, 0), *O = buf(f, "O", WEFT_F32, 4, 1);
    const weft_buffer *Acc = buf(f, "Acc", WEFT_F32, 16, 2), *Mx = buf(f, "Mx", WEFT_F32, 1, 3);
    const weft_expr *i = V("i"), *k = V("k"), *k2 = V("k"), *j = V("j"), *j2 = V("j"), *j3 = V("j");
    const weft_expr *ninf = weft_f32(a, -INFINITY);
    const weft_stmt *r1[] = {
        weft_store(a, O, i, ninf),
        weft_for(a, k, I(0), I(100), WEFT_FOR_SERIAL,
                 weft_store(a, O, i, weft_max(a, LD(O, i), LD(A, weft_add(a, weft_mul(a, i, I(100)), k))))),
    };
    const weft_stmt *red1 = weft_for(a, i, I(0), I(4), WEFT_FOR_SERIAL, weft_seq(a, 2, r1));
    const weft_stmt *r2[] = {
        weft_for(a, j, I(0), I(16), WEFT_FOR_VECTORIZED, weft_store(a, Acc, j, ninf)),
        weft_for(a, k2, I(0), I(25), WEFT_FOR_SERIAL,
                 weft_for(a, j2, I(0), I(16), WEFT_FOR_VECTORIZED,
                          weft_store(a, Acc, j2, weft_max(a, LD(Acc, j2), LD(A, weft_add(a, weft_mul(a, k2, I(16)), j2)))))),
        weft_store(a, Mx, I(0), ninf),
        weft_for(a, j3, I(0), I(16), WEFT_FOR_VECTORIZED, weft_store(a, Mx, I(0), weft_max(a, LD(Mx, I(0)), LD(A, j3)))),
    };
    const weft_stmt *all[] = {red1, weft_seq(a, 4, r2)};
    const weft_buffer *ps[] = {A, O, Acc, Mx};
    weft_kernel *kk = compile(f, func(f, "maxred", 4, ps, weft_seq(a, 2, all)));
    float *av = mem(f, 4 * 400), *ov = mem(f, 16), *accv = mem(f, 64), *mv = mem(f, 4);
    for (int n = 0; n < 400; n++) av[n] = -1000.0f - (float)((n * 37) % 101);
    av[250] = -5.0f;
    void *args[] = {av, ov, accv, mv};
    run(kk, args, NULL);
    for (int r = 0; r < 4; r++) {
        float m = -INFINITY;
        for (int n = 0; n < 100; n++) m = fmaxf(m, av[r * 100 + n]);
        assert_true(ov[r] == m);
    }
    for (int c = 0; c < 16; c++) {
        float m = -INFINITY;
        for (int n = 0; n < 25; n++) m = fmaxf(m, av[n * 16 + c]);
        assert_true(accv[c] == m);
    }
    float m = -INFINITY;
    for (int n = 0; n < 16; n++) m = fmaxf(m, av[n]);
    assert_true(mv[0] == m);
}

/* ---- large ALLOCATE goes through weft_rt_alloc ---- */

static void test_large_allocate_on_heap(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    enum { N = 40000 }; /* 160 KB > 64 KiB */
    const weft_buffer *A = buf(f, "A", WEFT_F32, N, 0), *O = buf(f, "O", WEFT_F32, N, 1), *T1 = buf(f, "T1", WEFT_F32, N, -1);
    const weft_expr *i = V("i"), *i2 = V("i");
    const weft_stmt *st[] = {
        weft_for(a, i, I(0), I(N), WEFT_FOR_SERIAL, weft_store(a, T1, i, weft_mul(a, LD(A, i), LD(A, i)))),
        weft_for(a, i2, I(0), I(N), WEFT_FOR_SERIAL, weft_store(a, O, i2, weft_add(a, LD(T1, weft_sub(a, I(N - 1), i2)), weft_f32(a, 1)))),
    };
    const weft_buffer *ps[] = {A, O};
    weft_kernel *k = compile(f, func(f, "bigalloc", 2, ps, weft_allocate(a, T1, weft_seq(a, 2, st))));
    float *av = mem(f, 4 * N), *ov = mem(f, 4 * N);
    for (int n = 0; n < N; n++) av[n] = (float)(n % 100) * 0.01f;
    void *args[] = {av, ov};
    run(k, args, NULL);
    for (int n = 0; n < N; n++) {
        float t = av[N - 1 - n] * av[N - 1 - n] + 1;
        if (ov[n] != t) fail_msg("O[%d] = %g, want %g", n, (double)ov[n], (double)t);
    }
}

/* ---- nonzero loop minimum, IF with ELSE, unrolled loop with a variable minimum ---- */

/* j VECTORIZED over [5, 13): H[j] = A[j]*2;  j serial 10: E[j] = j < 5 ? 1 : 2 (IF/ELSE);
 * r SERIAL 3: u UNROLLED [r, r+4): U[r*4 + u - r] = cast(u). */
static void test_loop_min_if_else_and_unrolled_min(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    const weft_buffer *A = buf(f, "A", WEFT_F32, 16, 0), *H = buf(f, "H", WEFT_F32, 16, 1);
    const weft_buffer *E = buf(f, "E", WEFT_F32, 10, 2), *U = buf(f, "U", WEFT_F32, 12, 3);
    const weft_expr *j = V("j"), *j2 = V("j"), *r = V("r"), *u = V("u");
    const weft_stmt *st[] = {
        weft_for(a, j, I(5), I(8), WEFT_FOR_VECTORIZED, weft_store(a, H, j, weft_mul(a, LD(A, j), weft_f32(a, 2)))),
        weft_for(a, j2, I(0), I(10), WEFT_FOR_SERIAL,
                 weft_if(a, weft_cmp(a, WEFT_EXPR_LT, j2, I(5)), weft_store(a, E, j2, weft_f32(a, 1)),
                         weft_store(a, E, j2, weft_f32(a, 2)))),
        weft_for(a, r, I(0), I(3), WEFT_FOR_SERIAL,
                 weft_for(a, u, r, I(4), WEFT_FOR_UNROLLED,
                          weft_store(a, U, weft_sub(a, weft_add(a, weft_mul(a, r, I(4)), u), r), weft_cast(a, WEFT_F32, u)))),
    };
    const weft_buffer *ps[] = {A, H, E, U};
    const weft_loop_func *lf = func(f, "minif", 4, ps, weft_seq(a, 3, st));
    weft_kernel *k = compile(f, lf);
    float *av = mem(f, 64), *hv = mem(f, 64), *ev = mem(f, 40), *uv = mem(f, 48);
    for (int n = 0; n < 16; n++) {
        av[n] = (float)n + 0.5f;
        hv[n] = -1;
    }
    void *args[] = {av, hv, ev, uv};
    run(k, args, NULL);
    for (int n = 0; n < 16; n++) assert_true(hv[n] == (n >= 5 && n < 13 ? av[n] * 2 : -1));
    for (int n = 0; n < 10; n++) assert_true(ev[n] == (n < 5 ? 1 : 2));
    for (int n = 0; n < 12; n++) assert_true(uv[n] == (float)(n / 4 + n % 4));
    assert_int_equal(L->dump(T, lf, WEFT_DUMP_IR, &f->text), WEFT_OK);
    assert_non_null(strstr(f->text, "<8 x float>"));
}

/* ---- errors ---- */

static void test_tload_reaching_codegen_is_internal_error(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    int64_t shape[1] = {8};
    weft_tensor *P = weft_te_placeholder(a, "P", WEFT_F32, 1, shape);
    const weft_buffer *O = buf(f, "O", WEFT_F32, 8, 0);
    const weft_expr *i = V("i");
    const weft_expr *idx[1] = {i};
    const weft_stmt *body = weft_for(a, i, I(0), I(8), WEFT_FOR_SERIAL, weft_store(a, O, i, weft_tload(a, P, 1, idx)));
    const weft_buffer *ps[] = {O};
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(T, func(f, "tload", 1, ps, body), &k), WEFT_ERR_INTERNAL);
    assert_null(k);
    assert_non_null(strstr(weft_last_error(), "TLOAD"));
    assert_non_null(strstr(weft_last_error(), "'P'"));
}

static void test_thread_bound_loop_is_unsupported(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    const weft_buffer *O = buf(f, "O", WEFT_F32, 8, 0);
    const weft_expr *i = V("i");
    const weft_stmt *body = weft_for_full(a, i, I(0), I(8), WEFT_FOR_THREAD_BOUND, WEFT_THREAD_X, 0,
                                          weft_store(a, O, i, weft_f32(a, 1)));
    const weft_buffer *ps[] = {O};
    weft_kernel *k = NULL;
    assert_int_equal(L->compile(T, func(f, "tb", 1, ps, body), &k), WEFT_ERR_UNSUPPORTED);
    assert_null(k);
    assert_non_null(strstr(weft_last_error(), "threadIdx.x"));
}

static void test_unbound_variable_and_unknown_buffer_are_internal_errors(void **state)
{
    fx *f = *state;
    weft_arena *a = f->a;
    const weft_buffer *O = buf(f, "O", WEFT_F32, 8, 0), *loc = buf(f, "loc", WEFT_F32, 8, -1);
    const weft_expr *i = V("i"), *stray = V("stray");
    const weft_buffer *ps[] = {O};
    weft_kernel *k = NULL;
    const weft_stmt *b1 = weft_for(a, i, I(0), I(8), WEFT_FOR_SERIAL, weft_store(a, O, stray, weft_f32(a, 1)));
    assert_int_equal(L->compile(T, func(f, "unbound", 1, ps, b1), &k), WEFT_ERR_INTERNAL);
    assert_non_null(strstr(weft_last_error(), "stray"));
    const weft_stmt *b2 = weft_for(a, i, I(0), I(8), WEFT_FOR_SERIAL, weft_store(a, O, i, LD(loc, i)));
    assert_int_equal(L->compile(T, func(f, "noalloc", 1, ps, b2), &k), WEFT_ERR_INTERNAL);
    assert_non_null(strstr(weft_last_error(), "loc"));
    assert_int_equal(L->compile(T, NULL, &k), WEFT_ERR_INVALID_ARG);
    assert_null(k);
}

static void test_many_kernels_get_unique_symbols(void **state)
{
    fx *f = *state;
    for (int r = 0; r < 3; r++) check_add(f, 32, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_caps_report_host_vector_width, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_vectorized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_tail_guard_is_masked_vector_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_rows_of_local_buffer_read_as_power_of_two, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guarded_reads_into_local_slack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_back_across_rows_is_transposed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_selection_from_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_register_tile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_parallel_two_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dump_asm_matmul_uses_zmm_fma, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parallel_outlined_with_local_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_floordiv_floormod_negative_operands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_and_casts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intrinsics_match_libm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intrinsics_accurate_over_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tanh_accurate_near_zero_and_in_tails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vectorized_reduction_into_one_cell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gather_scatter_non_unit_stride, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_reduction_from_neg_infinity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_allocate_on_heap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_min_if_else_and_unrolled_min, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tload_reaching_codegen_is_internal_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_bound_loop_is_unsupported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unbound_variable_and_unknown_buffer_are_internal_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_kernels_get_unique_symbols, setup, teardown),
    };
    return cmocka_run_group_tests_name("targets_llvm", tests, group_setup, group_teardown);
}
