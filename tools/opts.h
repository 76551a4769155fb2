/* The weft command's option parser: each subcommand declares its options in a table, and one
 * parser applies the same rules to all of them.
 *
 * Rules: an option is "--name VALUE" or "--name=VALUE"; an unknown option, a value-taking
 * option without a value (at the end, or followed by another "--option"), a number that does
 * not parse completely or lies outside the option's range, a single-valued option given
 * twice, and a wrong count of positional arguments are errors: one line on stderr naming the
 * option, exit status 2. "--help" (or "-h") anywhere prints the subcommand's help on stdout
 * and exits 0. "-" alone is a positional argument (stdin for `db import`). Given --cpu NAME,
 * the parser sets WEFT_CPU=NAME in the environment before it returns, so before any target is
 * created.
 */
#ifndef WEFT_TOOLS_OPTS_H
#define WEFT_TOOLS_OPTS_H
#include <stdbool.h>
#include <stdio.h>

typedef enum weft_opt_kind {
    WEFT_OPT_FLAG,   /* present or absent, no value */
    WEFT_OPT_STRING, /* one value */
    WEFT_OPT_INT,    /* one whole decimal number in [min, max] */
    WEFT_OPT_FLOAT,  /* one finite decimal number in [min, max] ((min, max] when min_open) */
    WEFT_OPT_LIST,   /* a value, repeatable; the values keep their order */
} weft_opt_kind;

typedef struct weft_opt {
    const char *name; /* "--threads"; NULL ends a table */
    weft_opt_kind kind;
    const char *arg;  /* the value's placeholder in help ("T"); NULL for flags */
    double min, max;  /* inclusive range of INT and FLOAT values */
    bool min_open;    /* FLOAT: the value must be greater than min */
    const char *help; /* one line */
} weft_opt;

typedef struct weft_cmd_spec {
    const char *name;    /* "run", "bench op", "db prune" */
    const char *usage;   /* after "weft NAME ": "MODEL.onnx --input [NAME=]FILE ... [options]" */
    int n_pos_min, n_pos_max;
    const char *summary; /* what the command does, one or more lines */
    const weft_opt *opts;
    const char *notes;   /* printed after the options (NULL: none) */
} weft_cmd_spec;

enum { WEFT_ARGS_MAX_POS = 8, WEFT_ARGS_MAX_OPTS = 24, WEFT_ARGS_MAX_ITEMS = 64 };

/* What the parser found; read it with the accessors below. */
typedef struct weft_args {
    const weft_cmd_spec *spec;
    int n_pos;
    const char *pos[WEFT_ARGS_MAX_POS];
    int count[WEFT_ARGS_MAX_OPTS];       /* times each option of spec->opts was given */
    const char *value[WEFT_ARGS_MAX_OPTS]; /* its (last) value */
    long long ival[WEFT_ARGS_MAX_OPTS];
    double fval[WEFT_ARGS_MAX_OPTS];
    int n_items;                          /* LIST values, in order, with their option's index */
    const char *item[WEFT_ARGS_MAX_ITEMS];
    int item_opt[WEFT_ARGS_MAX_ITEMS];
} weft_args;

/* Parses argv (the words after the subcommand's name) by spec. Returns -1 when the command
 * should go on; otherwise the exit status: 0 after printing help, 2 after printing an error. */
int weft_args_parse(const weft_cmd_spec *spec, int argc, char **argv, weft_args *a);

/* Accessors; name must be one of the spec's options. */
bool weft_args_has(const weft_args *a, const char *name);
const char *weft_args_str(const weft_args *a, const char *name, const char *dflt);
long long weft_args_int(const weft_args *a, const char *name, long long dflt);
double weft_args_float(const weft_args *a, const char *name, double dflt);
/* The i-th value of a LIST option (NULL past the last); weft_args_count gives how many. */
const char *weft_args_item(const weft_args *a, const char *name, int i);
int weft_args_count(const weft_args *a, const char *name);

/* Prints "weft NAME: MESSAGE" on stderr as one line and returns 2 (the usage-error status). */
int weft_args_fail(const weft_cmd_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The full help of a subcommand: usage, summary, every option, notes. */
void weft_args_help(const weft_cmd_spec *spec, FILE *out);

#endif
