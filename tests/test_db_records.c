/* The tuning database's records (db/, og_db.h) on files in a temporary
 * directory: insert and select (exact, nearest in log space, never a
 * rejected or stale record), the driver build a record was measured on, the
 * checks of a record and its device, records kept across connections, and
 * the best record of a key kept by merge. */
#include "og_db_case.h"

TestSuite(db, .init = make_tmpdir, .fini = remove_tmpdir);

Test(db, insert_and_exact_select)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    int64_t dev = device_id(db, 1);
    cr_assert_eq(device_id(db, 1), dev, "the same device key must map to the same row");

    og_record slow = test_record(512, 256, 128, 3, 40.0);
    og_record fast = test_record(512, 256, 128, 3, 90.0);
    og_record near = test_record(512, 256, 129, 3, 500.0);
    insert(db, dev, &slow);
    insert(db, dev, &fast);
    insert(db, dev, &near);

    selection s = select_shape(db, 1, 512, 256, 128, 3);
    cr_assert_eq(s.found, 1);
    cr_assert_eq(s.other_driver, 0);
    cr_assert_eq(s.rec.gflops, 90.0, "picked %g GFLOP/s, want the best exact record", s.rec.gflops);
    cr_assert_eq(s.rec.m, 512);
    cr_assert_eq(s.rec.n, 256);
    cr_assert_eq(s.rec.k, 128);
    cr_assert_eq(s.rec.batch, 3);
    cr_assert_eq(s.rec.template_hash, TEST_HASH);
    cr_assert_str_eq(s.rec.template_name, "tile");
    cr_assert_str_eq(s.rec.key.op, "gemm");
    cr_assert_eq(s.rec.key.dtype, OG_F16);
    cr_assert_eq(s.rec.key.mode, OG_MODE_FAST);
    cr_assert_eq(s.rec.key.trans_a, 0);
    cr_assert_eq(s.rec.key.trans_b, 1);
    cr_assert_str_eq(s.rec.params, fast.params);
    cr_assert_eq(s.rec.median_us, 12.5);
    cr_assert_eq(s.rec.samples, 9);
    cr_assert_eq(s.rec.spread, 0.1);
    cr_assert_str_eq(s.rec.memory, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED);
    cr_assert_eq(s.rec.max_error, 1e-6);
    cr_assert_eq(s.rec.accepted, 1);
    cr_assert_eq(s.rec.created, 1700000000);

    /* og_db_find (a resumed run) reads them too. */
    og_record again;
    int have = 0;
    char ferr[512] = "";
    cr_assert_eq(og_db_find(db, dev, &fast, &again, &have, ferr, sizeof ferr), OG_OK, "%s", ferr);
    cr_assert_eq(have, 1);
    cr_expect_eq(again.spread, 0.1);
    cr_expect_str_eq(again.memory, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED);

    /* Another key (dtype) has no records at all. */
    og_device_info d = test_device(1);
    og_record_key key = test_key();
    key.dtype = OG_BF16;
    og_record out;
    og_device_info out_dev;
    int found = -1, other = -1;
    char err[512] = "";
    cr_assert_eq(og_db_select(db, &d, &key, "tile", TEST_HASH, 512, 256, 128, 3, &out, &out_dev,
                              &found, &other, err, sizeof err),
                 OG_OK, "%s", err);
    cr_assert_eq(found, 0);
    cr_assert_eq(other, 0);
    og_db_close(db);
}

Test(db, created_defaults_to_now)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    og_record rec = test_record(8, 8, 8, 1, 1.0);
    rec.created = 0;
    int64_t before = (int64_t)time(NULL);
    insert(db, device_id(db, 1), &rec);
    selection s = select_shape(db, 1, 8, 8, 8, 1);
    cr_assert_eq(s.found, 1);
    cr_assert_geq(s.rec.created, before);
    cr_assert_leq(s.rec.created, (int64_t)time(NULL));
    og_db_close(db);
}

