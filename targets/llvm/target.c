/* The LLVM CPU target: loop IR -> LLVM IR (codegen.c) -> default<O3> for the host CPU
 * (jit.c) -> ORC LLJIT. One LLJIT per weft_target; every compiled kernel is its own module
 * with a unique symbol (weft_<name>_<counter>) and its own resource tracker, so
 * kernel_destroy removes its code from the JIT.
 *
 * Kernel ABI: void sym(void **args, void *pool); args[i] is param i's base pointer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/llvm/llvm_internal.h"
#include "targets/llvm/llvm_test.h"
#include "runtime/mem.h"

static void llvm_destroy(weft_target *t)
{
    if (!t) return;
    weft_llvm_jit_destroy(t);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static weft_status llvm_create(weft_target **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm create: out is NULL");
    *out = NULL;
    weft_target *t = weft_calloc(1, sizeof *t);
    if (!t) return weft_fail(WEFT_ERR_NOMEM, "llvm create: target");
    if (pthread_mutex_init(&t->lock, NULL)) {
        free(t);
        return weft_fail(WEFT_ERR_NOMEM, "llvm create: mutex");
    }
    weft_status st = weft_llvm_jit_create(t);
    if (st != WEFT_OK) {
        llvm_destroy(t);
        return st;
    }
    *out = t;
    return WEFT_OK;
}

static void llvm_caps(const weft_target *t, weft_target_caps *out)
{
    weft_target_caps c = {0};
    c.name = "llvm";
    const char *fs = t ? t->features : "";
    weft_llvm_fill_machine_caps(fs, &c);
    c.max_threads = weft_rt_cores();
    c.has_thread_binding = false;
    c.scopes[WEFT_SCOPE_GLOBAL] = c.scopes[WEFT_SCOPE_LOCAL] = true;
    if (t) {
        snprintf(c.cpu, sizeof c.cpu, "%s", t->cpu);
        /* Only the enabled features, cut at an entry boundary to fit. */
        size_t len = 0;
        for (const char *p = fs; p && *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (*p == '+' && len + n + 2 <= sizeof c.features) {
                if (len) c.features[len++] = ',';
                memcpy(c.features + len, p, n);
                len += n;
                c.features[len] = '\0';
            }
            p = e ? e + 1 : NULL;
        }
    }
    *out = c;
}

static weft_status check_func(const weft_loop_func *f)
{
    if (!f || !f->body) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm compile: no loop function or body");
    if (f->n_params < 0 || (f->n_params > 0 && !f->params))
        return weft_fail(WEFT_ERR_INVALID_ARG, "llvm compile %s: bad parameter list (n_params=%d)",
                         f->name ? f->name : "?", f->n_params);
    for (int i = 0; i < f->n_params; i++)
        if (!f->params[i])
            return weft_fail(WEFT_ERR_INVALID_ARG, "llvm compile %s: param %d is NULL", f->name ? f->name : "?", i);
    return WEFT_OK;
}

