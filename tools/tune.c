/* weft tune and weft db.
 *
 *   weft tune MODEL.onnx --db DB [--trials N] [--time S] [--threads T] [--seed S] [--curve CSV]
 *   weft tune --op OP --shape S --db DB [...]
 *   weft db ls|check|export DB | weft db import DB FILE | weft db prune DB [--keep K] [--force]
 *   weft db best DB OP --shape S [--threads T]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/error.h"
#include "ir/hash.h"
#include "runtime/runtime.h"
#include "targets/target.h"
#include "tools/cli.h"
#include "tuner/tuner.h"
#include "weft/model.h"
#include "weft/onnx.h"

static const weft_opt tune_opts[] = {
    {"--db", WEFT_OPT_STRING, "DB", 0, 0, false, "the schedule database (created when missing); required"},
    {"--op", WEFT_OPT_STRING, "OP", 0, 0, false, "tune one op instead of a model (with --shape)"},
    {"--shape", WEFT_OPT_STRING, "S", 0, 0, false, "the op's sizes, comma-separated (with --op)"},
    {"--trials", WEFT_OPT_INT, "N", 1, 100000000, false,
     "stop when the tasks have N measurements in all, earlier runs included (default 200 without --time)"},
    {"--time", WEFT_OPT_FLOAT, "SEC", 0, 604800, true, "stop after SEC seconds of wall-clock time"},
    WEFT_CLI_OPT_THREADS("threads the kernels are measured with; records are kept per thread count (default: the cores)"),
    {"--seed", WEFT_OPT_INT, "S", 0, 4294967295.0, false, "random seed of the search (default 1)"},
    {"--curve", WEFT_OPT_STRING, "CSV", 0, 0, false, "write best-so-far latency against trials and seconds"},
    {"--dim", WEFT_OPT_LIST, "NAME=SIZE", 0, 0, false,
     "the size to tune a symbolic dimension of the model at (ONNX dim_param; one --dim per symbol)"},
    WEFT_CLI_OPT_CPU,
    {"--batch", WEFT_OPT_INT, "N", 1, 4096, false,
     "candidates measured per round (default 8; under mpirun 4 per measuring rank, at least 8)"},
    {"--target", WEFT_OPT_STRING, "T", 0, 0, false,
     "llvm (the CPU, default), cuda (the CUDA device 0, at its compute capability) or cuda:sm_XX: candidates are "
     "measured on the device in worker processes, records kept under the device's key"},
    {"--timeout", WEFT_OPT_FLOAT, "SEC", 0, 3600, true,
     "with --target cuda: a candidate's measuring worker is killed after SEC seconds and the candidate recorded as an "
     "error (default 10)"},
    {"--rank-timeout", WEFT_OPT_FLOAT, "SEC", 0, 86400, true,
     "under mpirun: a rank with no result for SEC seconds is lost (dead or hung) and its candidates dropped (default 120)"},
    {NULL},
};

const weft_cmd_spec weft_spec_tune = {
    "tune", "MODEL.onnx|--op OP --shape S --db DB [--trials N] [--time SEC] [--threads T] [--seed S] [--curve CSV] "
            "[--dim NAME=SIZE ...] [--cpu NAME] [--batch N] [--target T] [--timeout SEC] [--rank-timeout SEC]",
    0, 1,
    "Searches schedules for every kernel of a model (or one op) under a learned cost model and records every\n"
    "measurement in DB; a second run with the same database resumes where the first stopped. With both --trials\n"
    "and --time, tuning stops at whichever comes first.",
    tune_opts,
    "Under mpirun (mpirun -n N weft tune ...) rank 0 searches and keeps DB and ranks 1..N-1 measure (weft-mpi; see\n"
    "the README, \"Tuning across machines with MPI\").\n"
    "examples:\n"
    "  weft tune tests/data/models/resnet9.onnx --db tune.db --time 300 --curve curve.csv\n"
    "  weft tune --op matmul --shape 1024,1024,1024 --db tune.db --trials 400\n"
    "  weft tune --op matmul --shape 1024,1024,1024 --db tune.db --trials 100 --target cuda\n"
    "  mpirun -n 9 weft tune tests/data/models/resnet9.onnx --db tune.db --time 300 --threads 1\n",
};

int weft_cli_mpi_size(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v) v = getenv("PMI_SIZE");
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : 0;
}

/* Whether weft-mpi sits next to this executable. */
static bool have_weft_mpi(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
    if (n <= 0) return false;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash) return false;
    strcpy(slash + 1, "weft-mpi");
    return access(path, X_OK) == 0;
}