Test(db, nearest_shape_in_log_space)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    int64_t dev = device_id(db, 1);
    /* Query 300^3 x 1: 256^3 x 1 is nearest in log space (3 ln(300/256)^2);
     * 300^3 x 8 (ln(8)^2) and 1024^3 x 1 are farther though faster. */
    og_record a = test_record(256, 256, 256, 1, 10.0);
    og_record b = test_record(256, 256, 256, 1, 30.0);
    og_record c = test_record(256, 256, 256, 1, 20.0);
    og_record far = test_record(1024, 1024, 1024, 1, 900.0);
    og_record bigbatch = test_record(300, 300, 300, 8, 800.0);
    insert(db, dev, &a);
    insert(db, dev, &b);
    insert(db, dev, &c);
    insert(db, dev, &far);
    insert(db, dev, &bigbatch);

    selection s = select_shape(db, 1, 300, 300, 300, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.other_driver, 0);
    cr_assert_eq(s.rec.m, 256, "picked m=%lld", (long long)s.rec.m);
    cr_assert_eq(s.rec.batch, 1);
    cr_assert_eq(s.rec.gflops, 30.0, "want the best record of the nearest shape");

    /* Log space, not linear: for m = 2048 the 1024 shape (ratio 2) is
     * nearer than 256 (ratio 8) and the 300x8 one. */
    s = select_shape(db, 1, 2048, 1024, 1024, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.rec.m, 1024);

    /* Zero sizes count as 1 and do not break the distance. */
    s = select_shape(db, 1, 0, 0, 0, 0);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.rec.m, 256);

    /* Equal distances (ratio 2 one way, 1/2 the other): the higher GFLOP/s. */
    og_record lo = test_record(64, 8, 8, 1, 5.0);
    og_record hi = test_record(16, 8, 8, 1, 7.0);
    insert(db, dev, &lo);
    insert(db, dev, &hi);
    s = select_shape(db, 1, 32, 8, 8, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.rec.m, 16, "tie at equal distance must go to the higher GFLOP/s");

    /* Equal distances that the logarithm rounds apart: ln(21/3)^2 and
     * ln(21/147)^2 differ in the last bit, and still tie. */
    og_record r3 = test_record(3, 5000, 5000, 1, 7.0);
    og_record r147 = test_record(147, 5000, 5000, 1, 5.0);
    insert(db, dev, &r3);
    insert(db, dev, &r147);
    s = select_shape(db, 1, 21, 5000, 5000, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.rec.m, 3, "rounding must not break the tie at equal distance");
    og_db_close(db);
}

Test(db, rejected_and_stale_records_are_never_selected)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    int64_t dev = device_id(db, 1);

    og_record rejected = test_record(128, 128, 128, 1, 1000.0);
    rejected.accepted = 0;
    snprintf(rejected.reason, sizeof rejected.reason, "max error 0.5 > 1e-3");
    og_record stale = test_record(128, 128, 128, 1, 2000.0);
    stale.template_hash = TEST_HASH ^ 1;
    og_record renamed = test_record(128, 128, 128, 1, 3000.0);
    snprintf(renamed.template_name, sizeof renamed.template_name, "tile2");
    og_record otherkey = test_record(128, 128, 128, 1, 4000.0);
    otherkey.key.trans_b = 0;
    insert(db, dev, &rejected);
    insert(db, dev, &stale);
    insert(db, dev, &renamed);
    insert(db, dev, &otherkey);

    selection s = select_shape(db, 1, 128, 128, 128, 1);
    cr_assert_eq(s.found, 0, "selected a record of %g GFLOP/s", s.rec.gflops);
    cr_assert_eq(s.other_driver, 0);

    /* An accepted record far away wins over all of them, even at the exact shape. */
    og_record good = test_record(4096, 4096, 4096, 16, 5.0);
    insert(db, dev, &good);
    s = select_shape(db, 1, 128, 128, 128, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.rec.gflops, 5.0);
    cr_assert_eq(s.rec.accepted, 1);
    og_db_close(db);
}

Test(db, same_driver_build_is_matched)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    og_device_info mesa22 = build_device(1, MESA_22_INFO, MESA_22_UUID);
    og_record rec = test_record(64, 64, 64, 1, 11.0);
    insert(db, build_device_id(db, &mesa22), &rec);

    selection s = select_on(db, &mesa22, 64, 64, 64);
    cr_assert_eq(s.found, 1);
    cr_expect_eq(s.other_driver, 0);
    cr_expect_eq(s.rec.gflops, 11.0);
    /* The record's device as stored, driver build included. */
    cr_expect_eq(s.dev.driver_version, 1u);
    cr_expect_str_eq(s.dev.driver_info, MESA_22_INFO);
    cr_expect_str_eq(s.dev.pipeline_cache_uuid, MESA_22_UUID);
    cr_expect_str_eq(s.dev.name, "llvmpipe (test)");
    og_db_close(db);
}

