/* The weft command: dispatches to subcommands, prints help.
 *
 *   weft show OP --shape S [...]        weft show MODEL.onnx [...]
 *   weft run MODEL.onnx --input [NAME=]FILE ... [...]
 *   weft bench op OP --shape S [...]    weft bench model MODEL.onnx [...]
 *   weft tune MODEL.onnx --db DB [...]  weft tune --op OP --shape S --db DB [...]
 *   weft db ls|check|export|import|prune|best DB ...
 *   weft help [COMMAND [SUBCOMMAND]]    weft --version
 *
 * Every subcommand parses its arguments with tools/opts.c by the table next to its code; the
 * tables are listed here once, for help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "weft/weft.h"

/* Every subcommand, by the words that name it, in the order help lists them. */
static const struct {
    const char *cmd, *sub; /* sub: NULL for one-word commands */
    const weft_cmd_spec *spec;
} commands[] = {
    {"show", "OP", &weft_spec_show},
    {"show", "MODEL", &weft_spec_show_model},
    {"run", NULL, &weft_spec_run},
    {"bench", "op", &weft_spec_bench_op},
    {"bench", "model", &weft_spec_bench_model},
    {"tune", NULL, &weft_spec_tune},
    {"db", "ls", &weft_spec_db_ls},
    {"db", "check", &weft_spec_db_check},
    {"db", "export", &weft_spec_db_export},
    {"db", "import", &weft_spec_db_import},
    {"db", "prune", &weft_spec_db_prune},
    {"db", "best", &weft_spec_db_best},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *out)
{
    fprintf(out, "usage: weft <command> [arguments] [options]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(out, "  weft %s %s\n", commands[i].spec->name, commands[i].spec->usage);
    fprintf(out, "  weft help [COMMAND [SUBCOMMAND]]\n"
                 "  weft --version\n\n"
                 "'weft help COMMAND' or 'weft COMMAND --help' lists a command's options.\n");
}

/* weft help [CMD [SUB]]: the help of every subcommand that matches, on stdout. */
static int help(int argc, char **argv)
{
    if (argc == 0) {
        usage(stdout);
        return 0;
    }
    int shown = 0;
    for (int i = 0; i < N_COMMANDS; i++) {
        if (strcmp(commands[i].cmd, argv[0])) continue;
        if (argc > 1 && (!commands[i].sub || strcmp(commands[i].sub, argv[1]))) continue;
        if (shown++) printf("\n");
        weft_args_help(commands[i].spec, stdout);
    }
    if (shown && argc <= 2) return 0;
    fprintf(stderr, "weft help: no command '%s%s%s' (commands: show, run, bench op|model, tune, db "
                    "ls|check|export|import|prune|best)\n",
            argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
    return 2;
}

static bool is_help(const char *w) { return !strcmp(w, "--help") || !strcmp(w, "-h"); }

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version")) {
        printf("weft %s\n", weft_version());
        return 0;
    }
    if (is_help(cmd)) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "help")) return help(argc - 2, argv + 2);
    /* "weft show --help", "weft bench --help", "weft db --help": every form of the command */
    if (argc == 3 && is_help(argv[2]) && strcmp(cmd, "run") && strcmp(cmd, "tune")) return help(1, argv + 1);
    if (!strcmp(cmd, "show")) {
        if (argc >= 3 && has_suffix(argv[2], ".onnx")) return weft_cmd_show_model(argc - 2, argv + 2);
        return weft_cmd_show(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "run")) return weft_cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "tune")) return weft_cmd_tune(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) {
        if (argc >= 3 && !strcmp(argv[2], "op")) return weft_cli_exec_bench(argc - 2, argv + 2);
        if (argc >= 3 && !strcmp(argv[2], "model")) return weft_cmd_bench_model(argc - 3, argv + 3);
        fprintf(stderr, "weft bench: expected 'op' or 'model'%s%s%s (see 'weft help bench')\n", argc >= 3 ? ", got '" : "",
                argc >= 3 ? argv[2] : "", argc >= 3 ? "'" : "");
        return 2;
    }
    if (!strcmp(cmd, "db")) {
        for (int i = 0; argc >= 3 && i < N_COMMANDS; i++)
            if (!strcmp(commands[i].cmd, "db") && !strcmp(commands[i].sub, argv[2])) return weft_cmd_db(argc - 2, argv + 2);
        fprintf(stderr, "weft db: expected ls, check, export, import, prune or best%s%s%s (see 'weft help db')\n",
                argc >= 3 ? ", got '" : "", argc >= 3 ? argv[2] : "", argc >= 3 ? "'" : "");
        return 2;
    }
    fprintf(stderr, "weft: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
