/* weft show: prints, for an op and a schedule, the tensor expressions, the steps, the loop IR,
 * and the target's LLVM IR and assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "targets/target.h"
#include "tools/cli.h"

weft_status weft_cli_apply_schedule(weft_schedule *s, const char *which, const char *steps, const weft_target_caps *caps)
{
    weft_status rc = WEFT_OK;
    if (!which || !strcmp(which, "naive")) rc = WEFT_OK;
    else if (!strcmp(which, "default")) rc = weft_schedule_default(s, caps);
    else if (!strcmp(which, "manual")) rc = weft_schedule_manual_matmul(s, caps);
    else if (!strncmp(which, "random:", 7)) rc = weft_schedule_random(s, strtoull(which + 7, NULL, 10), 16);
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

static bool wants(const char *list, const char *what)
{
    if (!list) return true;
    size_t n = strlen(what);
    for (const char *p = list; (p = strstr(p, what)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

int weft_cmd_show(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        fprintf(stderr, "usage: weft show OP --shape S [--schedule ...] [--steps ...] [--print te,schedule,loop,llvm,asm]\n%s",
                weft_op_usage());
        return 2;
    }
    const char *op = argv[0], *shape_s = weft_cli_opt(argc, argv, "--shape");
    const char *which = weft_cli_opt(argc, argv, "--schedule"), *steps = weft_cli_opt(argc, argv, "--steps");
    const char *tname = weft_cli_opt(argc, argv, "--target"), *print = weft_cli_opt(argc, argv, "--print");
    int64_t shape[16];
    int n = shape_s ? weft_cli_parse_shape(shape_s, shape, 16) : -1;
    if (n < 0) {
        fprintf(stderr, "weft show: --shape must be a comma-separated list of integers\n");
        return 2;
    }
    int status = 1;
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_schedule *s = NULL;
    weft_target *t = NULL;
    const weft_target_ops *ops = weft_target_find(tname && *tname ? tname : "llvm");
    if (!ops) ops = weft_target_find("interp");
    weft_target_caps caps;
    weft_loop_func *lf = NULL;
    if (weft_op_build(a, op, n, shape, &f) != WEFT_OK || weft_schedule_create(f, &s) != WEFT_OK ||
        ops->create(&t) != WEFT_OK)
        goto done;
    ops->caps(t, &caps);
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
    if (weft_lower(s, a, &lf) != WEFT_OK) goto done;
    if (wants(print, "loop")) {
        char *txt = weft_ir_func_str(lf);
        printf("# loop IR\n%s\n", txt ? txt : "");
        free(txt);
    }
    for (int k = 0; k < 2; k++) {
        const char *what = k == 0 ? "llvm" : "asm";
        if (!wants(print, what) || !ops->dump) continue;
        char *txt = NULL;
        if (ops->dump(t, lf, k == 0 ? WEFT_DUMP_IR : WEFT_DUMP_ASM, &txt) != WEFT_OK) goto done;
        printf("# %s (%s)\n%s\n", k == 0 ? "LLVM IR" : "assembly", ops->name, txt);
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
