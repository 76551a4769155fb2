/* Models for the weft command (run, show MODEL, bench model): load and compile an ONNX file
 * (with tuned schedules from a database, saying how many kernels got one, from which machine's
 * records, and why not from this machine's: other thread count, other CPU, no record at all),
 * bind input files to the model's inputs and write its outputs.
 *
 * Input and output files are raw little-endian data in C order, the way the reference data is
 * stored; a file's size must be exactly the tensor's bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/runtime.h"
#include "tools/cli.h"
#include "tuner/tuner.h"
#include "weft/model.h"
#include "weft/onnx.h"
#include "runtime/mem.h"

size_t weft_cli_value_bytes(const weft_graph *g, weft_value v)
{
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    weft_type t = weft_graph_value_type(g, v);
    return n * (t == WEFT_TYPE_INT64 ? 8 : t == WEFT_TYPE_BOOL ? 1 : 4);
}

void weft_cli_value_desc(const weft_graph *g, weft_value v, char *buf, size_t n)
{
    static const char *const types[] = {"float32", "int64", "int32", "bool"};
    int64_t shape[8];
    int nd = weft_graph_value_shape(g, v, shape);
    weft_type t = weft_graph_value_type(g, v);
    size_t len = (size_t)snprintf(buf, n, "%s [", (unsigned)t < 4 ? types[t] : "?");
    for (int d = 0; d < nd && len < n; d++) {
        const char *sym = weft_graph_value_dim_name(g, v, d);
        if (sym) len += (size_t)snprintf(buf + len, n - len, "%s%s", d ? ", " : "", sym);
        else len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)shape[d]);
    }
    if (len < n) snprintf(buf + len, n - len, "]");
}

void weft_cli_model_free(weft_cli_model *l)
{
    if (l->g) {
        for (int i = 0; l->in && i < weft_graph_n_inputs(l->g); i++) weft_rt_free(l->in[i]);
        for (int i = 0; l->out && i < weft_graph_n_outputs(l->g); i++) weft_rt_free(l->out[i]);
    }
    free(l->in);
    free(l->out);
    weft_model_destroy(l->m);
    weft_graph_destroy(l->g);
    memset(l, 0, sizeof *l);
}

/* ---- why kernels got no tuned schedule ---------------------------------------------------- */

/* The fields of a target key "llvm;cpu=znver4;feat=<hex>;cores=2;threads=1". */
typedef struct key_fields {
    char cpu[64], feat[32];
    int cores, threads;
} key_fields;

static void key_parse(const char *key, key_fields *k)
{
    memset(k, 0, sizeof *k);
    for (const char *p = key; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        int len = (int)strcspn(p, ";");
        if (!strncmp(p, "cpu=", 4)) snprintf(k->cpu, sizeof k->cpu, "%.*s", len - 4, p + 4);
        else if (!strncmp(p, "feat=", 5)) snprintf(k->feat, sizeof k->feat, "%.*s", len - 5, p + 5);
        else if (!strncmp(p, "cores=", 6)) k->cores = atoi(p + 6);
        else if (!strncmp(p, "threads=", 8)) k->threads = atoi(p + 8);
    }
}

enum { MAX_KEYS = 16 };

typedef struct key_census {
    int n;
    char keys[MAX_KEYS][160];
    int ok[MAX_KEYS]; /* error-free measurements under each key */
    int more;         /* keys beyond MAX_KEYS */
} key_census;

static bool count_key(void *ud, const weft_db_group *g)
{
    key_census *c = ud;
    if (g->ok == 0) return true;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->keys[i], g->target)) {
            c->ok[i] += g->ok;
            return true;
        }
    if (c->n == MAX_KEYS) c->more++;
    else {
        snprintf(c->keys[c->n], sizeof c->keys[0], "%s", g->target);
        c->ok[c->n++] = g->ok;
    }
    return true;
}

