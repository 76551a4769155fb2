/* Vendor-library peers for the matmul benchmark (see peers.h).
 *
 * OpenBLAS: cblas_sgemm on the caller's buffers; openblas_set_num_threads is global, so run
 * re-applies the peer's count when it differs.
 * oneDNN (C API, v2 or v3): a CPU engine and stream, a matmul primitive whose weights use
 * format_tag any, and B reordered once into the layout the primitive chose. Debian's libdnnl is
 * built with OpenMP, so the thread count is the calling thread's omp_set_num_threads, looked up
 * with dlsym so this file needs no OpenMP flags (libgomp is already loaded by libdnnl).
 */
#define _GNU_SOURCE
#include "bench/peers.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/error.h"
#include "runtime/runtime.h"

#ifdef WEFT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef WEFT_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#endif

typedef enum peer_kind { PEER_OPENBLAS, PEER_ONEDNN } peer_kind;

struct bench_peer {
    peer_kind kind;
    int M, N, K;                      /* elements */
    int threads;                      /* library threads used by run */
    const float *B;                   /* openblas: borrowed weights, K*N */
#ifdef WEFT_HAVE_ONEDNN
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t matmul;
    dnnl_memory_t src, weights, dst;  /* src/dst wrap the caller's A and C at run time */
#endif
};

static _Thread_local char info_buf[512];

static int resolve_threads(int threads) { return threads > 0 ? threads : weft_rt_cores(); }

/* ---- OpenBLAS ------------------------------------------------------------------------ */

#ifdef WEFT_HAVE_OPENBLAS
static weft_status openblas_create(bench_peer *p)
{
    openblas_set_num_threads(p->threads);
    return WEFT_OK;
}

static weft_status openblas_run(bench_peer *p, const float *A, float *C)
{
    if (openblas_get_num_threads() != p->threads) openblas_set_num_threads(p->threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p->M, p->N, p->K, 1.0f, A, p->K, p->B,
                p->N, 0.0f, C, p->N);
    return WEFT_OK;
}

static const char *openblas_info(void)
{
    snprintf(info_buf, sizeof info_buf, "OpenBLAS core %s, config: %s", openblas_get_corename(),
             openblas_get_config());
    return info_buf;
}
#endif

/* ---- oneDNN -------------------------------------------------------------------------- */

#ifdef WEFT_HAVE_ONEDNN
typedef void (*omp_set_fn)(int);
typedef int (*omp_get_fn)(void);

/* Sets the OpenMP thread count of the calling thread, which oneDNN's OpenMP runtime reads. */
static void onednn_set_threads(int threads)
{
    if (dnnl_version()->cpu_runtime != DNNL_RUNTIME_OMP) return;
    omp_set_fn set = (omp_set_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set) set(threads);
}

static int onednn_max_threads(void)
{
    omp_get_fn get = (omp_get_fn)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    return get ? get() : 0;
}

static weft_status dnnl_fail(dnnl_status_t s, const char *what)
{
    return weft_fail(WEFT_ERR_UNAVAILABLE, "onednn peer: %s failed: %s (%d)", what, dnnl_status2str(s),
                     (int)s);
}

/* True on success; otherwise records the failure of `what` in *st. */
static bool dnnl_ok(dnnl_status_t s, const char *what, weft_status *st)
{
    if (s == dnnl_success) return true;
    *st = dnnl_fail(s, what);
    return false;
}

