/* Fault-proof tuning: every measurement is committed as it completes, so a
 * tune killed with SIGKILL at any point leaves a consistent database, and
 * running again measures nothing twice; two tuners share one database. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "og_ogtune.h"
#include "og_test.h"
#include "og_tmpdir.h"
#include "og_tuner.h"

TestSuite(resume, .init = make_tmpdir, .fini = remove_tmpdir);

/* The candidates a tune measures: the quick space, or under OG_TEST_STRIDE
 * (the sanitizer pass, where each candidate's worker starts under ASan and
 * the validation layer) its first 5, where kills still land in every phase. */
#define STRIDED_CANDIDATES 5

static const char *budget(void)
{
    return og_test_stride() > 1 ? "5c" : "100000c";
}

/* Starts `ogtune tune` of shape into db with its output discarded; returns
 * its pid. */
static pid_t start_tune(const char *db, const char *shape)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork");
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "w", stdout);
        (void)null;
        execl(OG_OGTUNE, "ogtune", "tune", "--preset", "quick", "--dtype", "f32", "--shapes", shape,
              "--db", db, "--budget", budget(), (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid)
{
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The result of a one-value query on db. */
static long long query_int(const char *db, const char *sql)
{
    sqlite3 *conn;
    sqlite3_stmt *stmt;
    cr_assert_eq(sqlite3_open_v2(db, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(conn, sql, -1, &stmt, NULL), SQLITE_OK, "%s",
                 sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW, "%s", sql);
    long long v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(conn);
    return v;
}

/* Whether db, as the next ogtune to open it finds it, is intact: opened for
 * writing, so that SQLite rolls back the hot journal a killed tuner left
 * (a read-only connection cannot, and fails to read the schema), and
 * waiting out a lock a process the kill left behind may still hold. */
static void expect_integrity(const char *db)
{
    sqlite3 *conn;
    sqlite3_stmt *stmt;
    cr_assert_eq(sqlite3_open_v2(db, &conn, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(conn, 30000);
    cr_assert_eq(sqlite3_prepare_v2(conn, "PRAGMA integrity_check", -1, &stmt, NULL), SQLITE_OK,
                 "%s", sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
    cr_expect_str_eq((const char *)sqlite3_column_text(stmt, 0), "ok");
    sqlite3_finalize(stmt);
    sqlite3_close(conn);
}

/* Candidates a tune of a float32 shape measures on this device: its quick
 * space, or STRIDED_CANDIDATES of it (budget). */
static size_t space_size(int64_t m, int64_t n, int64_t k)
{
    og_context *ctx;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = ""}, &ctx), OG_OK);
    og_params *space;
    size_t count;
    og_shape s = {m, n, k, 1};
    cr_assert_eq(og_space(&ctx->limits, OG_PRESET_QUICK, OG_F32, 0, 0, &s, &space, &count), OG_OK);
    free(space);
    close_context(ctx);
    return og_test_stride() > 1 && count > STRIDED_CANDIDATES ? STRIDED_CANDIDATES : count;
}

/* The seed of the kill points: OG_TEST_SEED when set (to repeat a run),
 * else the clock; printed either way. */
static uint64_t kill_seed(void)
{
    const char *env = getenv("OG_TEST_SEED");
    char *end = NULL;
    uint64_t seed = env && *env ? strtoull(env, &end, 0) : (uint64_t)time(NULL);
    cr_assert(!env || !*env || *end == '\0', "OG_TEST_SEED=%s is not a number", env);
    fprintf(stderr,
            "test_resume: kill points from seed %" PRIu64 " (OG_TEST_SEED=%" PRIu64
            " repeats them)\n",
            seed, seed);
    return seed;
}

/* The next of a sequence of numbers from *state (splitmix64). */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Killed four times at random points (the first kills land in context
 * creation, compilation, verification or a commit), the database stays
 * consistent; the fifth run finishes with one accepted record per
 * candidate (a worker that crashed would leave a rejected one). */
Test(resume, sigkill_at_random_points, .timeout = 600)
{
    char db[512];
    tmp_path(db, sizeof db, "killed.db");
    uint64_t state = kill_seed();
    for (int round = 0; round < 4; round++) {
        pid_t pid = start_tune(db, "64x64x64");
        struct timespec delay = {0, (long)(200 + next_random(&state) % 1800) * 1000000L};
        nanosleep(&delay, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (access(db, F_OK) == 0)
            expect_integrity(db);
    }
    cr_assert_eq(wait_exit(start_tune(db, "64x64x64")), 0);
    expect_integrity(db);
    long long n = (long long)space_size(64, 64, 64);
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records"), n);
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records WHERE accepted = 1"), n);
    cr_expect_eq(query_int(db, "SELECT count(DISTINCT params) FROM records"), n);
    /* Once more: everything is in the database, nothing is measured. */
    char *out, args[600];
    snprintf(args, sizeof args,
             "tune --preset quick --dtype f32 --shapes 64x64x64 --db '%s' --budget %s", db,
             budget());
    cr_assert_eq(ogtune(args, &out), 0);
    char want[96];
    snprintf(want, sizeof want, "%lld candidates measured by an earlier run", n);
    cr_expect(strstr(out, want), "%s", out);
    free(out);
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records"), n);
}

/* Two tuners at once on one database: both succeed (no "database is
 * locked"), and every record of both is there, accepted. */
Test(resume, two_tuners_one_database, .timeout = 600)
{
    char db[512];
    tmp_path(db, sizeof db, "shared.db");
    pid_t a = start_tune(db, "64x64x64");
    pid_t b = start_tune(db, "48x80x96");
    cr_expect_eq(wait_exit(a), 0);
    cr_expect_eq(wait_exit(b), 0);
    expect_integrity(db);
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records WHERE m = 64 AND accepted = 1"),
                 (long long)space_size(64, 64, 64));
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records WHERE m = 48 AND accepted = 1"),
                 (long long)space_size(48, 80, 96));
    cr_expect_eq(query_int(db, "SELECT count(*) FROM records"),
                 (long long)(space_size(64, 64, 64) + space_size(48, 80, 96)));
}