/* What the census says about kernels that did not get a record of this machine (here_key):
 * records of this machine at other thread counts, of this CPU name with other features or
 * cores, or of other CPUs only. n_default kernels got no record from any machine. */
static void explain(const key_census *c, const char *here_key, const weft_tuned_summary *s, char *buf, size_t n)
{
    key_fields here, k;
    key_parse(here_key, &here);
    bool exact = false, other_threads = false, same_cpu = false;
    char threads[128] = "", cpus[256] = "";
    int first_threads = 0;
    for (int i = 0; i < c->n; i++) {
        key_parse(c->keys[i], &k);
        if (!strcmp(c->keys[i], here_key)) exact = true;
        bool machine = !strcmp(k.cpu, here.cpu) && !strcmp(k.feat, here.feat) && k.cores == here.cores;
        if (machine && k.threads != here.threads) {
            if (!other_threads) first_threads = k.threads;
            other_threads = true;
            size_t len = strlen(threads);
            snprintf(threads + len, sizeof threads - len, "%s%d", len ? ", " : "", k.threads);
        }
        if (!strcmp(k.cpu, here.cpu)) same_cpu = true;
        else if (!strstr(cpus, k.cpu)) {
            size_t len = strlen(cpus);
            snprintf(cpus + len, sizeof cpus - len, "%s%s", len ? ", " : "", k.cpu);
        }
    }
    size_t len = 0;
    buf[0] = '\0';
    if (c->n == 0) {
        snprintf(buf, n, "the database has no successful measurements");
        return;
    }
    if (s->n_default > s->n_default_slower)
        len += (size_t)snprintf(buf + len, n - len, "%d kernel(s) have no %srecord in the database for any machine; ",
                                s->n_default - s->n_default_slower, s->n_rejected ? "usable " : "");
    if (len < n && s->n_default_slower > 0)
        len += (size_t)snprintf(buf + len, n - len,
                                "%d kernel(s) keep the default schedule: their records were not faster here than the default; ",
                                s->n_default_slower);
    if (len < n && exact)
        len += (size_t)snprintf(buf + len, n - len, "this machine (%s) has records for %d of the %d kernels; ", here_key,
                                s->n_this_machine, s->n_kernels);
    if (len >= n) return;
    if (other_threads && !exact)
        snprintf(buf + len, n - len, "this machine's records are for --threads %s only and this run uses %d threads "
                                     "(records are kept per thread count: run with --threads %d, or tune with --threads %d)",
                 threads, here.threads, first_threads, here.threads);
    else if (exact)
        buf[len - 2] = '\0'; /* drop the last "; " */
    else if (same_cpu)
        snprintf(buf + len, n - len, "records for cpu=%s exist only with other ISA features or core count (this machine: %s)",
                 here.cpu, here_key);
    else
        snprintf(buf + len, n - len, "records exist only for other CPUs (cpu=%s%s) and this run targets cpu=%s (tune here "
                                     "for records measured on this machine)",
                 cpus, c->more ? ", ..." : "", here.cpu);
}

void weft_cli_explain_untuned(const char *db_path, const char *target, int threads, const weft_tuned_summary *s, char *buf,
                              size_t n)
{
    buf[0] = '\0';
    const weft_target_ops *ops = weft_target_find(target && *target ? target : "llvm");
    weft_target *t = NULL;
    weft_db *db = NULL;
    key_census c = {0};
    if (!ops || ops->create(&t) != WEFT_OK || weft_db_open(db_path, false, &db) != WEFT_OK ||
        weft_db_groups(db, count_key, &c) != WEFT_OK) {
        snprintf(buf, n, "cannot tell why: %s", weft_last_error());
    } else {
        weft_target_caps caps;
        ops->caps(t, &caps);
        weft_tuner_target tt;
        weft_tuner_target_init(&tt, &caps, threads);
        explain(&c, tt.key, s, buf, n);
    }
    weft_db_close(db);
    if (t) ops->destroy(t);
}