#if DNNL_VERSION_MAJOR >= 3
typedef dnnl_memory_desc_t peer_md; /* a handle in v3 */
typedef const_dnnl_memory_desc_t peer_cmd;
#define MD_REF(md) (md)
static dnnl_status_t md_make(peer_md *md, int64_t rows, int64_t cols, dnnl_format_tag_t tag)
{
    dnnl_dims_t dims = {rows, cols};
    return dnnl_memory_desc_create_with_tag(md, 2, dims, dnnl_f32, tag);
}
static void md_free(peer_md md)
{
    if (md) dnnl_memory_desc_destroy(md);
}
static dnnl_status_t matmul_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine, peer_md src,
                                      peer_md wei, peer_md dst)
{
    return dnnl_matmul_primitive_desc_create(pd, engine, src, wei, NULL, dst, NULL);
}
#else
typedef dnnl_memory_desc_t peer_md; /* a plain struct in v2 */
typedef const dnnl_memory_desc_t *peer_cmd;
#define MD_REF(md) (&(md))
static dnnl_status_t md_make(peer_md *md, int64_t rows, int64_t cols, dnnl_format_tag_t tag)
{
    dnnl_dims_t dims = {rows, cols};
    return dnnl_memory_desc_init_by_tag(md, 2, dims, dnnl_f32, tag);
}
static void md_free(peer_md md) { (void)md; }
static dnnl_status_t matmul_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine, peer_md src,
                                      peer_md wei, peer_md dst)
{
    dnnl_matmul_desc_t desc;
    dnnl_status_t s = dnnl_matmul_desc_init(&desc, &src, &wei, NULL, &dst);
    if (s != dnnl_success) return s;
    return dnnl_primitive_desc_create(pd, &desc, NULL, engine, NULL);
}
#endif

static void onednn_release(bench_peer *p)
{
    if (p->matmul) dnnl_primitive_destroy(p->matmul);
    if (p->src) dnnl_memory_destroy(p->src);
    if (p->weights) dnnl_memory_destroy(p->weights);
    if (p->dst) dnnl_memory_destroy(p->dst);
    if (p->stream) dnnl_stream_destroy(p->stream);
    if (p->engine) dnnl_engine_destroy(p->engine);
}

static weft_status onednn_create(bench_peer *p, const float *B)
{
    weft_status st = WEFT_OK;
    peer_md src_md = {0}, wei_any = {0}, wei_user = {0}, dst_md = {0};
    dnnl_primitive_desc_t pd = NULL, reorder_pd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t b_user = NULL;

    onednn_set_threads(p->threads);
    if (!dnnl_ok(dnnl_engine_create(&p->engine, dnnl_cpu, 0), "engine create", &st) ||
        !dnnl_ok(dnnl_stream_create(&p->stream, p->engine, dnnl_stream_default_flags), "stream create",
                 &st))
        goto done;
    if (!dnnl_ok(md_make(&src_md, p->M, p->K, dnnl_ab), "src memory desc", &st) ||
        !dnnl_ok(md_make(&wei_any, p->K, p->N, dnnl_format_tag_any), "weights memory desc", &st) ||
        !dnnl_ok(md_make(&wei_user, p->K, p->N, dnnl_ab), "user weights memory desc", &st) ||
        !dnnl_ok(md_make(&dst_md, p->M, p->N, dnnl_ab), "dst memory desc", &st))
        goto done;
    if (!dnnl_ok(matmul_pd_create(&pd, p->engine, src_md, wei_any, dst_md), "matmul primitive desc", &st) ||
        !dnnl_ok(dnnl_primitive_create(&p->matmul, pd), "matmul primitive", &st))
        goto done;

    /* pack B once into the layout the primitive chose for its weights */
    peer_cmd wei_packed = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (!dnnl_ok(dnnl_memory_create(&p->weights, wei_packed, p->engine, DNNL_MEMORY_ALLOCATE),
                 "packed weights memory", &st) ||
        !dnnl_ok(dnnl_memory_create(&b_user, MD_REF(wei_user), p->engine, (void *)B), "user weights memory",
                 &st) ||
        !dnnl_ok(dnnl_reorder_primitive_desc_create(&reorder_pd, MD_REF(wei_user), p->engine, wei_packed,
                                                    p->engine, NULL),
                 "weights reorder primitive desc", &st) ||
        !dnnl_ok(dnnl_primitive_create(&reorder, reorder_pd), "weights reorder primitive", &st))
        goto done;
    dnnl_exec_arg_t rargs[] = {{DNNL_ARG_FROM, b_user}, {DNNL_ARG_TO, p->weights}};
    if (!dnnl_ok(dnnl_primitive_execute(reorder, p->stream, 2, rargs), "weights reorder", &st) ||
        !dnnl_ok(dnnl_stream_wait(p->stream), "weights reorder wait", &st))
        goto done;

    /* src and dst wrap the caller's buffers, set per run */
    if (!dnnl_ok(dnnl_memory_create(&p->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                                    p->engine, DNNL_MEMORY_NONE),
                 "src memory", &st) ||
        !dnnl_ok(dnnl_memory_create(&p->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                    p->engine, DNNL_MEMORY_NONE),
                 "dst memory", &st))
        goto done;
done:
    if (reorder) dnnl_primitive_destroy(reorder);
    if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
    if (b_user) dnnl_memory_destroy(b_user);
    if (pd) dnnl_primitive_desc_destroy(pd);
    md_free(src_md);
    md_free(wei_any);
    md_free(wei_user);
    md_free(dst_md);
    return st;
}

