/* The weft command: dispatches to subcommands.
 *
 *   weft show OP --shape S [--schedule naive|default|manual|random:SEED] [--steps TEXT|@FILE]
 *             [--target llvm|interp] [--print te,schedule,loop,llvm,asm]
 *   weft bench op OP --shape S [--threads T] [--csv] [--min-time SEC]
 *   weft run MODEL.onnx --input X.bin [--output Y.bin] [--threads T] [--repeat N] [--profile]
 *   weft show MODEL.onnx                       the fused kernels of a model
 *   weft bench model MODEL.onnx [--threads T] [--csv] [--repeat N] [--db DB]
 *   weft tune MODEL.onnx --db DB [--trials N | --time S] [--threads T] [--seed S] [--curve CSV]
 *   weft tune --op OP --shape S --db DB [...]
 *   weft db ls|export|import|prune|best DB ...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "weft/weft.h"

int weft_cli_parse_shape(const char *s, int64_t *out, int max)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || n == max) return -1;
        out[n++] = v;
        if (*end == ',') end++;
        else if (*end) return -1;
        p = end;
    }
    return n;
}

const char *weft_cli_opt(int argc, char **argv, const char *name)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], name)) return i + 1 < argc && strncmp(argv[i + 1], "--", 2) ? argv[i + 1] : "";
    return NULL;
}

char *weft_cli_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: weft <command> ...\n"
            "  weft show OP --shape S [--schedule naive|default|manual|random:SEED] [--steps TEXT|@FILE]\n"
            "            [--target llvm|interp] [--print te,schedule,loop,llvm,asm]\n"
            "  weft bench op OP --shape S [--threads T] [--csv] [--min-time SEC]\n"
            "  weft run MODEL.onnx --input X.bin [--output Y.bin] [--threads T] [--repeat N] [--profile]\n"
            "  weft show MODEL.onnx\n"
            "  weft bench model MODEL.onnx [--threads T] [--csv] [--repeat N] [--db DB]\n"
            "  weft tune MODEL.onnx --db DB [--trials N | --time S] [--threads T] [--seed S] [--curve CSV]\n"
            "  weft tune --op OP --shape S --db DB [--trials N | --time S] ...\n"
            "  weft db ls|export|prune DB | weft db import DB FILE | weft db best DB OP --shape S\n"
            "  weft --version\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("weft %s\n", weft_version());
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "show") && strstr(argv[2], ".onnx")) return weft_cmd_show_model(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "show")) return weft_cmd_show(argc - 2, argv + 2);
    if (argc >= 3 && !strcmp(argv[1], "bench") && !strcmp(argv[2], "model")) return weft_cmd_bench_model(argc - 3, argv + 3);
    if (argc >= 2 && !strcmp(argv[1], "bench")) return weft_cmd_bench(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "run")) return weft_cmd_run(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "tune")) return weft_cmd_tune(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "db")) return weft_cmd_db(argc - 2, argv + 2);
    if (argc >= 2) fprintf(stderr, "weft: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