/* ---- loading ------------------------------------------------------------------------------ */

static int find_value(const weft_graph *g, bool output, const char *name, size_t len);
static void list_values(const weft_graph *g, bool output, char *buf, size_t n);

/* The size of the file given to each input by --input [NAME=]FILE (0 when none). */
static void input_file_sizes(const weft_args *a, const weft_graph *g, size_t *bytes)
{
    int ni = weft_graph_n_inputs(g);
    for (int i = 0; i < ni; i++) bytes[i] = 0;
    for (int j = 0; j < weft_args_count(a, "--input"); j++) {
        const char *item = weft_args_item(a, "--input", j), *eq = strchr(item, '=');
        int i = eq ? find_value(g, false, item, (size_t)(eq - item)) : -1;
        const char *file = i >= 0 ? eq + 1 : item;
        if (i < 0 && ni == 1) i = 0;
        struct stat st;
        if (i >= 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode)) bytes[i] = (size_t)st.st_size;
    }
}

int weft_cli_parse_dims(const weft_args *a, weft_cli_dims *d)
{
    memset(d, 0, sizeof *d);
    int n = weft_args_count(a, "--dim");
    if (n > 16) return weft_args_fail(a->spec, "--dim: at most 16 given");
    for (int j = 0; j < n; j++) {
        const char *item = weft_args_item(a, "--dim", j), *eq = strchr(item, '=');
        char *end = NULL;
        long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
        if (!eq || eq == item || (size_t)(eq - item) >= sizeof d->buf[0] || !eq[1] || *end || v < 1 || v > (1LL << 32))
            return weft_args_fail(a->spec, "--dim expects NAME=SIZE with SIZE in 1..%lld, got '%s'", 1LL << 32, item);
        snprintf(d->buf[j], sizeof d->buf[j], "%.*s", (int)(eq - item), item);
        d->names[j] = d->buf[j];
        d->values[j] = v;
    }
    d->n = n;
    return 0;
}

/* A model with symbolic dimensions becomes a static graph at the sizes of its input files. */
static int specialize(const weft_cmd_spec *spec, const char *path, const weft_args *a, weft_cli_model *l)
{
    char list[1024];
    list_values(l->g, false, list, sizeof list);
    if (!a) {
        fprintf(stderr, "weft %s: %s has symbolic dimensions (inputs: %s); sizes come from input files: use weft run "
                        "MODEL --input FILE\n", spec->name, path, list);
        return 2;
    }
    size_t bytes[64];
    input_file_sizes(a, l->g, bytes);
    /* --dim NAME=SIZE binds a symbol the files alone cannot size (two in one input) */
    weft_cli_dims dims;
    if (weft_cli_parse_dims(a, &dims) != 0) return 2;
    int n_dims = dims.n;
    weft_graph *h = NULL;
    if (weft_graph_specialize(l->g, n_dims, dims.names, dims.values, bytes, &h) != WEFT_OK) {
        fprintf(stderr, "weft %s: %s: %s (inputs: %s)\n", spec->name, path, weft_last_error(), list);
        return 1;
    }
    weft_graph_destroy(l->g);
    l->g = h;
    list_values(l->g, false, list, sizeof list);
    fprintf(stderr, "%s: symbolic dimensions sized from the input files%s: %s\n", path, n_dims ? " and --dim" : "", list);
    return 0;
}

int weft_cli_model_load(const weft_cmd_spec *spec, const char *path, int threads, const char *target, const char *db,
                        weft_cli_model *l)
{
    return weft_cli_model_load_args(spec, path, threads, target, db, NULL, l);
}