Test(db, other_driver_version_is_used_with_flag)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    int64_t old_driver = device_id(db, 1);
    og_record rec = test_record(64, 64, 64, 1, 11.0);
    insert(db, old_driver, &rec);

    /* Device key with driver version 2 has no row and no records. */
    selection s = select_shape(db, 2, 64, 64, 64, 1);
    cr_assert_eq(s.found, 1);
    cr_assert_eq(s.other_driver, 1);
    cr_assert_eq(s.rec.gflops, 11.0);
    cr_assert_eq(s.dev.driver_version, 1u);

    /* Once the exact driver has any record for the key, it is preferred,
     * even nearest over another driver's exact shape. */
    int64_t new_driver = device_id(db, 2);
    cr_assert_neq(new_driver, old_driver);
    og_record mine = test_record(128, 64, 64, 1, 3.0);
    insert(db, new_driver, &mine);
    s = select_shape(db, 2, 64, 64, 64, 1);
    cr_assert_eq(s.found, 2);
    cr_assert_eq(s.other_driver, 0);
    cr_assert_eq(s.rec.gflops, 3.0);
    cr_assert_eq(s.dev.driver_version, 2u);

    /* Another driver id, vendor or device is another device: nothing is borrowed. */
    for (int i = 0; i < 3; i++) {
        og_device_info dev = test_device(1);
        *(i == 0 ? &dev.driver_id : i == 1 ? &dev.vendor_id : &dev.device_id) += 1;
        s = select_on(db, &dev, 64, 64, 64);
        cr_expect_eq(s.found, 0, "case %d", i);
        cr_expect_eq(s.other_driver, 0, "case %d", i);
        cr_expect_eq(s.dev.driver_version, 0u, "case %d: the device is cleared", i);
    }
    og_db_close(db);
}

/* The Mesa upgrade: lavapipe keeps driverVersion 1, so only driverInfo and
 * the pipeline cache UUID tell the builds apart. */
Test(db, same_driver_version_other_driver_info_is_another_driver)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    og_device_info mesa22 = build_device(1, MESA_22_INFO, MESA_22_UUID);
    og_device_info mesa24 = build_device(1, MESA_24_INFO, MESA_24_UUID);
    int64_t id22 = build_device_id(db, &mesa22);
    og_record rec = test_record(64, 64, 64, 1, 11.0);
    insert(db, id22, &rec);

    selection s = select_on(db, &mesa24, 64, 64, 64);
    cr_assert_eq(s.found, 1, "another build's record is used");
    cr_expect_eq(s.other_driver, 1, "and flagged");
    cr_expect_str_eq(s.dev.driver_info, MESA_22_INFO);
    cr_expect_str_eq(s.dev.pipeline_cache_uuid, MESA_22_UUID);

    /* Either part of the build alone makes another driver. */
    og_device_info info_only = build_device(1, MESA_24_INFO, MESA_22_UUID);
    og_device_info uuid_only = build_device(1, MESA_22_INFO, MESA_24_UUID);
    og_device_info unknown = build_device(1, "", "");
    cr_expect_eq(select_on(db, &info_only, 64, 64, 64).other_driver, 1);
    cr_expect_eq(select_on(db, &uuid_only, 64, 64, 64).other_driver, 1);
    cr_expect_eq(select_on(db, &unknown, 64, 64, 64).other_driver, 1);

    /* The new build is a device row of its own, and its records come first. */
    int64_t id24 = build_device_id(db, &mesa24);
    cr_assert_neq(id24, id22);
    cr_expect_eq(build_device_id(db, &mesa22), id22, "the same key finds the same row");
    og_record mine = test_record(128, 64, 64, 1, 3.0);
    insert(db, id24, &mine);
    s = select_on(db, &mesa24, 64, 64, 64);
    cr_expect_eq(s.found, 2);
    cr_expect_eq(s.other_driver, 0);
    cr_expect_str_eq(s.dev.driver_info, MESA_24_INFO);
    s = select_on(db, &mesa22, 64, 64, 64);
    cr_expect_eq(s.found, 1);
    cr_expect_eq(s.other_driver, 0);
    cr_expect_eq(s.rec.gflops, 11.0);
    og_db_close(db);
}