/* "weft_<name>_<counter>" with the name reduced to [A-Za-z0-9_]. */
static void make_symbol(weft_target *t, const weft_loop_func *f, char *sym, size_t cap)
{
    char name[64];
    const char *src = f->name && *f->name ? f->name : "kernel";
    size_t n = 0;
    for (; src[n] && n + 1 < sizeof name; n++) {
        char ch = src[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        name[n] = ok ? ch : '_';
    }
    name[n] = '\0';
    snprintf(sym, cap, "weft_%s_%llu", name, (unsigned long long)++t->counter);
}

/* Builds and optimises the module of f in a fresh thread-safe context. */
static weft_status build_optimized(weft_target *t, const weft_loop_func *f, const char *sym,
                                   LLVMOrcThreadSafeContextRef *tsc_out, LLVMModuleRef *mod_out)
{
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    if (!tsc) return weft_fail(WEFT_ERR_NOMEM, "llvm: thread-safe context");
    LLVMModuleRef mod = NULL;
    weft_status st = weft_llvm_codegen(t, LLVMOrcThreadSafeContextGetContext(tsc), f, sym, &mod);
    if (st == WEFT_OK) st = weft_llvm_optimize(t, mod);
    if (st != WEFT_OK) {
        if (mod) LLVMDisposeModule(mod);
        LLVMOrcDisposeThreadSafeContext(tsc);
        return st;
    }
    *tsc_out = tsc;
    *mod_out = mod;
    return WEFT_OK;
}

static weft_status llvm_compile(weft_target *t, const weft_loop_func *f, weft_kernel **out)
{
    if (!t || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm compile: NULL target or out");
    *out = NULL;
    weft_status st = check_func(f);
    if (st != WEFT_OK) return st;
    weft_kernel *k = weft_calloc(1, sizeof *k);
    if (!k) return weft_fail(WEFT_ERR_NOMEM, "llvm compile: kernel");
    k->t = t;
    k->n_params = f->n_params;

    pthread_mutex_lock(&t->lock);
    char sym[128];
    make_symbol(t, f, sym, sizeof sym);
    LLVMOrcThreadSafeContextRef tsc = NULL;
    LLVMModuleRef mod = NULL;
    st = build_optimized(t, f, sym, &tsc, &mod);
    const char *dump = getenv("WEFT_DUMP"); /* "asm" (or "all"): each compiled kernel's assembly */
    if (st == WEFT_OK && dump && (strstr(dump, "asm") || strstr(dump, "all"))) {
        char *text = NULL;
        if (weft_llvm_emit_asm(t, mod, &text) == WEFT_OK && text)
            fprintf(stderr, "=== %s: assembly ===\n%s", f->name, text);
        free(text);
    }
    if (st == WEFT_OK) {
        LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
        LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps the context alive */
        st = weft_llvm_jit_add(t, tsm, sym, k);
    }
    pthread_mutex_unlock(&t->lock);
    if (st != WEFT_OK) {
        free(k);
        return st;
    }
    *out = k;
    return WEFT_OK;
}

static weft_status llvm_run(weft_kernel *k, void *const *args, const weft_exec *ex)
{
    if (!k || !k->fn) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm run: no kernel");
    if (!args && k->n_params > 0) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm run: args is NULL for %d params", k->n_params);
    unsigned long failures = weft_rt_alloc_failures();
    k->fn((void **)args, ex ? ex->pool : NULL);
    if (weft_rt_alloc_failures() != failures)
        return weft_fail(WEFT_ERR_NOMEM, "llvm run: out of memory for a kernel's local buffer");
    return WEFT_OK;
}

static void llvm_kernel_destroy(weft_kernel *k)
{
    if (!k) return;
    if (k->rt) {
        pthread_mutex_lock(&k->t->lock);
        LLVMErrorRef err = LLVMOrcResourceTrackerRemove(k->rt);
        if (err) LLVMConsumeError(err);
        LLVMOrcReleaseResourceTracker(k->rt);
        pthread_mutex_unlock(&k->t->lock);
    }
    free(k);
}

static weft_status llvm_dump(weft_target *t, const weft_loop_func *f, weft_dump_kind kind, char **out)
{
    if (!t || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "llvm dump: NULL target or out");
    *out = NULL;
    weft_status st = check_func(f);
    if (st != WEFT_OK) return st;
    if (kind != WEFT_DUMP_IR && kind != WEFT_DUMP_ASM)
        return weft_fail(WEFT_ERR_INVALID_ARG, "llvm dump: unknown dump kind %d", (int)kind);

    pthread_mutex_lock(&t->lock);
    char sym[128];
    make_symbol(t, f, sym, sizeof sym);
    LLVMOrcThreadSafeContextRef tsc = NULL;
    LLVMModuleRef mod = NULL;
    st = build_optimized(t, f, sym, &tsc, &mod);
    if (st == WEFT_OK) {
        if (kind == WEFT_DUMP_ASM) {
            st = weft_llvm_emit_asm(t, mod, out);
        } else {
            char *ir = LLVMPrintModuleToString(mod);
            *out = ir ? weft_strdup(ir) : NULL;
            if (ir) LLVMDisposeMessage(ir);
            if (!*out) st = weft_fail(WEFT_ERR_NOMEM, "llvm dump: IR text");
        }
        LLVMDisposeModule(mod);
        LLVMOrcDisposeThreadSafeContext(tsc);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

const weft_target_ops weft_target_llvm_ops = {
    .name = "llvm",
    .create = llvm_create,
    .destroy = llvm_destroy,
    .caps = llvm_caps,
    .compile = llvm_compile,
    .run = llvm_run,
    .kernel_destroy = llvm_kernel_destroy,
    .dump = llvm_dump,
};

void weft_llvm_test_set_slow_gather(weft_target *t, bool slow)
{
    if (t) t->slow_gather = slow;
}