int weft_cli_model_load_args(const weft_cmd_spec *spec, const char *path, int threads, const char *target, const char *db,
                             const weft_args *a, weft_cli_model *l)
{
    memset(l, 0, sizeof *l);
    if (weft_onnx_load(path, &l->g) != WEFT_OK) {
        fprintf(stderr, "weft %s: %s\n", spec->name, weft_last_error());
        return 1;
    }
    if (weft_graph_is_symbolic(l->g)) {
        int rc = specialize(spec, path, a, l);
        if (rc) return rc;
    } else if (a && weft_args_has(a, "--dim")) {
        return weft_args_fail(spec, "--dim: %s has no symbolic dimensions", path);
    }
    weft_model_options o = weft_model_options_default();
    o.threads = threads;
    if (target) o.target = target;
    weft_tuned_summary from = {0};
    weft_status rc = db ? weft_model_compile_tuned_ex(l->g, &o, db, &l->m, &from) : weft_model_compile(l->g, &o, &l->m);
    l->n_tuned = from.n_this_machine + from.n_nearest;
    if (rc != WEFT_OK) {
        fprintf(stderr, "weft %s: %s: %s\n", spec->name, path, weft_last_error());
        return 1;
    }
    l->n_kernels = weft_model_n_kernels(l->m);
    if (db) {
        char line[320], why[640] = "";
        weft_tuned_summary_format(&from, line, sizeof line);
        fprintf(stderr, "%s: %d of %d kernels tuned (schedules from %s; %s)\n", path, l->n_tuned, l->n_kernels, db, line);
        if (from.n_this_machine < l->n_kernels) {
            weft_cli_explain_untuned(db, target, threads, &from, why, sizeof why);
            fprintf(stderr, "%s: not from this machine's records: %s\n", path, why);
        }
    }
    int ni = weft_graph_n_inputs(l->g), no = weft_graph_n_outputs(l->g);
    l->in = weft_calloc((size_t)ni + 1, sizeof *l->in);
    l->out = weft_calloc((size_t)no + 1, sizeof *l->out);
    for (int i = 0; l->in && i < ni; i++) l->in[i] = weft_rt_alloc(weft_cli_value_bytes(l->g, weft_graph_input(l->g, i)) + 1);
    for (int i = 0; l->out && i < no; i++) l->out[i] = weft_rt_alloc(weft_cli_value_bytes(l->g, weft_graph_output(l->g, i)) + 1);
    bool got = l->in && l->out; /* weft_cli_model_free frees whatever was allocated */
    for (int i = 0; got && i < ni; i++) got = l->in[i] != NULL;
    for (int i = 0; got && i < no; i++) got = l->out[i] != NULL;
    if (!got) {
        fprintf(stderr, "weft %s: %s: out of memory for the model's inputs and outputs\n", spec->name, path);
        return 1;
    }
    for (int i = 0; i < ni; i++) memset(l->in[i], 0, weft_cli_value_bytes(l->g, weft_graph_input(l->g, i)));
    return 0;
}

/* ---- inputs -------------------------------------------------------------------------------- */

/* The index of the graph input or output called name (len chars), or -1. */
static int find_value(const weft_graph *g, bool output, const char *name, size_t len)
{
    int n = output ? weft_graph_n_outputs(g) : weft_graph_n_inputs(g);
    for (int i = 0; i < n; i++) {
        const char *nm = weft_graph_value_name(g, output ? weft_graph_output(g, i) : weft_graph_input(g, i));
        if (nm && strlen(nm) == len && !strncmp(nm, name, len)) return i;
    }
    return -1;
}

/* "x (float32 [1, 3, 32, 32]), y (...)": the model's inputs or outputs, for messages. */
static void list_values(const weft_graph *g, bool output, char *buf, size_t n)
{
    buf[0] = '\0';
    int count = output ? weft_graph_n_outputs(g) : weft_graph_n_inputs(g);
    for (int i = 0; i < count; i++) {
        weft_value v = output ? weft_graph_output(g, i) : weft_graph_input(g, i);
        char desc[128];
        weft_cli_value_desc(g, v, desc, sizeof desc);
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s (%s)", i ? ", " : "", weft_graph_value_name(g, v), desc);
    }
}

