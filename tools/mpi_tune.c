/* weft-mpi: `weft tune` over the ranks of an MPI job (Open MPI). `mpirun -n N weft tune ...`
 * reaches it through weft (which sees OMPI_COMM_WORLD_SIZE > 1 and execs weft-mpi next to it,
 * so weft itself never links or loads libmpi); `mpirun -n N weft-mpi tune ...` is the same.
 *
 * Roles. Every rank parses the same arguments and builds the same tasks (so the model file must
 * be readable at the same path on every machine, like the executable). Rank 0 owns the SQLite
 * database, the cost model and the search: it runs weft_tune_tasks with a measure callback
 * (tuner.h) that sends each candidate to a measuring rank. Ranks 1..N-1 only measure: each
 * rebuilds a candidate's kernel from its step text and task index with the local measurer
 * (tuner/tune_measure.c: compile, time in a forked worker, check against the naive schedule)
 * and sends the result back. With N = 1 rank 0 measures itself, exactly as `weft tune`.
 *
 * Protocol (tags below; payloads are fixed-size structs sent as bytes, so every rank must run
 * the same weft build: the hello carries the version and the struct sizes):
 *   rank k -> 0   HELLO    built tasks? machine key, host, pid, hash of the task keys
 *   0 -> rank k   VERDICT  go, or refused with the reason (rank 0 prints it too)
 *   0 -> rank k   CAND     id, task index, input seed, check threshold, step text (NUL ended)
 *   rank k -> 0   RESULT   id, measurement, error text, seconds the rank spent on it
 *   0 -> rank k   STOP     the run is over
 * One candidate is in flight per rank at a time: a candidate takes 0.1 s or more to compile
 * and measure and a message well under a millisecond, so a rank is busy, never waiting on the
 * network, and a lost rank loses one candidate. A round's batch is 4 candidates per measuring
 * rank (at least 8) unless --batch says otherwise, so every rank has work in each round.
 *
 * Machine keys. Records are keyed by the machine rank 0 runs on. A measuring rank whose key
 * (CPU, ISA features, cores, threads) differs from rank 0's is refused with a message naming
 * it and both keys, and measures nothing: its times would be filed under the wrong machine.
 * Ranks whose weft build or tasks differ are refused the same way. mpirun binds each rank to a
 * core or socket when it starts few ranks; every rank undoes that first (unbind below), so the
 * key, which counts the cores the process may use, is the machine's, as a plain `weft tune`
 * and `weft run` on that machine see it, and measurements use the cores as they would.
 *
 * Faults. Rank 0 never blocks on a measuring rank: it polls (MPI_Iprobe) with a deadline. A rank
 * that sends no result for --rank-timeout seconds (default 120; each candidate's own worker
 * times out after 10 s per phase) is lost: rank 0 prints its number and host, drops its
 * in-flight candidate (not recorded, so it may be drawn again) and goes on with the others;
 * when none is left the run ends as a finished one would (summary printed, exit 1). Every
 * measurement is committed to the database in its own transaction as its batch returns. A
 * plain `mpirun` ends the whole job when a rank dies (it kills rank 0 too; rank 0 then prints
 * that it was stopped and the database holds every measurement committed so far); under
 * `mpirun --enable-recovery` the job survives and rank 0 goes on as above. When ranks were
 * lost, rank 0 ends the job with MPI_Abort after closing the database (a hung rank would
 * otherwise block MPI_Finalize), exit status 3 when tuning itself succeeded.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/error.h"
#include "runtime/runtime.h"
#include "targets/target.h"
#include "tools/cli.h"
#include "tuner/tuner.h"
#include "weft/weft.h"

enum { TAG_HELLO = 11, TAG_VERDICT, TAG_CAND, TAG_RESULT, TAG_STOP };
#define DEFAULT_RANK_TIMEOUT 120.0
#define POLL_SLEEP_US 200

typedef struct hello_msg {
    int32_t ok;               /* the rank built the tasks */
    int32_t pid;
    int32_t sizes[2];         /* sizeof(cand_head), sizeof(result_msg) */
    char version[32];
    char key[160];            /* machine key (weft_tuner_target) */
    char host[64];
    char tasks[17];           /* hash of the task keys, in order */
    char error[300];          /* why the tasks could not be built */
} hello_msg;

