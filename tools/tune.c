/* weft tune and weft db.
 *
 *   weft tune MODEL.onnx --db DB [--trials N | --time S] [--threads T] [--seed S] [--curve CSV]
 *   weft tune --op OP --shape S --db DB [...]
 *   weft db ls|export|prune DB [--keep K] | weft db import DB FILE | weft db best DB OP --shape S
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/hash.h"
#include "runtime/runtime.h"
#include "targets/target.h"
#include "tools/cli.h"
#include "tuner/tuner.h"
#include "weft/onnx.h"

int weft_cmd_tune(int argc, char **argv)
{
    const char *db = weft_cli_opt(argc, argv, "--db"), *op = weft_cli_opt(argc, argv, "--op");
    const char *trials_s = weft_cli_opt(argc, argv, "--trials"), *time_s = weft_cli_opt(argc, argv, "--time");
    const char *threads_s = weft_cli_opt(argc, argv, "--threads"), *seed_s = weft_cli_opt(argc, argv, "--seed");
    const char *curve = weft_cli_opt(argc, argv, "--curve");
    if (!db || !*db || (argc < 1) || (!op && argv[0][0] == '-')) {
        fprintf(stderr, "usage: weft tune MODEL.onnx --db DB [--trials N | --time S] [--threads T] [--seed S] [--curve CSV]\n"
                        "       weft tune --op OP --shape S --db DB [--trials N | --time S] ...\n");
        return 2;
    }
    weft_tune_options o = {0};
    o.db = db;
    o.trials = trials_s && *trials_s ? atoi(trials_s) : 0;
    o.time_s = time_s && *time_s ? atof(time_s) : 0;
    if (o.trials <= 0 && o.time_s <= 0) o.trials = 200;
    o.threads = threads_s && *threads_s ? atoi(threads_s) : 0;
    o.seed = seed_s && *seed_s ? strtoull(seed_s, NULL, 10) : 1;
    o.curve = curve && *curve ? curve : NULL;
    o.log = stdout;
    weft_task *tasks = NULL;
    int n = 0;
    weft_status rc;
    if (op) {
        const char *shape_s = weft_cli_opt(argc, argv, "--shape");
        int64_t shape[16];
        int ns = shape_s ? weft_cli_parse_shape(shape_s, shape, 16) : -1;
        if (ns < 0) {
            fprintf(stderr, "weft tune: --shape must be a comma-separated list of integers\n");
            return 2;
        }
        rc = weft_task_from_op(op, ns, shape, &tasks, &n);
    } else {
        weft_graph *g = NULL;
        rc = weft_onnx_load(argv[0], &g);
        if (rc == WEFT_OK) {
            const weft_target_ops *llvm = weft_target_find("llvm");
            weft_target *t = NULL;
            weft_target_caps caps;
            rc = llvm ? llvm->create(&t) : weft_fail(WEFT_ERR_UNAVAILABLE, "no llvm target");
            if (rc == WEFT_OK) {
                llvm->caps(t, &caps);
                rc = weft_tasks_from_graph(g, &caps, &tasks, &n);
                llvm->destroy(t);
            }
        }
        weft_graph_destroy(g);
    }
    if (rc == WEFT_OK) rc = weft_tune_tasks(tasks, n, &o);
    if (rc != WEFT_OK) fprintf(stderr, "weft tune: %s\n", weft_last_error());
    weft_tasks_free(tasks, n);
    return rc == WEFT_OK ? 0 : 1;
}

int weft_cmd_db(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: weft db ls|check|export DB | weft db import DB FILE | weft db prune DB [--keep K]\n"
                        "       weft db best DB OP --shape S [--threads T]\n");
        return 2;
    }
    const char *cmd = argv[0], *path = argv[1];
    bool create = !strcmp(cmd, "import");
    weft_db *db = NULL;
    weft_status rc = weft_db_open(path, create, &db);
    if (rc == WEFT_OK) {
        if (!strcmp(cmd, "ls")) rc = weft_db_ls(db, stdout);
        else if (!strcmp(cmd, "check")) {
            char *report = NULL;
            rc = weft_db_check(db, &report);
            if (rc == WEFT_OK) fputs(report ? report : "", stdout);
            free(report);
        }
        else if (!strcmp(cmd, "export")) rc = weft_db_export(db, stdout);
        else if (!strcmp(cmd, "import")) {
            FILE *in = argc > 2 && strcmp(argv[2], "-") ? fopen(argv[2], "r") : stdin;
            int n = 0;
            if (!in) rc = weft_fail(WEFT_ERR_IO, "cannot open %s", argv[2]);
            else rc = weft_db_import(db, in, &n);
            if (in && in != stdin) fclose(in);
            if (rc == WEFT_OK) printf("imported %d measurement(s)\n", n);
        } else if (!strcmp(cmd, "prune")) {
            const char *keep_s = weft_cli_opt(argc, argv, "--keep");
            int n = 0;
            rc = weft_db_prune(db, keep_s && *keep_s ? atoi(keep_s) : 1, &n);
            if (rc == WEFT_OK) printf("deleted %d measurement(s)\n", n);
        } else if (!strcmp(cmd, "best") && argc >= 3) {
            const char *shape_s = weft_cli_opt(argc, argv, "--shape");
            int64_t shape[16];
            int ns = shape_s ? weft_cli_parse_shape(shape_s, shape, 16) : -1;
            weft_task *tasks = NULL;
            int n = 0;
            rc = ns < 0 ? weft_fail(WEFT_ERR_INVALID_ARG, "--shape is required") : weft_task_from_op(argv[2], ns, shape, &tasks, &n);
            const weft_target_ops *llvm = weft_target_find("llvm");
            weft_target *t = NULL;
            if (rc == WEFT_OK) rc = llvm ? llvm->create(&t) : weft_fail(WEFT_ERR_UNAVAILABLE, "no llvm target");
            if (rc == WEFT_OK) {
                weft_target_caps caps;
                llvm->caps(t, &caps);
                weft_tuner_target tt;
                const char *th = weft_cli_opt(argc, argv, "--threads");
                weft_tuner_target_init(&tt, &caps, th && *th ? atoi(th) : 0);
                bool found = false;
                char *steps = NULL;
                double median = 0;
                rc = weft_db_best(db, tasks[0].key, tt.key, &found, &steps, &median);
                if (rc == WEFT_OK && found)
                    printf("# %s on %s: %.1f us, %.2f GFLOP/s\n%s", tasks[0].key, tt.key, median * 1e6,
                           tasks[0].flops / median * 1e-9, steps);
                else if (rc == WEFT_OK) printf("no record for %s on %s\n", tasks[0].key, tt.key);
                free(steps);
                llvm->destroy(t);
            }
            weft_tasks_free(tasks, n);
        } else rc = weft_fail(WEFT_ERR_INVALID_ARG, "unknown db command '%s'", cmd);
    }
    if (rc != WEFT_OK) fprintf(stderr, "weft db: %s\n", weft_last_error());
    weft_db_close(db);
    return rc == WEFT_OK ? 0 : 1;
}