Test(db, malformed_pipeline_cache_uuid_is_refused)
{
    char path[512], err[512] = "";
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    static const char *const bad[] = {"32322E332E36616161616161616161FF", "3232", "zz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        og_device_info dev = build_device(1, MESA_22_INFO, bad[i]);
        int64_t id = -1;
        cr_expect_eq(og_db_device(db, &dev, &id, err, sizeof err), OG_ERROR_INVALID_ARGUMENT, "%s",
                     bad[i]);
        cr_expect_eq(id, 0);
        cr_expect_not_null(strstr(err, "pipeline cache UUID"), "%s", err);
    }
    og_db_close(db);
    /* Nor does the schema take one from a hand-edited file. */
    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    cr_expect_neq(sqlite3_exec(conn,
                               "INSERT INTO devices (vendor_id, device_id, driver_id,"
                               " driver_version, name, driver_name, driver_info,"
                               " pipeline_cache_uuid) VALUES (1, 2, 3, 4, 'x', 'y', 'z', 'ABC')",
                               NULL, NULL, NULL),
                  SQLITE_OK);
    sqlite3_close(conn);
}

Test(db, insert_checks_device_and_key)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    og_record rec = test_record(32, 32, 32, 1, 1.0);
    char err[512] = "";
    cr_assert_eq(og_db_insert(db, 999, &rec, err, sizeof err), OG_ERROR_DATABASE,
                 "a record for a device that is not stored was accepted");
    rec.key.dtype = (og_dtype)7;
    cr_assert_eq(og_db_insert(db, device_id(db, 1), &rec, err, sizeof err),
                 OG_ERROR_INVALID_ARGUMENT);

    /* Nothing is stored that a read would refuse: a spread that is
     * negative or not finite, a memory the schema does not name. */
    const double spreads[] = {-1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof spreads / sizeof spreads[0]; i++) {
        rec = test_record(32, 32, 32, 1, 1.0);
        rec.spread = spreads[i];
        cr_expect_eq(og_db_insert(db, device_id(db, 1), &rec, err, sizeof err),
                     OG_ERROR_INVALID_ARGUMENT, "spread %g", spreads[i]);
    }
    const char *memories[] = {"vram", "device-local ", "unknown"};
    for (size_t i = 0; i < sizeof memories / sizeof memories[0]; i++) {
        rec = test_record(32, 32, 32, 1, 1.0);
        snprintf(rec.memory, sizeof rec.memory, "%s", memories[i]);
        cr_expect_eq(og_db_insert(db, device_id(db, 1), &rec, err, sizeof err),
                     OG_ERROR_INVALID_ARGUMENT, "memory '%s'", memories[i]);
        cr_expect_not_null(strstr(err, memories[i]), "message \"%s\"", err);
    }
    /* Every name of the schema, and "" (not known), is stored. */
    const char *known[] = {"", OG_DB_MEMORY_DEVICE_LOCAL, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED,
                           OG_DB_MEMORY_HOST_VISIBLE};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        rec = test_record(32, 32, 32, 1, 1.0);
        snprintf(rec.memory, sizeof rec.memory, "%s", known[i]);
        rec.spread = 0.0;
        cr_expect_eq(og_db_insert(db, device_id(db, 1), &rec, err, sizeof err), OG_OK,
                     "memory '%s': %s", known[i], err);
    }
    og_db_close(db);
}

typedef struct visit {
    int count, stop_after;
    int64_t m[16];
    char device[16][64];
} visit;

static int visit_fn(void *user, const og_record *rec, const char *device)
{
    visit *v = user;
    if (v->count < 16) {
        v->m[v->count] = rec->m;
        snprintf(v->device[v->count], sizeof v->device[0], "%s", device);
    }
    v->count++;
    return v->stop_after != 0 && v->count >= v->stop_after;
}

