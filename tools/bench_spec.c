/* weft bench op, as the weft command sees it: the option table (for help) and the hand-over to
 * the weft-bench executable, which holds the benchmark and its vendor peers (OpenBLAS,
 * oneDNN) so that weft itself links neither. weft-bench is looked up next to the running weft
 * (the build tree and an installed bin/ both keep them side by side).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli.h"
#include "runtime/mem.h"

static const weft_opt bench_op_opts[] = {
    {"--shape", WEFT_OPT_STRING, "S", 0, 0, false, "the op's sizes, comma-separated (see the ops below); required"},
    WEFT_CLI_OPT_THREADS("threads for weft and the peers (default: the cores)"),
    {"--min-time", WEFT_OPT_FLOAT, "SEC", 0, 3600, false, "time each row for at least SEC seconds (default 1)"},
    {"--csv", WEFT_OPT_FLAG, NULL, 0, 0, false, "print CSV: kernel,shape,schedule,threads,median_us,gflops"},
    {"--fastest", WEFT_OPT_FLAG, NULL, 0, 0, false,
     "report each row's fastest run instead of its median (the column is fastest_us): on a machine shared "
     "with other work"},
    {"--db", WEFT_OPT_STRING, "DB", 0, 0, false, "add a tuned row with this database's best record for the kernel"},
    {"--target", WEFT_OPT_STRING, "NAME", 0, 0, false,
     "llvm (default), interp, cuda or cuda:sm_XX; on a device the default and tuned rows run there (a row is "
     "launches + synchronize, data stays on the device) and are checked against the naive schedule on llvm"},
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_bench_op = {
    "bench op", "OP --shape S [--threads T] [--min-time SEC] [--csv] [--fastest] [--db DB] [--target NAME] [--cpu NAME]", 1, 1,
    "Times one op under every schedule (naive, default, manual for matmul-like ops, tuned with --db) and, for\n"
    "matmul, OpenBLAS and oneDNN; every row is checked against the naive schedule's output.",
    bench_op_opts,
    "ops and their --shape: matmul M,N,K; dense_bias_relu M,N,K; conv2d N,C,H,W,F,KH,KW,stride,pad;\n"
    "softmax M,N; layer_norm M,N; reduce_sum M,N; elementwise ops (relu, add, ...) over any shape.\n",
};

int weft_cli_exec_sibling(const char *exe, const char *cmd, const char *target, int argc, char **argv)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) {
        fprintf(stderr, "weft %s: cannot find the weft executable's folder (/proc/self/exe: %s)\n", cmd, strerror(errno));
        return 1;
    }
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash + 1 - path) + strlen(exe) + 1 > sizeof path) {
        fprintf(stderr, "weft %s: cannot place %s next to '%s'\n", cmd, exe, path);
        return 1;
    }
    strcpy(slash + 1, exe);
    char **av = weft_calloc((size_t)argc + 2, sizeof *av);
    if (!av) {
        fprintf(stderr, "weft %s: out of memory\n", cmd);
        return 1;
    }
    av[0] = (char *)exe;
    for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
    fflush(NULL);
    execv(path, av);
    fprintf(stderr, "weft %s: cannot run %s (%s); it is built with weft (cmake --build ... --target %s)\n", cmd, path,
            strerror(errno), target);
    free(av);
    return 1;
}

int weft_cli_exec_bench(int argc, char **argv) { return weft_cli_exec_sibling("weft-bench", "bench", "weft_bench", argc, argv); }