void weft_cli_tune_free(weft_cli_tune *t)
{
    weft_tasks_free(t->tasks, t->n);
    t->tasks = NULL;
    t->n = 0;
}

int weft_cli_tune_prepare(int argc, char **argv, weft_cli_tune *t)
{
    memset(t, 0, sizeof *t);
    weft_args *a = &t->a;
    int ex = weft_args_parse(&weft_spec_tune, argc, argv, a);
    if (ex >= 0) return ex;
    const char *db = weft_args_str(a, "--db", NULL), *op = weft_args_str(a, "--op", NULL);
    if (!db) return weft_args_fail(&weft_spec_tune, "--db DB is required");
    if (op && a->n_pos) return weft_args_fail(&weft_spec_tune, "give a model or --op, not both");
    if (!op && !a->n_pos) return weft_args_fail(&weft_spec_tune, "give a model (MODEL.onnx) or --op OP --shape S");
    if (!op && weft_args_has(a, "--shape")) return weft_args_fail(&weft_spec_tune, "--shape applies to --op only");
    if (op && weft_args_has(a, "--dim")) return weft_args_fail(&weft_spec_tune, "--dim applies to a model only");
    weft_cli_dims dims;
    if (weft_cli_parse_dims(a, &dims) != 0) return 2;
    const char *target = weft_args_str(a, "--target", "llvm");
    bool gpu = weft_gpu_spec_is_gpu(target);
    if (!gpu && strcmp(target, "llvm"))
        return weft_args_fail(&weft_spec_tune, "--target expects llvm, cuda or cuda:sm_XX, not '%s'", target);
    if (!gpu && weft_args_has(a, "--timeout")) return weft_args_fail(&weft_spec_tune, "--timeout applies to --target cuda only");
    if (gpu && weft_cli_mpi_size() > 0)
        return weft_args_fail(&weft_spec_tune, "--target %s: GPU tuning runs in one process, not under mpirun", target);
    if (gpu) { /* a worker process asks the device: this one never initialises the driver */
        weft_status st = weft_gpu_probe(target, 30, &t->gpu);
        if (st == WEFT_ERR_INVALID_ARG) return weft_args_fail(&weft_spec_tune, "--target: %s", weft_last_error());
        if (st != WEFT_OK) {
            fprintf(stderr, "weft tune: %s\n", weft_last_error());
            return 1;
        }
        t->o.gpu = &t->gpu;
        t->o.timeout_s = weft_args_float(a, "--timeout", 10);
    }
    weft_tune_options *o = &t->o;
    o->db = db;
    o->trials = (int)weft_args_int(a, "--trials", 0);
    o->time_s = weft_args_float(a, "--time", 0);
    if (!o->trials && !o->time_s) o->trials = 200;
    o->threads = (int)weft_args_int(a, "--threads", 0);
    o->seed = (uint64_t)weft_args_int(a, "--seed", 1);
    o->curve = weft_args_str(a, "--curve", NULL);
    o->batch = (int)weft_args_int(a, "--batch", 0);
    o->log = stdout;
    t->batch_given = weft_args_has(a, "--batch");
    t->rank_timeout = weft_args_float(a, "--rank-timeout", 0);
    weft_status rc;
    if (op) {
        int64_t shape[16];
        int ns = weft_cli_shape(a, shape, 16);
        if (ns < 0) return 2;
        rc = weft_task_from_op(op, ns, shape, &t->tasks, &t->n);
    } else {
        weft_graph *g = NULL;
        rc = weft_onnx_load(a->pos[0], &g);
        /* a model with symbolic dimensions is tuned at the --dim sizes: its kernels are those
         * of that shape, and so are the records */
        if (rc == WEFT_OK && weft_graph_is_symbolic(g)) {
            weft_graph *h = NULL;
            rc = weft_graph_specialize(g, dims.n, dims.names, dims.values, NULL, &h);
            weft_graph_destroy(g);
            g = h;
        } else if (rc == WEFT_OK && dims.n) {
            weft_graph_destroy(g);
            return weft_args_fail(&weft_spec_tune, "--dim: %s has no symbolic dimensions", a->pos[0]);
        }
        if (rc == WEFT_OK) { /* the kernels as compiling for the target builds them */
            const char *name = gpu ? t->gpu.target : "llvm";
            const weft_target_ops *ops = weft_target_find(name);
            weft_target *tg = NULL;
            weft_target_caps caps;
            rc = ops ? ops->create(&tg) : weft_fail(WEFT_ERR_UNAVAILABLE, "no %s target", name);
            if (rc == WEFT_OK) {
                ops->caps(tg, &caps);
                rc = weft_tasks_from_graph(g, &caps, &t->tasks, &t->n);
                ops->destroy(tg);
            }
        }
        weft_graph_destroy(g);
    }
    if (rc != WEFT_OK) {
        fprintf(stderr, "weft tune: %s\n", weft_last_error());
        return 1;
    }
    return -1;
}