static weft_status onednn_run(bench_peer *p, const float *A, float *C)
{
    weft_status st = WEFT_OK;
    dnnl_exec_arg_t args[] = {
        {DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, p->dst}};
    onednn_set_threads(p->threads);
    if (dnnl_ok(dnnl_memory_set_data_handle(p->src, (void *)A), "set src handle", &st) &&
        dnnl_ok(dnnl_memory_set_data_handle(p->dst, C), "set dst handle", &st) &&
        dnnl_ok(dnnl_primitive_execute(p->matmul, p->stream, 3, args), "matmul execute", &st))
        (void)dnnl_ok(dnnl_stream_wait(p->stream), "matmul wait", &st);
    return st;
}

static const char *onednn_info(void)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(info_buf, sizeof info_buf, "oneDNN %d.%d.%d (%s), cpu runtime %s, isa %s, max threads %d",
             v->major, v->minor, v->patch, v->hash ? v->hash : "?", dnnl_runtime2str(v->cpu_runtime),
             dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()), onednn_max_threads());
    return info_buf;
}
#endif

/* ---- dispatch ------------------------------------------------------------------------ */

static weft_status parse_name(const char *name, peer_kind *kind)
{
    if (name && strcmp(name, "openblas") == 0) {
        *kind = PEER_OPENBLAS;
    } else if (name && strcmp(name, "onednn") == 0) {
        *kind = PEER_ONEDNN;
    } else {
        return weft_fail(WEFT_ERR_INVALID_ARG, "bench peer: unknown name '%s', expected openblas or onednn",
                         name ? name : "(null)");
    }
    return WEFT_OK;
}

static bool peer_built(peer_kind kind)
{
#ifdef WEFT_HAVE_OPENBLAS
    if (kind == PEER_OPENBLAS) return true;
#endif
#ifdef WEFT_HAVE_ONEDNN
    if (kind == PEER_ONEDNN) return true;
#endif
    (void)kind;
    return false;
}

weft_status bench_peer_create(const char *name, int M, int N, int K, int threads, const float *B,
                              bench_peer **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "bench_peer_create: out is NULL");
    *out = NULL;
    peer_kind kind;
    weft_status st = parse_name(name, &kind);
    if (st != WEFT_OK) return st;
    if (!peer_built(kind))
        return weft_fail(WEFT_ERR_UNAVAILABLE,
                         "bench peer %s: not built (lib%s-dev was not found at configure time)", name,
                         kind == PEER_OPENBLAS ? "openblas" : "dnnl");
    if (M <= 0 || N <= 0 || K <= 0 || !B)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "bench peer %s: M=%d N=%d K=%d B=%p, expected positive sizes and non-NULL B",
                         name, M, N, K, (const void *)B);
    bench_peer *p = calloc(1, sizeof *p);
    if (!p) return weft_fail(WEFT_ERR_NOMEM, "bench peer %s: out of memory", name);
    p->kind = kind;
    p->M = M;
    p->N = N;
    p->K = K;
    p->threads = resolve_threads(threads);
    p->B = B;
    switch (kind) {
#ifdef WEFT_HAVE_OPENBLAS
    case PEER_OPENBLAS: st = openblas_create(p); break;
#endif
#ifdef WEFT_HAVE_ONEDNN
    case PEER_ONEDNN: st = onednn_create(p, B); break;
#endif
    default: st = weft_fail(WEFT_ERR_INTERNAL, "bench peer %s: %s:%d", name, __FILE__, __LINE__); break;
    }
    if (st != WEFT_OK) {
        bench_peer_destroy(p);
        return st;
    }
    *out = p;
    return WEFT_OK;
}

