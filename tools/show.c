/* weft show: prints, for an op and a schedule, the tensor expressions, the steps, the loop IR,
 * and the target's LLVM IR and assembly. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "targets/target.h"
#ifdef WEFT_WITH_CUDA
#include "targets/cuda/cuda.h"
#endif
#ifdef WEFT_WITH_HIP
#include "targets/hip/hip.h"
#endif
#include "tools/cli.h"

static bool schedule_name_ok(const char *which);

weft_status weft_cli_apply_schedule(weft_schedule *s, const char *which, const char *steps, const weft_target_caps *caps)
{
    weft_status rc = WEFT_OK;
    if (!which || !strcmp(which, "naive")) rc = WEFT_OK;
    else if (!strcmp(which, "default")) rc = weft_schedule_default(s, caps);
    else if (!strcmp(which, "manual")) rc = weft_schedule_manual_matmul(s, caps);
    else if (!strncmp(which, "random:", 7) && schedule_name_ok(which))
        rc = weft_schedule_random(s, strtoull(which + 7, NULL, 10), 16);
    else
        return weft_fail(WEFT_ERR_INVALID_ARG, "unknown schedule '%s' (expected naive, default, manual or random:SEED)",
                         which);
    if (rc != WEFT_OK || !steps) return rc;
    if (steps[0] == '@') {
        char *text = weft_cli_read_file(steps + 1);
        if (!text) return weft_fail(WEFT_ERR_IO, "cannot read steps file %s", steps + 1);
        rc = weft_schedule_apply_text(s, text);
        free(text);
        return rc;
    }
    return weft_schedule_apply_text(s, steps);
}

static const char *const print_parts[] = {"te", "schedule", "loop", "llvm", "asm", "cuda", "ptx", "hip", "hsaco"};

static bool wants(const char *list, const char *what)
{
    if (!list) return true;
    size_t n = strlen(what);
    for (const char *p = list; (p = strstr(p, what)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

/* Every comma-separated word of --print must name a part; returns the first that does not. */
static const char *bad_print_part(const char *list, char *buf, size_t n)
{
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof print_parts / sizeof print_parts[0]; i++)
            known |= strlen(print_parts[i]) == len && !strncmp(print_parts[i], p, len);
        if (!known) {
            snprintf(buf, n, "%.*s", (int)len, p);
            return buf;
        }
        p += len;
        if (!*p) return NULL;
    }
}

/* --schedule: naive, default, manual or random:SEED with SEED a whole number. */
static bool schedule_name_ok(const char *which)
{
    if (!strcmp(which, "naive") || !strcmp(which, "default") || !strcmp(which, "manual")) return true;
    if (strncmp(which, "random:", 7) || !isdigit((unsigned char)which[7])) return false;
    char *end;
    errno = 0;
    strtoull(which + 7, &end, 10);
    return !*end && !errno;
}