Test(db, reopen_keeps_records_and_each_visits_in_order)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    static const int64_t ms[] = {700, 3, 50, 9000, 1};
    og_db *db = open_db(path, 1);
    int64_t dev = device_id(db, 1);
    for (int i = 0; i < 3; i++) {
        og_record rec = test_record(ms[i], 16, 16, 1, 1.0 + i);
        insert(db, dev, &rec);
    }
    og_db_close(db);

    db = open_db(path, 1);
    cr_assert_eq(device_id(db, 1), dev);
    for (int i = 3; i < 5; i++) {
        og_record rec = test_record(ms[i], 16, 16, 1, 1.0 + i);
        rec.accepted = i != 4;
        insert(db, dev, &rec);
    }
    og_db_close(db);

    db = open_db(path, 0);
    visit v;
    memset(&v, 0, sizeof v);
    char err[512] = "";
    cr_assert_eq(og_db_each(db, visit_fn, &v, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(v.count, 5, "visited %d records", v.count);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(v.m[i], ms[i], "record %d has m=%lld", i, (long long)v.m[i]);
        cr_assert_str_eq(v.device[i], "llvmpipe (test)");
    }

    memset(&v, 0, sizeof v);
    v.stop_after = 2;
    cr_assert_eq(og_db_each(db, visit_fn, &v, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(v.count, 2, "og_db_each went on after fn returned non-zero");
    og_db_close(db);
}

static int count_fn(void *user, const og_record *rec, const char *device)
{
    (void)device;
    unsigned char *seen = user;
    if (rec->m >= 0 && rec->m < 200)
        seen[rec->m]++;
    return 0;
}

Test(db, two_connections_lose_no_record)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    og_db *a = open_db(path, 1);
    og_db *b = open_db(path, 1);
    int64_t dev_a = device_id(a, 1);
    cr_assert_eq(device_id(b, 1), dev_a);
    for (int i = 0; i < 200; i++) {
        og_record rec = test_record(i, 1, 1, 1, 1.0);
        insert(i % 2 ? b : a, dev_a, &rec);
    }
    og_db_close(a);

    unsigned char seen[200];
    memset(seen, 0, sizeof seen);
    char err[512] = "";
    cr_assert_eq(og_db_each(b, count_fn, seen, err, sizeof err), OG_OK, "%s", err);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(seen[i], 1, "record m=%d seen %d times", i, seen[i]);
    og_db_close(b);
}
Test(db, merge_record_keeps_the_best_of_a_key)
{
    char path[512], err[512] = "";
    tmp_path(path, sizeof path, "t.db");
    og_db *db = open_db(path, 1);
    int64_t dev = device_id(db, 1);
    og_record rejected = test_record(32, 32, 32, 1, 50.0);
    rejected.accepted = 0;
    og_record slow = test_record(32, 32, 32, 1, 10.0);
    og_record fast = test_record(32, 32, 32, 1, 20.0);
    og_record other = test_record(32, 32, 32, 1, 1.0);
    /* The winner's spread and memory are stored with it. */
    fast.spread = 0.375;
    snprintf(fast.memory, sizeof fast.memory, OG_DB_MEMORY_DEVICE_LOCAL);
    slow.spread = 0.5;
    snprintf(slow.memory, sizeof slow.memory, OG_DB_MEMORY_HOST_VISIBLE);
    /* test_record's params name the GFLOP/s: make them one key. */
    snprintf(rejected.params, sizeof rejected.params, "same params");
    snprintf(slow.params, sizeof slow.params, "same params");
    snprintf(fast.params, sizeof fast.params, "same params");
    snprintf(other.params, sizeof other.params, "other params");
    int stored = -1;
    /* Rank: accepted first, then GFLOP/s; a tie keeps what is stored. */
    const struct {
        const og_record *rec;
        int stored;
    } steps[] = {{&rejected, 1}, {&slow, 1}, {&rejected, 0}, {&fast, 1},
                 {&slow, 0},     {&fast, 0}, {&other, 1}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_assert_eq(og_db_merge_record(db, dev, steps[i].rec, &stored, err, sizeof err), OG_OK,
                     "%s", err);
        cr_expect_eq(stored, steps[i].stored, "step %zu", i);
    }
    unsigned char seen[200];
    memset(seen, 0, sizeof seen);
    cr_assert_eq(og_db_each(db, count_fn, seen, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(seen[32], 2, "one record per key (params differ), not %d", seen[32]);
    selection s = select_shape(db, 1, 32, 32, 32, 1);
    cr_expect_eq(s.rec.gflops, 20.0);
    cr_expect_eq(s.rec.spread, 0.375);
    cr_expect_str_eq(s.rec.memory, OG_DB_MEMORY_DEVICE_LOCAL);
    og_db_close(db);

    db = open_db(path, 0);
    cr_expect_eq(og_db_merge_record(db, dev, &fast, &stored, err, sizeof err), OG_ERROR_DATABASE);
    og_db_close(db);
}
