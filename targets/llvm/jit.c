/* LLVM session plumbing: native target initialisation, the host target machine, the O3 pass
 * pipeline, the ORC LLJIT that owns compiled kernels, assembly text, and the conversion of LLVM
 * errors into weft_fail messages (the one place that reads LLVMErrorRef).
 *
 * The JIT resolves the runtime entry points (weft_rt_parallel_for, weft_rt_alloc(_uninit),
 * weft_rt_free) as absolute symbols defined in the main JITDylib, so no -rdynamic is needed;
 * libm functions (tanhf, erff, expf, ...) come from a process-symbol generator.
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "targets/llvm/llvm_internal.h"
#include "runtime/mem.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok;

static void init_native(void)
{
    init_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter() &&
              !LLVMInitializeNativeAsmParser();
}

weft_status weft_llvm_fail_error(weft_status st, LLVMErrorRef err, const char *what)
{
    if (!err) return weft_fail(st, "llvm: %s failed", what);
    char *msg = LLVMGetErrorMessage(err); /* consumes err */
    weft_fail(st, "llvm: %s: %s", what, msg ? msg : "(no message)");
    LLVMDisposeErrorMessage(msg);
    return st;
}

static LLVMTargetMachineRef make_tm(const weft_target *t, char **err_msg)
{
    LLVMTargetRef target = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &target, err_msg)) return NULL;
    return LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, LLVMCodeGenLevelAggressive,
                                   LLVMRelocPIC, LLVMCodeModelJITDefault);
}

/* Defines the runtime functions generated code calls as absolute symbols in jd. */
static weft_status define_runtime_symbols(weft_target *t, LLVMOrcJITDylibRef jd)
{
    struct { const char *name; uint64_t addr; } rt[] = {
        {"weft_rt_parallel_for", (uint64_t)(uintptr_t)&weft_rt_parallel_for},
        {"weft_rt_alloc", (uint64_t)(uintptr_t)&weft_rt_alloc},
        {"weft_rt_alloc_uninit", (uint64_t)(uintptr_t)&weft_rt_alloc_uninit},
        {"weft_rt_free", (uint64_t)(uintptr_t)&weft_rt_free},
    };
    enum { N = sizeof rt / sizeof rt[0] };
    LLVMOrcCSymbolMapPair pairs[N];
    for (int i = 0; i < N; i++) {
        pairs[i].Name = LLVMOrcLLJITMangleAndIntern(t->jit, rt[i].name);
        pairs[i].Sym.Address = rt[i].addr;
        pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, N);
    LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, mu);
    if (err) {
        LLVMOrcDisposeMaterializationUnit(mu);
        return weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "defining runtime symbols");
    }
    return WEFT_OK;
}

weft_status weft_llvm_jit_create(weft_target *t)
{
    weft_status st;
    pthread_once(&init_once, init_native);
    if (!init_ok) return weft_fail(WEFT_ERR_UNAVAILABLE, "llvm: native target could not be initialised");
    t->triple = LLVMGetDefaultTargetTriple();
    char *host_cpu = LLVMGetHostCPUName(), *host_features = LLVMGetHostCPUFeatures();
    t->cpu = host_cpu ? weft_strdup(host_cpu) : NULL;
    t->features = host_features ? weft_strdup(host_features) : NULL;
    if (host_cpu) LLVMDisposeMessage(host_cpu);
    if (host_features) LLVMDisposeMessage(host_features);
    if (!t->triple || !t->cpu || !t->features) return weft_fail(WEFT_ERR_NOMEM, "llvm: host description");
    st = weft_llvm_select_cpu(t);
    if (st != WEFT_OK) return st;
    /* AMD Zen 1-5 run vector gathers as about one load per lane or more (Intel's since Skylake
     * are several times cheaper): codegen avoids them where a contiguous read can do (vector.c,
     * stride-2 padding) */
    t->slow_gather = !strncmp(t->cpu, "znver", 5);

    char *msg = NULL;
    t->tm = make_tm(t, &msg);
    if (!t->tm) goto tm_fail;
    LLVMTargetMachineRef jit_tm = make_tm(t, &msg); /* consumed by the JTMB below */
    if (!jit_tm) goto tm_fail;

    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder,
                                                  LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
    LLVMErrorRef err = LLVMOrcCreateLLJIT(&t->jit, builder); /* consumes builder */
    if (err) {
        t->jit = NULL;
        return weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "creating the LLJIT");
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(t->jit);
    st = define_runtime_symbols(t, jd);
    if (st != WEFT_OK) return st;
    LLVMOrcDefinitionGeneratorRef gen = NULL;
    err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(t->jit), NULL, NULL);
    if (err) return weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "process symbol generator");
    LLVMOrcJITDylibAddGenerator(jd, gen);
    return WEFT_OK;