static const weft_opt show_opts[] = {
    {"--shape", WEFT_OPT_STRING, "S", 0, 0, false, "the op's sizes, comma-separated (see the ops below)"},
    {"--schedule", WEFT_OPT_STRING, "NAME", 0, 0, false, "naive (default; on GPU targets without --steps: default), default, manual or random:SEED"},
    {"--steps", WEFT_OPT_STRING, "TEXT|@FILE", 0, 0, false, "schedule steps applied after --schedule (';' or newline separated)"},
    {"--target", WEFT_OPT_STRING, "NAME", 0, 0, false, "llvm (default), interp, cuda, cuda:sm_XX, hip or hip:gfxNNN"},
    {"--print", WEFT_OPT_STRING, "PARTS", 0, 0, false, "what to print, comma-separated: te,schedule,loop,llvm,asm (CPU targets), cuda,ptx (cuda targets), hip,hsaco (hip targets: source, code object summary) (default: all)"},
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_show = {
    "show", "OP --shape S [--schedule NAME] [--steps TEXT|@FILE] [--target llvm|interp|cuda[:sm_XX]|hip[:gfxNNN]] [--print PARTS] [--cpu NAME]", 1, 1,
    "Prints an op's tensor expressions, schedule steps and stages, loop IR, and the target's LLVM IR and assembly.",
    show_opts,
    "ops and their --shape: matmul M,N,K; dense_bias_relu M,N,K; conv2d N,C,H,W,F,KH,KW,stride,pad;\n"
    "softmax M,N; layer_norm M,N; reduce_sum M,N; elementwise ops (relu, add, ...) over any shape.\n"
    "example: weft show matmul --shape 512,512,512 --schedule manual --print te,schedule,loop\n",
};

const weft_target_ops *weft_cli_target(const weft_args *a)
{
    const char *name = weft_args_str(a, "--target", "llvm");
    if (strcmp(name, "llvm") && strcmp(name, "interp") && strcmp(name, "cuda") && strncmp(name, "cuda:", 5) &&
        strcmp(name, "hip") && strncmp(name, "hip:", 4)) {
        weft_args_fail(a->spec, "--target expects llvm, interp, cuda, cuda:sm_XX, hip or hip:gfxNNN, got '%s'", name);
        return NULL;
    }
    const weft_target_ops *ops = weft_target_find(name);
    if (!ops) weft_args_fail(a->spec, "--target %s: %s", name, weft_last_error());
    return ops;
}

bool weft_cli_device_ready(const char *target, const char *cmd)
{
#ifdef WEFT_WITH_CUDA
    char why[256];
    if (!strncmp(target, "cuda", 4) && !weft_cuda_driver_available(why, sizeof why)) {
        fprintf(stderr, "%s: %s; --target %s cannot run here (weft show --target %s compiles without one)\n", cmd, why,
                target, target);
        return false;
    }
#endif
#ifdef WEFT_WITH_HIP
    char hwhy[320];
    if (!strncmp(target, "hip", 3) && !weft_hip_device_available(hwhy, sizeof hwhy)) {
        bool no_rt = !strncmp(hwhy, "no HIP runtime", 14); /* hiprtc is in the runtime library too */
        fprintf(stderr, "%s: %s; --target %s cannot run here (weft show --target %s %s)\n", cmd, hwhy, target, target,
                no_rt ? "--print hip prints the source without it" : "compiles without one");
        return false;
    }
#endif
    (void)target, (void)cmd;
    return true;
}

int weft_cmd_show(int argc, char **argv)
{
    weft_args args;
    int ex = weft_args_parse(&weft_spec_show, argc, argv, &args);
    if (ex >= 0) return ex;
    const char *op = args.pos[0];
    const char *which = weft_args_str(&args, "--schedule", NULL), *steps = weft_args_str(&args, "--steps", NULL);
    const char *print = weft_args_str(&args, "--print", NULL);
    int64_t shape[16];
    int n = weft_cli_shape(&args, shape, 16);
    if (n < 0) return 2;
    char bad[64];
    if (print && bad_print_part(print, bad, sizeof bad))
        return weft_args_fail(&weft_spec_show, "--print: unknown part '%s' (expected a comma-separated list of te, "
                                               "schedule, loop, llvm, asm, cuda, ptx, hip, hsaco)", bad);
    if (which && !schedule_name_ok(which))
        return weft_args_fail(&weft_spec_show, "--schedule expects naive, default, manual or random:SEED, got '%s'", which);
    const weft_target_ops *ops = weft_cli_target(&args);
    if (!ops) return 2;
    int status = 1;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_schedule *s = NULL;
    weft_target *t = NULL;
    weft_target_caps caps;
    weft_loop_func *lf = NULL;
    if (weft_op_build(a, op, n, shape, &f) != WEFT_OK || weft_schedule_create(f, &s) != WEFT_OK ||
        ops->create(&t) != WEFT_OK)
        goto done;
    ops->caps(t, &caps);
    if (!which && !steps && caps.has_thread_binding) which = "default"; /* a naive nest is not launchable */
    if (weft_cli_apply_schedule(s, which, steps, &caps) != WEFT_OK) goto done;
    if (wants(print, "te")) {
        char *te = weft_te_func_str(f);
        printf("# tensor expressions\n%s\n", te ? te : "");
        free(te);
    }
    if (wants(print, "schedule")) {
        char *txt = weft_schedule_text(s);
        printf("# steps\n%s\n# stages\n", txt ? txt : "");
        free(txt);
        weft_schedule_print(s, stdout);
        printf("\n");
    }
    if (weft_lower(s, &caps, a, &lf) != WEFT_OK) goto done;
    if (wants(print, "loop")) {
        char *txt = weft_ir_func_str(lf);
        printf("# loop IR\n%s\n", txt ? txt : "");
        free(txt);
    }
    /* GPU targets print their source and PTX (CUDA) or code object summary (HIP) instead */
    int kind = !caps.has_thread_binding ? 0 : caps.name && !strcmp(caps.name, "hip") ? 2 : 1;
    static const char *const parts[3][2] = {{"llvm", "asm"}, {"cuda", "ptx"}, {"hip", "hsaco"}};
    static const char *const titles[3][2] = {{"LLVM IR", "assembly"}, {"CUDA C", "PTX"}, {"HIP C++", "code object"}};
    for (int k = 0; k < 2; k++) {
        if (!wants(print, parts[kind][k]) || !ops->dump) continue;
        char *txt = NULL;
        if (ops->dump(t, lf, k == 0 ? WEFT_DUMP_IR : WEFT_DUMP_ASM, &txt) != WEFT_OK) goto done;
        printf("# %s (%s)\n%s\n", titles[kind][k], ops->name, txt);
        free(txt);
    }
    status = 0;
done:
    if (status) fprintf(stderr, "weft show: %s\n", weft_last_error());
    if (t) ops->destroy(t);
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return status;
}