int weft_cmd_tune(int argc, char **argv)
{
    /* under mpirun with several ranks, every rank becomes weft-mpi (which links MPI; weft
     * does not): rank 0 searches, the others measure */
    int size = weft_cli_mpi_size();
    if (size > 1 || (size == 1 && have_weft_mpi())) { /* one rank: weft-mpi undoes mpirun's binding */
        char **av = calloc((size_t)argc + 1, sizeof *av);
        if (!av) return 1;
        av[0] = (char *)"tune";
        for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
        weft_cli_exec_sibling("weft-mpi", "tune", "weft_mpi", argc + 1, av);
        fprintf(stderr, "weft tune: started by mpirun with %d ranks, but weft-mpi (the MPI driver) is not next to weft: "
                        "this build has no MPI (cmake says so when it configures; install libopenmpi-dev)\n", size);
        free(av);
        return 1;
    }
    weft_cli_tune t;
    int ex = weft_cli_tune_prepare(argc, argv, &t);
    if (ex < 0 && t.rank_timeout > 0) ex = weft_args_fail(&weft_spec_tune, "--rank-timeout applies under mpirun only");
    if (ex >= 0) {
        weft_cli_tune_free(&t);
        return ex;
    }
    weft_status rc = weft_tune_tasks(t.tasks, t.n, &t.o);
    if (rc != WEFT_OK) fprintf(stderr, "weft tune: %s\n", weft_last_error());
    weft_cli_tune_free(&t);
    return rc == WEFT_OK ? 0 : 1;
}

static const weft_opt no_opts[] = {{NULL}};

const weft_cmd_spec weft_spec_db_ls = {
    "db ls", "DB", 1, 1,
    "Lists the database: per kernel (op name, workload key, shapes) and target, the measurements, how many ran\n"
    "without error, and the best time.",
    no_opts, NULL,
};
const weft_cmd_spec weft_spec_db_check = {"db check", "DB", 1, 1, "Checks the file's integrity; prints 'ok' for a sound one.",
                                          no_opts, NULL};
const weft_cmd_spec weft_spec_db_export = {
    "db export", "DB", 1, 1, "Writes every workload, target and measurement as text (tab-separated lines) to stdout.",
    no_opts, NULL,
};
const weft_cmd_spec weft_spec_db_import = {
    "db import", "DB FILE|-", 2, 2,
    "Adds the records of an export (FILE, or - for stdin) to DB, creating it when missing; records already there\n"
    "are skipped, and a malformed line imports nothing.",
    no_opts, NULL,
};

static const weft_opt prune_opts[] = {
    {"--keep", WEFT_OPT_INT, "K", 0, 1000000000, false,
     "keep the K fastest error-free measurements per kernel and target (default 1)"},
    {"--force", WEFT_OPT_FLAG, NULL, 0, 0, false, "prune even when that deletes every measurement (needed with --keep 0)"},
    {NULL},
};

const weft_cmd_spec weft_spec_db_prune = {
    "db prune", "DB [--keep K] [--force]", 1, 1,
    "Deletes all but the K fastest error-free measurements of each kernel and target (errors included), keeps the\n"
    "latest cost model of each target and compacts the file. What would delete every measurement (--keep 0, or a\n"
    "database of errors only) is refused without --force.",
    prune_opts, NULL,
};

static const weft_opt best_opts[] = {
    {"--shape", WEFT_OPT_STRING, "S", 0, 0, false, "the op's sizes, comma-separated; required"},
    WEFT_CLI_OPT_THREADS("the thread count the record was measured with (default: the cores)"),
    WEFT_CLI_OPT_CPU,
    {NULL},
};

const weft_cmd_spec weft_spec_db_best = {
    "db best", "DB OP --shape S [--threads T] [--cpu NAME]", 2, 2,
    "Prints the step text of the best record for an op on this machine.",
    best_opts, NULL,
};

/* Sums over the database's groups for prune: measurements, and how many --keep K leaves. */
typedef struct prune_census {
    int keep;
    long long total, kept;
} prune_census;

static bool count_prune(void *ud, const weft_db_group *g)
{
    prune_census *c = ud;
    c->total += g->total;
    c->kept += g->ok < c->keep ? g->ok : c->keep;
    return true;
}