weft_status bench_peer_run(bench_peer *p, const float *A, float *C)
{
    if (!p || !A || !C) return weft_fail(WEFT_ERR_INVALID_ARG, "bench_peer_run: NULL peer or buffer");
    switch (p->kind) {
#ifdef WEFT_HAVE_OPENBLAS
    case PEER_OPENBLAS: return openblas_run(p, A, C);
#endif
#ifdef WEFT_HAVE_ONEDNN
    case PEER_ONEDNN: return onednn_run(p, A, C);
#endif
    default: return weft_fail(WEFT_ERR_INTERNAL, "bench_peer_run: %s:%d", __FILE__, __LINE__);
    }
}

void bench_peer_destroy(bench_peer *p)
{
    if (!p) return;
#ifdef WEFT_HAVE_ONEDNN
    if (p->kind == PEER_ONEDNN) onednn_release(p);
#endif
    free(p);
}

const char *bench_peer_info(const char *name)
{
    bool openblas = name && strcmp(name, "openblas") == 0;
    bool onednn = name && strcmp(name, "onednn") == 0;
#ifdef WEFT_HAVE_OPENBLAS
    if (openblas) return openblas_info();
#endif
#ifdef WEFT_HAVE_ONEDNN
    if (onednn) return onednn_info();
#endif
    if (openblas || onednn)
        snprintf(info_buf, sizeof info_buf, "unavailable: the %s peer was not built", name);
    else
        snprintf(info_buf, sizeof info_buf, "unavailable: unknown peer '%s'", name ? name : "(null)");
    return info_buf;
}

/* This process's command line as a NULL-terminated argv pointing into *text (both the
 * caller's to free); NULL when it cannot be read. */
static char **own_command_line(char **text)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    *text = malloc(cap);
    if (*text) n = fread(*text, 1, cap - 1, f);
    bool whole = *text && feof(f) && !ferror(f) && n > 0;
    fclose(f);
    size_t argc = 0;
    for (size_t i = 0; whole && i < n; i++) argc += (*text)[i] == '\0';
    char **argv = whole ? malloc(sizeof *argv * (argc + 1)) : NULL;
    if (!argv) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n && k < argc; i += strlen(*text + i) + 1) argv[k++] = *text + i;
    argv[k] = NULL;
    return argv;
}

void bench_peers_settle(int vector_bits)
{
#if defined(WEFT_HAVE_OPENBLAS) || defined(WEFT_HAVE_ONEDNN)
    /* 1e5 spins of libgomp's wait loop and 2^20 cycles of OpenBLAS's keep a peer's threads
     * awake between its own back-to-back calls and asleep by the next row's turn (measured:
     * every row at its best, 128x3072x768 at two threads) */
    const char *vars[4][2] = {{"GOMP_SPINCOUNT", "100000"}, {"OPENBLAS_THREAD_TIMEOUT", "20"}};
    int n = 2;
    if (vector_bits == 256) { /* weft generates AVX2 code (--cpu): the peers' kernels too */
        vars[n][0] = "ONEDNN_MAX_CPU_ISA", vars[n++][1] = "AVX2";
        vars[n][0] = "OPENBLAS_CORETYPE", vars[n++][1] = "Haswell";
    } else if (vector_bits == 128) {
        vars[n][0] = "ONEDNN_MAX_CPU_ISA", vars[n++][1] = "SSE41";
        vars[n][0] = "OPENBLAS_CORETYPE", vars[n++][1] = "Nehalem";
    }
    bool changed = false;
    for (int i = 0; i < n; i++)
        if (!getenv(vars[i][0])) {
            if (setenv(vars[i][0], vars[i][1], 1) != 0) break;
            changed = true;
        }
    if (!changed) return;
    char *text = NULL, **argv = own_command_line(&text);
    if (argv) {
        fflush(NULL);
        execv("/proc/self/exe", argv);
    }
    free(argv);
    free(text);
    fprintf(stderr, "# peers: could not restart with their settings (spin bounds, ISA) in the environment: idle "
                    "library threads may slow the row timed after them, and the peers may use another ISA\n");
#else
    (void)vector_bits;
#endif
}
