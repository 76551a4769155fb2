/* The option parser of the weft command (rules in tools/opts.h). */
#include "tools/opts.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int weft_args_fail(const weft_cmd_spec *spec, const char *fmt, ...)
{
    fprintf(stderr, "weft %s: ", spec->name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

static int find_opt(const weft_cmd_spec *spec, const char *name, size_t len)
{
    for (int i = 0; spec->opts && spec->opts[i].name; i++)
        if (strlen(spec->opts[i].name) == len && !strncmp(spec->opts[i].name, name, len)) return i;
    return -1;
}

/* The range of a numeric option: "1..256", "0..3600", "> 0, <= 604800"; for messages
 * (with what the value must be: "an integer in 1..256") or for help (brief). */
static void range_text(const weft_opt *o, bool brief, char *buf, size_t n)
{
    const char *what = brief ? "" : o->kind == WEFT_OPT_INT ? "an integer in " : "a number in ";
    if (o->kind == WEFT_OPT_INT) snprintf(buf, n, "%s%.0f..%.0f", what, o->min, o->max);
    else if (o->min_open) snprintf(buf, n, "%s> %g, <= %g", brief ? "" : "a number ", o->min, o->max);
    else snprintf(buf, n, "%s%g..%g", what, o->min, o->max);
}

/* Checks and stores a value of option i; returns 2 after printing the error, or 0. */
static int take_value(const weft_cmd_spec *spec, weft_args *a, int i, const char *v)
{
    const weft_opt *o = &spec->opts[i];
    char range[96];
    range_text(o, false, range, sizeof range);
    switch (o->kind) {
    case WEFT_OPT_INT: {
        char *end = NULL;
        errno = 0;
        long long x = isspace((unsigned char)v[0]) ? 0 : strtoll(v, &end, 10);
        if (!end || end == v || *end) return weft_args_fail(spec, "%s expects %s, got '%s'", o->name, range, v);
        if (errno == ERANGE || (double)x < o->min || (double)x > o->max)
            return weft_args_fail(spec, "%s expects %s, got %s (out of range)", o->name, range, v);
        a->ival[i] = x;
        break;
    }
    case WEFT_OPT_FLOAT: {
        char *end = NULL;
        double x = isspace((unsigned char)v[0]) ? 0 : strtod(v, &end);
        if (!end || end == v || *end || !isfinite(x))
            return weft_args_fail(spec, "%s expects %s, got '%s'", o->name, range, v);
        if ((o->min_open ? x <= o->min : x < o->min) || x > o->max)
            return weft_args_fail(spec, "%s expects %s, got %s (out of range)", o->name, range, v);
        a->fval[i] = x;
        break;
    }
    case WEFT_OPT_LIST:
        if (!*v) return weft_args_fail(spec, "%s needs a non-empty value (%s)", o->name, o->arg);
        if (a->n_items == WEFT_ARGS_MAX_ITEMS)
            return weft_args_fail(spec, "%s given more than %d times", o->name, WEFT_ARGS_MAX_ITEMS);
        a->item[a->n_items] = v;
        a->item_opt[a->n_items++] = i;
        break;
    default:
        if (!*v) return weft_args_fail(spec, "%s needs a non-empty value (%s)", o->name, o->arg);
        break;
    }
    a->value[i] = v;
    return 0;
}

int weft_args_parse(const weft_cmd_spec *spec, int argc, char **argv, weft_args *a)
{
    memset(a, 0, sizeof *a);
    a->spec = spec;
    for (int i = 0; spec->opts && spec->opts[i].name; i++) assert(i < WEFT_ARGS_MAX_OPTS);
    /* --help wins over every other word, so "weft db ls --help" never touches a database */
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            weft_args_help(spec, stdout);
            return 0;
        }
    }
    bool only_pos = false;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (only_pos || w[0] != '-' || !strcmp(w, "-")) {
            if (a->n_pos == spec->n_pos_max || a->n_pos == WEFT_ARGS_MAX_POS)
                return weft_args_fail(spec, "unexpected argument '%s' (usage: weft %s %s)", w, spec->name, spec->usage);
            a->pos[a->n_pos++] = w;
            continue;
        }
        if (!strcmp(w, "--")) {
            only_pos = true;
            continue;
        }
        const char *eq = strncmp(w, "--", 2) ? NULL : strchr(w, '=');
        int k = find_opt(spec, w, eq ? (size_t)(eq - w) : strlen(w));
        if (k < 0)
            return weft_args_fail(spec, "unknown option '%.*s' (see 'weft %s --help')", eq ? (int)(eq - w) : (int)strlen(w), w,
                                  spec->name);
        const weft_opt *o = &spec->opts[k];
        if (a->count[k] && o->kind != WEFT_OPT_LIST) return weft_args_fail(spec, "%s given more than once", o->name);
        a->count[k]++;
        if (o->kind == WEFT_OPT_FLAG) {
            if (eq) return weft_args_fail(spec, "%s takes no value", o->name);
            continue;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))
                return weft_args_fail(spec, "%s needs a value (%s)", o->name, o->arg);
            v = argv[++i];
        }
        if (take_value(spec, a, k, v)) return 2;
    }
    if (a->n_pos < spec->n_pos_min)
        return weft_args_fail(spec, "missing arguments (usage: weft %s %s)", spec->name, spec->usage);
    const char *cpu = weft_args_has(a, "--cpu") ? weft_args_str(a, "--cpu", NULL) : NULL;
    if (cpu && setenv("WEFT_CPU", cpu, 1) != 0) return weft_args_fail(spec, "--cpu: cannot set WEFT_CPU");
    return -1;
}