static int db_prune(const weft_args *a, weft_db *db, weft_status *rc)
{
    prune_census c = {(int)weft_args_int(a, "--keep", 1), 0, 0};
    *rc = weft_db_groups(db, count_prune, &c);
    if (*rc != WEFT_OK) return 1;
    if (c.total > 0 && c.kept == 0 && !weft_args_has(a, "--force")) {
        if (c.keep == 0)
            return weft_args_fail(a->spec, "--keep 0 would delete all %lld measurement(s) of %s; add --force to do that",
                                  c.total, a->pos[0]);
        return weft_args_fail(a->spec, "all %lld measurement(s) of %s are errors, so pruning would delete every one; add "
                                       "--force to do that", c.total, a->pos[0]);
    }
    int n = 0;
    *rc = weft_db_prune(db, c.keep, &n);
    if (*rc == WEFT_OK) printf("deleted %d measurement(s), kept %lld\n", n, c.kept);
    return *rc == WEFT_OK ? 0 : 1;
}

static weft_status db_best(const weft_args *a, weft_db *db, int ns, const int64_t *shape)
{
    weft_task *tasks = NULL;
    int n = 0;
    weft_status rc = weft_task_from_op(a->pos[1], ns, shape, &tasks, &n);
    const weft_target_ops *llvm = weft_target_find("llvm");
    weft_target *t = NULL;
    if (rc == WEFT_OK) rc = llvm ? llvm->create(&t) : weft_fail(WEFT_ERR_UNAVAILABLE, "no llvm target");
    if (rc == WEFT_OK) {
        weft_target_caps caps;
        llvm->caps(t, &caps);
        weft_tuner_target tt;
        weft_tuner_target_init(&tt, &caps, (int)weft_args_int(a, "--threads", 0));
        bool found = false;
        char *steps = NULL;
        double median = 0;
        rc = weft_db_best(db, tasks[0].key, tt.key, &found, &steps, &median);
        if (rc == WEFT_OK && found)
            printf("# %s on %s: %.1f us, %.2f GFLOP/s\n%s", tasks[0].key, tt.key, median * 1e6, tasks[0].flops / median * 1e-9,
                   steps);
        else if (rc == WEFT_OK) printf("no record for %s on %s\n", tasks[0].key, tt.key);
        free(steps);
        llvm->destroy(t);
    }
    weft_tasks_free(tasks, n);
    return rc;
}

int weft_cmd_db(int argc, char **argv)
{
    static const weft_cmd_spec *const specs[] = {&weft_spec_db_ls,     &weft_spec_db_check, &weft_spec_db_export,
                                                 &weft_spec_db_import, &weft_spec_db_prune, &weft_spec_db_best};
    const weft_cmd_spec *spec = NULL;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (!strcmp(specs[i]->name + 3, argv[0])) spec = specs[i];
    if (!spec) return 2; /* weft.c dispatches known subcommands only */
    weft_args a;
    int ex = weft_args_parse(spec, argc - 1, argv + 1, &a);
    if (ex >= 0) return ex;
    const char *cmd = argv[0], *path = a.pos[0];
    int64_t shape[16];
    int ns = strcmp(cmd, "best") ? 0 : weft_cli_shape(&a, shape, 16);
    if (ns < 0) return 2;
    weft_db *db = NULL;
    weft_status rc = weft_db_open(path, !strcmp(cmd, "import"), &db);
    int status = 0;
    if (rc == WEFT_OK) {
        if (!strcmp(cmd, "ls")) rc = weft_db_ls(db, stdout);
        else if (!strcmp(cmd, "check")) {
            char *report = NULL;
            rc = weft_db_check(db, &report);
            if (rc == WEFT_OK) fputs(report ? report : "", stdout);
            free(report);
        } else if (!strcmp(cmd, "export")) rc = weft_db_export(db, stdout);
        else if (!strcmp(cmd, "import")) {
            const char *file = a.pos[1];
            FILE *in = strcmp(file, "-") ? fopen(file, "r") : stdin;
            int n = 0;
            if (!in) rc = weft_fail(WEFT_ERR_IO, "cannot open %s", file);
            else rc = weft_db_import(db, in, &n);
            if (in && in != stdin) fclose(in);
            if (rc == WEFT_OK) printf("imported %d measurement(s)\n", n);
        } else if (!strcmp(cmd, "prune")) status = db_prune(&a, db, &rc);
        else if (!strcmp(cmd, "best")) rc = db_best(&a, db, ns, shape);
    }
    if (rc != WEFT_OK && status != 2) fprintf(stderr, "weft %s: %s\n", spec->name, weft_last_error());
    weft_db_close(db);
    return status ? status : rc == WEFT_OK ? 0 : 1;
}