typedef struct verdict_msg {
    int32_t go;
    char why[400];
} verdict_msg;

typedef struct cand_head {
    int32_t id, task;
    uint64_t seed;
    double check_below;
} cand_head; /* followed by the step text and its NUL */

typedef struct result_msg {
    int32_t id;
    int32_t pad;
    double seconds;           /* the rank's time on this candidate (compile + measure + check) */
    weft_measure_result r;
    char error[300];
} result_msg;

static double now(void) { return weft_rt_now(); }

static void nap(void)
{
    struct timespec ts = {0, POLL_SLEEP_US * 1000L};
    nanosleep(&ts, NULL);
}

/* Waits for a message from src with tag; true with *st filled when one came before timeout s. */
static bool wait_msg(int src, int tag, double timeout, MPI_Status *st)
{
    double t0 = now();
    for (;;) {
        int flag = 0;
        if (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, st) != MPI_SUCCESS) return false;
        if (flag) return true;
        if (timeout > 0 && now() - t0 > timeout) return false;
        nap();
    }
}

static void hash_tasks(const weft_task *t, int n, char out[17])
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        for (const char *s = t[i].key; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void machine_key(int threads, char *key, size_t n)
{
    const weft_target_ops *llvm = weft_target_find("llvm");
    weft_target *t = NULL;
    key[0] = '\0';
    if (!llvm || llvm->create(&t) != WEFT_OK) return;
    weft_target_caps caps;
    llvm->caps(t, &caps);
    weft_tuner_target tt;
    weft_tuner_target_init(&tt, &caps, threads);
    snprintf(key, n, "%s", tt.key);
    llvm->destroy(t);
}

/* ---- rank 0 -------------------------------------------------------------------------------- */

typedef struct rank_info {
    bool live;
    char host[64];
    int pid;
    int busy;              /* index into the current batch of the candidate in flight, or -1 */
    int busy_id;
    double since;          /* when it was last heard from (or given work while idle) */
    char *sbuf;            /* the candidate message in flight */
    MPI_Request sreq;
    long done;
    double seconds;        /* summed result_msg.seconds */
} rank_info;

typedef struct driver {
    int size;
    rank_info *r;
    int n_live;
    double timeout;
    int next_id;
    long sent, bytes_out, received, bytes_in, lost_cands;
    double in_callback;    /* seconds spent inside the measure callback */
    char lost_list[256];   /* "2 (host vm), ..." */
} driver;

static void lose_rank(driver *d, int k, const char *why, weft_tune_cand *c)
{
    rank_info *r = &d->r[k];
    r->live = false;
    d->n_live--;
    if (r->busy >= 0) {
        c[r->busy].lost = true;
        d->lost_cands++;
    }
    size_t len = strlen(d->lost_list);
    snprintf(d->lost_list + len, sizeof d->lost_list - len, "%s%d (host %s)", len ? ", " : "", k, r->host);
    fprintf(stdout, "weft tune: rank %d (host %s, pid %d) %s; its %d in-flight candidate(s) are dropped; going on with %d "
                    "measuring rank(s)\n", k, r->host, r->pid, why, r->busy >= 0, d->n_live);
    fflush(stdout);
    r->busy = -1;
}

static weft_status send_cand(driver *d, int k, const weft_tune_cand *c, int idx)
{
    rank_info *r = &d->r[k];
    if (r->sbuf) { /* the previous candidate's send completed when its result came back */
        MPI_Wait(&r->sreq, MPI_STATUS_IGNORE);
        free(r->sbuf);
        r->sbuf = NULL;
    }
    size_t len = strlen(c->steps) + 1, total = sizeof(cand_head) + len;
    if (total > (size_t)INT32_MAX) return weft_fail(WEFT_ERR_INVALID_ARG, "tune: candidate steps of %zu bytes", len);
    r->sbuf = malloc(total);
    if (!r->sbuf) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
    cand_head h = {.id = d->next_id++, .task = c->task, .seed = c->seed, .check_below = c->check_below};
    memcpy(r->sbuf, &h, sizeof h);
    memcpy(r->sbuf + sizeof h, c->steps, len);
    MPI_Isend(r->sbuf, (int)total, MPI_BYTE, k, TAG_CAND, MPI_COMM_WORLD, &r->sreq);
    r->busy = idx;
    r->busy_id = h.id;
    r->since = now();
    d->sent++;
    d->bytes_out += (long)total;
    return WEFT_OK;
}

/* The measure callback: one candidate in flight per live rank, the next one sent as a result
 * comes back; a rank silent for d->timeout seconds is lost with its candidate. */
static weft_status mpi_measure(void *ud, weft_tune_cand *c, int n)
{
    driver *d = ud;
    double t0 = now();
    int next = 0, left = n;
    weft_status rc = WEFT_OK;
    for (int i = 0; i < n; i++) c[i].lost = false;
    while (left > 0 && rc == WEFT_OK) {
        if (d->n_live == 0) {
            for (int i = next; i < n; i++) c[i].lost = true;
            rc = weft_fail(WEFT_ERR_DEVICE, "every measuring rank is lost (%s); the database holds every measurement "
                                            "made until then", d->lost_list);
            break;
        }
        for (int k = 1; k < d->size && next < n && rc == WEFT_OK; k++)
            if (d->r[k].live && d->r[k].busy < 0) {
                rc = send_cand(d, k, &c[next], next);
                next++;
            }
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            result_msg m;
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != (int)sizeof m) { /* cannot happen between equal builds (hello checks) */
                void *junk = malloc(count > 0 ? (size_t)count : 1);
                if (!junk) return weft_fail(WEFT_ERR_NOMEM, "out of memory");
                MPI_Recv(junk, count, MPI_BYTE, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                free(junk);
                continue;
            }
            MPI_Recv(&m, (int)sizeof m, MPI_BYTE, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rank_info *r = &d->r[st.MPI_SOURCE];
            if (!r->live || r->busy < 0 || m.id != r->busy_id) continue; /* from a rank already given up */
            d->received++;
            d->bytes_in += (long)sizeof m;
            weft_tune_cand *ci = &c[r->busy];
            ci->r = m.r;
            if (ci->r.n_times < 0 || ci->r.n_times > WEFT_MEASURE_MAX_TIMES) ci->r.n_times = 0;
            ci->r.error[sizeof ci->r.error - 1] = '\0';
            m.error[sizeof m.error - 1] = '\0';
            snprintf(ci->error, sizeof ci->error, "%s", m.error);
            r->busy = -1;
            r->done++;
            r->seconds += m.seconds;
            r->since = now();
            left--;
            continue;
        }
        for (int k = 1; k < d->size; k++) {
            rank_info *r = &d->r[k];
            if (r->live && r->busy >= 0 && now() - r->since > d->timeout) {
                char why[96];
                snprintf(why, sizeof why, "sent no result for %.0f s (dead or hung)", d->timeout);
                lose_rank(d, k, why, c);
                left--;
            }
        }
        nap();
    }
    d->in_callback += now() - t0;
    return rc;
}

/* Set once at start: what rank 0 says when mpirun stops it (a rank died under plain mpirun). */
static char stop_note[512];
static void on_term(int sig)
{
    ssize_t w = write(2, stop_note, strlen(stop_note));
    (void)w;
    _exit(128 + sig);
}

static int run_rank0(weft_cli_tune *t, int size, bool ready)
{
    driver d = {.size = size, .timeout = t->rank_timeout > 0 ? t->rank_timeout : DEFAULT_RANK_TIMEOUT};
    d.r = calloc((size_t)size, sizeof *d.r);
    if (!d.r) return 1;
    char key[160], tasks[17] = "";
    machine_key(t->o.threads, key, sizeof key);
    if (gethostname(d.r[0].host, sizeof d.r[0].host - 1) != 0) snprintf(d.r[0].host, sizeof d.r[0].host, "?");
    if (ready) hash_tasks(t->tasks, t->n, tasks);
    for (int k = 1; k < size; k++) {
        rank_info *r = &d.r[k];
        r->busy = -1;
        snprintf(r->host, sizeof r->host, "?");
        hello_msg h;
        MPI_Status st;
        verdict_msg v = {0};
        if (!wait_msg(k, TAG_HELLO, d.timeout, &st)) {
            /* counted as lost, so the job ends with MPI_Abort rather than waiting for it */
            size_t len = strlen(d.lost_list);
            snprintf(d.lost_list + len, sizeof d.lost_list - len, "%s%d (silent at start)", len ? ", " : "", k);
            if (ready) printf("weft tune: rank %d sent no hello in %.0f s; it measures nothing\n", k, d.timeout);
            continue;
        }
        MPI_Recv(&h, (int)sizeof h, MPI_BYTE, k, TAG_HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        h.key[sizeof h.key - 1] = h.host[sizeof h.host - 1] = h.error[sizeof h.error - 1] = h.version[sizeof h.version - 1] = '\0';
        h.tasks[16] = '\0';
        snprintf(r->host, sizeof r->host, "%s", h.host);
        r->pid = h.pid;
        if (!ready) snprintf(v.why, sizeof v.why, "rank 0 could not start");
        else if (strcmp(h.version, weft_version()) || h.sizes[0] != (int)sizeof(cand_head) || h.sizes[1] != (int)sizeof(result_msg))
            snprintf(v.why, sizeof v.why, "runs weft %s, rank 0 weft %s (every rank needs the same build)", h.version,
                     weft_version());
        else if (!h.ok) snprintf(v.why, sizeof v.why, "could not build the tasks: %.300s", h.error);
        else if (strcmp(h.tasks, tasks)) snprintf(v.why, sizeof v.why, "built other tasks than rank 0 (task hash %s, rank 0 %s)",
                                                  h.tasks, tasks);
        else if (strcmp(h.key, key))
            snprintf(v.why, sizeof v.why, "is another machine: key %.160s, rank 0's %.160s (records are kept per machine)",
                     h.key, key);
        else v.go = 1;
        MPI_Send(&v, (int)sizeof v, MPI_BYTE, k, TAG_VERDICT, MPI_COMM_WORLD);
        if (v.go) {
            r->live = true;
            d.n_live++;
        } else if (ready) printf("weft tune: rank %d (host %s) refused: %s; it measures nothing\n", k, r->host, v.why);
    }
    if (!ready) {
        free(d.r);
        return 1;
    }
    if (!t->batch_given) t->o.batch = 4 * d.n_live > 8 ? 4 * d.n_live : 8;
    if (d.n_live == 0) {
        fprintf(stderr, "weft tune: no rank can measure (%d rank(s) besides rank 0, all refused or silent)\n", size - 1);
        free(d.r);
        return 1;
    }
    printf("weft tune over MPI: rank 0 (host %s) searches and keeps %s; %d rank(s) measure:", d.r[0].host, t->o.db, d.n_live);
    for (int k = 1; k < size; k++)
        if (d.r[k].live) printf(" %d (host %s, pid %d)", k, d.r[k].host, d.r[k].pid);
    printf("; %d candidates per round\n", t->o.batch);
    fflush(stdout);
    snprintf(stop_note, sizeof stop_note, "weft tune (rank 0): stopped by a signal (mpirun ends every rank when one dies; "
                                          "see its message); %s holds every measurement committed so far\n", t->o.db);
    signal(SIGTERM, on_term);
    t->o.measure = mpi_measure;
    t->o.measure_ud = &d;
    double t0 = now();
    weft_status rc = weft_tune_tasks(t->tasks, t->n, &t->o);
    double wall = now() - t0;
    signal(SIGTERM, SIG_DFL);
    if (rc != WEFT_OK) fprintf(stderr, "weft tune: %s\n", weft_last_error());
    struct rusage ru;
    double cpu = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
                                                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6
                                                  : 0;
    printf("mpi: %ld candidate(s) measured by %d rank(s) in %.1f s (%.2f per second); rank 0 searched %.1f s and waited "
           "%.1f s for results (%.1f s of CPU in all)\n", d.received, size - 1, wall, wall > 0 ? d.received / wall : 0.0,
           wall - d.in_callback, d.in_callback, cpu);
    double busy = 0;
    for (int k = 1; k < size; k++) busy += d.r[k].seconds;
    if (d.received > 0 && wall > 0)
        printf("mpi: the measuring ranks were busy %.0f%% of the run (their seconds per candidate summed, over %d x %.1f s)\n",
               100.0 * busy / ((size - 1) * wall), size - 1, wall);
    for (int k = 1; k < size; k++) {
        if (!d.r[k].done) continue;
        printf("mpi: rank %d (host %s): %ld candidate(s), %.3f s each (compile + measure + check)%s\n", k, d.r[k].host,
               d.r[k].done, d.r[k].seconds / (double)d.r[k].done, d.r[k].live ? "" : ", lost");
    }
    printf("mpi: messages: %ld candidate(s) sent, %.0f bytes each on average; %ld result(s), %zu bytes each; %ld "
           "candidate(s) lost\n", d.sent, d.sent ? (double)d.bytes_out / (double)d.sent : 0.0, d.received, sizeof(result_msg),
           d.lost_cands);
    for (int k = 1; k < size; k++) {
        if (d.r[k].live) MPI_Send(NULL, 0, MPI_BYTE, k, TAG_STOP, MPI_COMM_WORLD);
        if (d.r[k].live && d.r[k].sbuf) MPI_Wait(&d.r[k].sreq, MPI_STATUS_IGNORE);
        if (d.r[k].live) free(d.r[k].sbuf);
    }
    int status = rc == WEFT_OK ? 0 : 1;
    if (d.lost_list[0]) {
        /* the database is closed (weft_tune_tasks returned); a hung rank would block
         * MPI_Finalize, so the job ends here */
        printf("weft tune: ending the MPI job: rank(s) %s were lost; %s is complete and consistent\n", d.lost_list, t->o.db);
        fflush(NULL);
        weft_cli_tune_free(t);
        MPI_Abort(MPI_COMM_WORLD, rc == WEFT_OK ? 3 : 1);
    }
    free(d.r);
    return status;
}

/* ---- ranks 1..N-1 ---------------------------------------------------------------------------- */

static int run_worker(weft_cli_tune *t, bool ready, const char *prep_error)
{
    hello_msg h;
    memset(&h, 0, sizeof h);
    h.ok = ready;
    h.pid = (int32_t)getpid();
    h.sizes[0] = (int32_t)sizeof(cand_head);
    h.sizes[1] = (int32_t)sizeof(result_msg);
    snprintf(h.version, sizeof h.version, "%s", weft_version());
    machine_key(t->o.threads, h.key, sizeof h.key);
    if (gethostname(h.host, sizeof h.host - 1) != 0) snprintf(h.host, sizeof h.host, "?");
    if (ready) hash_tasks(t->tasks, t->n, h.tasks);
    snprintf(h.error, sizeof h.error, "%s", prep_error);
    weft_tune_measurer *m = NULL;
    if (ready && weft_tune_measurer_create(t->tasks, t->n, t->o.threads, &m) != WEFT_OK) {
        h.ok = 0;
        snprintf(h.error, sizeof h.error, "%s", weft_last_error());
    }
    MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_HELLO, MPI_COMM_WORLD);
    verdict_msg v;
    MPI_Status st;
    wait_msg(0, TAG_VERDICT, 0, &st);
    MPI_Recv(&v, (int)sizeof v, MPI_BYTE, 0, TAG_VERDICT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!v.go) {
        weft_tune_measurer_destroy(m);
        return ready ? 0 : 1;
    }
    char *buf = NULL;
    int cap = 0;
    for (;;) {
        wait_msg(0, MPI_ANY_TAG, 0, &st);
        if (st.MPI_TAG == TAG_STOP) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        }
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count > cap) {
            char *nb = realloc(buf, (size_t)count);
            if (!nb) break;
            buf = nb;
            cap = count;
        }
        MPI_Recv(buf, count, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (st.MPI_TAG != TAG_CAND || count <= (int)sizeof(cand_head)) continue;
        cand_head hd;
        memcpy(&hd, buf, sizeof hd);
        buf[count - 1] = '\0';
        weft_tune_cand c = {.task = hd.task, .steps = buf + sizeof hd, .seed = hd.seed, .check_below = hd.check_below};
        double t0 = now();
        weft_tune_measurer_run(m, &c);
        result_msg res;
        memset(&res, 0, sizeof res);
        res.id = hd.id;
        res.seconds = now() - t0;
        res.r = c.r;
        memcpy(res.error, c.error, sizeof res.error);
        MPI_Send(&res, (int)sizeof res, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
    free(buf);
    weft_tune_measurer_destroy(m);
    return 0;
}

/* Lets this process use every CPU the machine (and its cpuset) allows; true when that widened
 * the set mpirun bound it to. */
static bool unbind(void)
{
    cpu_set_t before, all;
    CPU_ZERO(&before);
    CPU_ZERO(&all);
    if (sched_getaffinity(0, sizeof before, &before) != 0) return false;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((int)i, &all);
    if (sched_setaffinity(0, sizeof all, &all) != 0) return false; /* the kernel keeps the cpuset's */
    cpu_set_t after;
    CPU_ZERO(&after);
    return sched_getaffinity(0, sizeof after, &after) == 0 && CPU_COUNT(&after) > CPU_COUNT(&before);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "tune")) {
        fprintf(stderr, "usage: mpirun -n N weft-mpi tune MODEL.onnx|--op OP --shape S --db DB [options of weft tune]\n");
        return 2;
    }
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool widened = unbind();
    /* a rank never outlives the launcher that started it (mpirun, or its daemon on a remote
     * machine), even if that crashes */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* one rank prints the help and the usage errors; the others' stderr is theirs again after
     * parsing (a failure to build the tasks there reaches rank 0 in the hello) */
    int saved_err = -1;
    if (rank != 0) {
        FILE *f = freopen("/dev/null", "w", stdout);
        (void)f;
        fflush(stderr);
        saved_err = dup(2);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2), close(null);
    }
    weft_cli_tune t;
    int ex = weft_cli_tune_prepare(argc - 2, argv + 2, &t);
    if (saved_err >= 0) {
        fflush(stderr);
        dup2(saved_err, 2);
        close(saved_err);
    }
    char prep_error[300] = "";
    if (ex >= 0) snprintf(prep_error, sizeof prep_error, "%s", ex == 2 || ex == 0 ? "bad arguments" : weft_last_error());
    int status;
    if (size == 1) {
        status = ex;
        if (ex < 0) {
            weft_status rc = weft_tune_tasks(t.tasks, t.n, &t.o);
            if (rc != WEFT_OK) fprintf(stderr, "weft tune: %s\n", weft_last_error());
            status = rc == WEFT_OK ? 0 : 1;
        }
    } else if (rank == 0) {
        if (widened && ex < 0) printf("weft tune over MPI: undid mpirun's process binding (records are keyed by the whole machine)\n");
        status = run_rank0(&t, size, ex < 0);
        if (ex >= 0) status = ex;
    } else {
        status = run_worker(&t, ex < 0, prep_error);
        if (ex >= 0) status = ex; /* help or a usage error: the same status on every rank */
    }
    weft_cli_tune_free(&t);
    MPI_Finalize();
    return status;
}