static int opt_index(const weft_args *a, const char *name)
{
    int k = find_opt(a->spec, name, strlen(name));
    assert(k >= 0 && "option not declared in the command's table");
    return k;
}

bool weft_args_has(const weft_args *a, const char *name)
{
    int k = find_opt(a->spec, name, strlen(name));
    return k >= 0 && a->count[k] > 0;
}

const char *weft_args_str(const weft_args *a, const char *name, const char *dflt)
{
    int k = opt_index(a, name);
    return a->count[k] ? a->value[k] : dflt;
}

long long weft_args_int(const weft_args *a, const char *name, long long dflt)
{
    int k = opt_index(a, name);
    return a->count[k] ? a->ival[k] : dflt;
}

double weft_args_float(const weft_args *a, const char *name, double dflt)
{
    int k = opt_index(a, name);
    return a->count[k] ? a->fval[k] : dflt;
}

const char *weft_args_item(const weft_args *a, const char *name, int i)
{
    int k = opt_index(a, name);
    for (int j = 0; j < a->n_items; j++)
        if (a->item_opt[j] == k && i-- == 0) return a->item[j];
    return NULL;
}

int weft_args_count(const weft_args *a, const char *name)
{
    return a->count[opt_index(a, name)];
}

/* Prints text from column `col`, wrapped at word boundaries before column 100, each further
 * line indented to `indent`. */
static void put_wrapped(FILE *out, const char *text, int col, int indent)
{
    const int width = 100;
    for (const char *p = text; *p;) {
        size_t word = strcspn(p, " ");
        if (col > indent && col + 1 + (int)word > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)word, p);
        col += (int)word;
        p += word;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

void weft_args_help(const weft_cmd_spec *spec, FILE *out)
{
    fprintf(out, "usage: weft %s ", spec->name);
    put_wrapped(out, spec->usage, (int)strlen(spec->name) + 12, (int)strlen(spec->name) + 12);
    fprintf(out, "%s\n", spec->summary);
    fprintf(out, "\noptions:\n");
    enum { HEAD = 22 };
    for (int i = 0; spec->opts && spec->opts[i].name; i++) {
        const weft_opt *o = &spec->opts[i];
        char head[64], text[512];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        size_t len = (size_t)snprintf(text, sizeof text, "%s", o->help);
        if (o->kind == WEFT_OPT_LIST && len < sizeof text) len += (size_t)snprintf(text + len, sizeof text - len, " (repeatable)");
        if ((o->kind == WEFT_OPT_INT || o->kind == WEFT_OPT_FLOAT) && len < sizeof text) {
            char range[96];
            range_text(o, true, range, sizeof range);
            snprintf(text + len, sizeof text - len, " [%s]", range);
        }
        if ((int)strlen(head) > HEAD - 4) fprintf(out, "  %s\n%*s", head, HEAD, "");
        else fprintf(out, "  %-*s", HEAD - 2, head);
        put_wrapped(out, text, HEAD, HEAD);
    }
    fprintf(out, "  %-*s%s\n", HEAD - 2, "--help", "this text");
    if (spec->notes) fprintf(out, "\n%s", spec->notes);
}