static bool is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int weft_cli_read_input(const weft_cmd_spec *spec, weft_cli_model *l, int i, const char *path)
{
    weft_value v = weft_graph_input(l->g, i);
    size_t want = weft_cli_value_bytes(l->g, v);
    char desc[128];
    weft_cli_value_desc(l->g, v, desc, sizeof desc);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "weft %s: cannot open input file %s for input '%s': %s\n", spec->name, path,
                weft_graph_value_name(l->g, v), strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "weft %s: input file %s for input '%s' is not a regular file\n", spec->name, path,
                weft_graph_value_name(l->g, v));
        return 1;
    }
    if ((size_t)st.st_size != want) {
        fprintf(stderr, "weft %s: input '%s' (%s) needs %zu bytes, but %s has %lld bytes\n", spec->name,
                weft_graph_value_name(l->g, v), desc, want, path, (long long)st.st_size);
        return 1;
    }
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(l->in[i], 1, want, f) : 0;
    if (f) fclose(f);
    if (got != want) {
        fprintf(stderr, "weft %s: cannot read input file %s: %s\n", spec->name, path, f ? "short read" : strerror(errno));
        return 1;
    }
    return 0;
}

int weft_cli_bind_inputs(const weft_args *a, weft_cli_model *l)
{
    const weft_cmd_spec *spec = a->spec;
    int ni = weft_graph_n_inputs(l->g), n_given = weft_args_count(a, "--input");
    char list[1024];
    list_values(l->g, false, list, sizeof list);
    bool *given = weft_calloc((size_t)ni + 1, 1);
    const char **files = weft_calloc((size_t)ni + 1, sizeof *files);
    int rc = given && files ? 0 : 1;
    for (int j = 0; j < n_given && rc == 0; j++) {
        const char *item = weft_args_item(a, "--input", j), *eq = strchr(item, '=');
        int i = eq ? find_value(l->g, false, item, (size_t)(eq - item)) : -1;
        const char *file = i >= 0 ? eq + 1 : item;
        if (i < 0 && eq && !is_regular_file(item))
            rc = weft_args_fail(spec, "--input %s: the model has no input named '%.*s' (inputs: %s)", item, (int)(eq - item),
                                item, list);
        else if (i < 0 && ni != 1)
            rc = weft_args_fail(spec, "--input %s: the model has %d inputs, give each as --input NAME=FILE (inputs: %s)", item,
                                ni, list);
        else if (i >= 0 && !*file)
            rc = weft_args_fail(spec, "--input %s: no file name after '='", item);
        else {
            if (i < 0) i = 0;
            if (given[i]) rc = weft_args_fail(spec, "--input: input '%s' given more than once", weft_graph_value_name(l->g, weft_graph_input(l->g, i)));
            given[i] = true;
            files[i] = file;
        }
    }
    for (int i = 0; i < ni && rc == 0; i++)
        if (!given[i]) {
            const char *nm = weft_graph_value_name(l->g, weft_graph_input(l->g, i));
            char desc[128];
            weft_cli_value_desc(l->g, weft_graph_input(l->g, i), desc, sizeof desc);
            char hint[1100];
            if (ni == 1) snprintf(hint, sizeof hint, "--input FILE");
            else snprintf(hint, sizeof hint, "--input %s=FILE (inputs: %s)", nm, list);
            rc = weft_args_fail(spec, "missing --input for input '%s' (%s, %zu bytes): give %s", nm, desc,
                                weft_cli_value_bytes(l->g, weft_graph_input(l->g, i)), hint);
        }
    for (int i = 0; i < ni && rc == 0; i++) rc = weft_cli_read_input(spec, l, i, files[i]);
    free(given);
    free(files);
    return rc;
}

/* ---- outputs ------------------------------------------------------------------------------- */

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A value name as a file name: characters other than [A-Za-z0-9._-] become '_'. */
static void file_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name && *name && strcmp(name, ".") && strcmp(name, "..") ? name : "output");
    for (char *c = buf; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
              *c == '-'))
            *c = '_';
}