tm_fail:
    st = weft_fail(WEFT_ERR_UNAVAILABLE, "llvm: no target machine for %s (%s): %s", t->triple, t->cpu,
                   msg ? msg : "unknown error");
    if (msg) LLVMDisposeMessage(msg);
    return st;
}

void weft_llvm_jit_destroy(weft_target *t)
{
    if (t->jit) {
        LLVMErrorRef err = LLVMOrcDisposeLLJIT(t->jit);
        if (err) LLVMConsumeError(err);
    }
    if (t->tm) LLVMDisposeTargetMachine(t->tm);
    if (t->triple) LLVMDisposeMessage(t->triple);
    free(t->cpu);
    free(t->features);
}

weft_status weft_llvm_optimize(weft_target *t, LLVMModuleRef mod)
{
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
    LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
    LLVMErrorRef err = LLVMRunPasses(mod, "default<O3>", t->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (err) return weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "running default<O3>");
    return WEFT_OK;
}

weft_status weft_llvm_jit_add(weft_target *t, LLVMOrcThreadSafeModuleRef tsm, const char *sym, weft_kernel *k)
{
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(t->jit);
    k->rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    LLVMErrorRef err = LLVMOrcLLJITAddLLVMIRModuleWithRT(t->jit, k->rt, tsm);
    if (err) {
        weft_status st = weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "adding the module to the JIT");
        LLVMOrcReleaseResourceTracker(k->rt);
        k->rt = NULL;
        return st;
    }
    LLVMOrcExecutorAddress addr = 0;
    err = LLVMOrcLLJITLookup(t->jit, &addr, sym);
    if (err || !addr) {
        weft_status st = weft_llvm_fail_error(WEFT_ERR_COMPILE, err, "looking up the kernel symbol");
        LLVMErrorRef rerr = LLVMOrcResourceTrackerRemove(k->rt);
        if (rerr) LLVMConsumeError(rerr);
        LLVMOrcReleaseResourceTracker(k->rt);
        k->rt = NULL;
        return st;
    }
    k->fn = (void (*)(void **, void *))(uintptr_t)addr;
    return WEFT_OK;
}

weft_status weft_llvm_emit_asm(weft_target *t, LLVMModuleRef mod, char **out)
{
    char *msg = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(t->tm, mod, LLVMAssemblyFile, &msg, &buf)) {
        weft_status st = weft_fail(WEFT_ERR_COMPILE, "llvm: emitting assembly: %s", msg ? msg : "unknown error");
        if (msg) LLVMDisposeMessage(msg);
        return st;
    }
    if (msg) LLVMDisposeMessage(msg);
    size_t n = LLVMGetBufferSize(buf);
    char *s = weft_malloc(n + 1);
    if (!s) {
        LLVMDisposeMemoryBuffer(buf);
        return weft_fail(WEFT_ERR_NOMEM, "llvm: assembly text of %zu bytes", n);
    }
    memcpy(s, LLVMGetBufferStart(buf), n);
    s[n] = '\0';
    LLVMDisposeMemoryBuffer(buf);
    *out = s;
    return WEFT_OK;
}