int weft_cli_plan_outputs(const weft_args *a, const weft_graph *g, char ***paths)
{
    const weft_cmd_spec *spec = a->spec;
    int no = weft_graph_n_outputs(g), n_given = weft_args_count(a, "--output");
    char list[1024];
    list_values(g, true, list, sizeof list);
    char **p = weft_calloc((size_t)no + 1, sizeof *p);
    int rc = p ? 0 : 1;
    for (int j = 0; j < n_given && rc == 0; j++) {
        const char *item = weft_args_item(a, "--output", j), *eq = strchr(item, '=');
        size_t len = strlen(item);
        int i = eq ? find_value(g, true, item, (size_t)(eq - item)) : -1;
        if (i >= 0) {
            if (!eq[1]) rc = weft_args_fail(spec, "--output %s: no file name after '='", item);
            else if (p[i]) rc = weft_args_fail(spec, "--output: output '%.*s' given more than once", (int)(eq - item), item);
            else p[i] = weft_strdup(eq + 1);
        } else if (item[len - 1] == '/' || is_dir(item)) {
            if (!is_dir(item) && mkdir(item, 0777) != 0) {
                fprintf(stderr, "weft %s: --output %s: cannot create the folder: %s\n", spec->name, item, strerror(errno));
                rc = 1;
            }
            for (int k = 0; k < no && rc == 0; k++) {
                char fn[256];
                file_name(weft_graph_value_name(g, weft_graph_output(g, k)), fn, sizeof fn);
                size_t n = len + strlen(fn) + 6;
                if (p[k]) {
                    rc = weft_args_fail(spec, "--output: output '%s' given more than once",
                                        weft_graph_value_name(g, weft_graph_output(g, k)));
                } else if ((p[k] = weft_malloc(n)))
                    snprintf(p[k], n, "%s%s%s.bin", item, item[len - 1] == '/' ? "" : "/", fn);
            }
        } else if (eq && !is_regular_file(item) && !is_dir(item) && no > 1) {
            rc = weft_args_fail(spec, "--output %s: the model has no output named '%.*s' (outputs: %s)", item,
                                (int)(eq - item), item, list);
        } else if (no != 1) {
            rc = weft_args_fail(spec, "--output %s: the model has %d outputs, give each as --output NAME=FILE or all with "
                                      "--output DIR/ (outputs: %s)", item, no, list);
        } else if (p[0]) {
            rc = weft_args_fail(spec, "--output: output '%s' given more than once", weft_graph_value_name(g, weft_graph_output(g, 0)));
        } else p[0] = weft_strdup(item);
    }
    if (rc) {
        weft_cli_free_paths(p, no);
        p = NULL;
    }
    *paths = p;
    return rc;
}

void weft_cli_free_paths(char **paths, int n)
{
    for (int i = 0; paths && i < n; i++) free(paths[i]);
    free(paths);
}

int weft_cli_write_outputs(const weft_cmd_spec *spec, const weft_cli_model *l, char **paths)
{
    for (int i = 0; i < weft_graph_n_outputs(l->g); i++) {
        if (!paths[i]) continue;
        weft_value v = weft_graph_output(l->g, i);
        size_t want = weft_cli_value_bytes(l->g, v);
        FILE *f = fopen(paths[i], "wb");
        bool ok = f && fwrite(l->out[i], 1, want, f) == want;
        if (f && fclose(f) != 0) ok = false;
        if (!ok) {
            fprintf(stderr, "weft %s: cannot write output '%s' to %s: %s\n", spec->name, weft_graph_value_name(l->g, v),
                    paths[i], strerror(errno));
            return 1;
        }
        char desc[128];
        weft_cli_value_desc(l->g, v, desc, sizeof desc);
        printf("output '%s' (%s, %zu bytes) -> %s\n", weft_graph_value_name(l->g, v), desc, want, paths[i]);
    }
    return 0;
}
