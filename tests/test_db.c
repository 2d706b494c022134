/* Tests of the tuning database (db/, og_db.h) on files in a temporary directory. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "og_tmpdir.h"

#include "og_db.h"

TestSuite(db, .init = make_tmpdir, .fini = remove_tmpdir);

static og_device_info test_device(uint32_t driver_version)
{
    og_device_info dev;
    memset(&dev, 0, sizeof dev);
    dev.vendor_id = 0x10005;
    dev.device_id = 0;
    dev.driver_id = 13; /* VK_DRIVER_ID_MESA_LLVMPIPE */
    dev.driver_version = driver_version;
    snprintf(dev.name, sizeof dev.name, "llvmpipe (test)");
    snprintf(dev.driver_name, sizeof dev.driver_name, "llvmpipe");
    return dev;
}

static og_record_key test_key(void)
{
    og_record_key key;
    memset(&key, 0, sizeof key);
    snprintf(key.op, sizeof key.op, "gemm");
    key.dtype = OG_F16;
    key.mode = OG_MODE_FAST;
    key.trans_a = 0;
    key.trans_b = 1;
    return key;
}

/* A high bit set: the hash must survive SQLite's signed integers. */
#define TEST_HASH UINT64_C(0xfedcba9876543210)

static og_record test_record(int64_t m, int64_t n, int64_t k, int64_t batch, double gflops)
{
    og_record rec;
    memset(&rec, 0, sizeof rec);
    rec.key = test_key();
    rec.m = m;
    rec.n = n;
    rec.k = k;
    rec.batch = batch;
    snprintf(rec.template_name, sizeof rec.template_name, "tile");
    rec.template_hash = TEST_HASH;
    snprintf(rec.params, sizeof rec.params, "{\"tm\":64,\"gflops\":%g}", gflops);
    rec.median_us = 12.5;
    rec.gflops = gflops;
    rec.samples = 9;
    rec.spread = 0.1; /* not a binary fraction: stored and read back bit for bit */
    snprintf(rec.memory, sizeof rec.memory, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED);
    rec.max_error = 1e-6;
    rec.accepted = 1;
    rec.created = 1700000000;
    return rec;
}

static og_db *open_db(const char *path, int writable)
{
    og_db *db = NULL;
    char err[512] = "";
    og_status st = og_db_open(path, writable, &db, err, sizeof err);
    cr_assert_eq(st, OG_OK, "og_db_open(%s): %s", path, err);
    cr_assert_not_null(db);
    return db;
}

static int64_t device_id(og_db *db, uint32_t driver_version)
{
    og_device_info dev = test_device(driver_version);
    int64_t id = 0;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, &dev, &id, err, sizeof err), OG_OK, "%s", err);
    cr_assert_gt(id, 0);
    return id;
}

static void insert(og_db *db, int64_t device, const og_record *rec)
{
    char err[512] = "";
    cr_assert_eq(og_db_insert(db, device, rec, err, sizeof err), OG_OK, "%s", err);
}

/* A new database at path holding one record of shape s x s x s for the
 * test device of driver version 1. */
static void create_with_record(const char *path, int64_t s)
{
    og_db *db = open_db(path, 1);
    og_record rec = test_record(s, s, s, 1, 1.0);
    insert(db, device_id(db, 1), &rec);
    og_db_close(db);
}

typedef struct selection {
    og_record rec;
    og_device_info dev; /* the device row of the record */
    int found, other_driver;
} selection;

static selection select_shape(og_db *db, uint32_t driver_version, int64_t m, int64_t n, int64_t k,
                              int64_t batch)
{
    og_device_info dev = test_device(driver_version);
    og_record_key key = test_key();
    selection s;
    memset(&s, 0, sizeof s);
    s.found = -1;
    s.other_driver = -1;
    char err[512] = "";
    og_status st = og_db_select(db, &dev, &key, "tile", TEST_HASH, m, n, k, batch, &s.rec, &s.dev,
                                &s.found, &s.other_driver, err, sizeof err);
    cr_assert_eq(st, OG_OK, "og_db_select: %s", err);
    return s;
}

/* Opens path expecting failure with status want; returns the message. */
static void expect_open_failure(const char *path, int writable, og_status want, char *err,
                                size_t errlen)
{
    og_db *db = (og_db *)&db; /* must be reset to NULL */
    err[0] = '\0';
    og_status st = og_db_open(path, writable, &db, err, errlen);
    cr_assert_eq(st, want, "og_db_open(%s, %d) = %d (%s), want %d", path, writable, st, err, want);
    cr_assert_null(db);
    cr_assert_eq(strncmp(err, "db: ", 4), 0, "message \"%s\" lacks the db: prefix", err);
    cr_assert_not_null(strstr(err, path), "message \"%s\" does not name the file", err);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Runs SQL on a file directly with SQLite, bypassing og_db. */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);
    cr_assert_eq(rc, SQLITE_OK, "%s: %s", sql, msg != NULL ? msg : "");
    sqlite3_free(msg);
    cr_assert_eq(sqlite3_close(conn), SQLITE_OK);
}

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

/* What lavapipe of Debian 12 reports (driverInfo, pipelineCacheUUID as
 * hex), and what a Mesa upgrade reports with the same driverVersion 1. */
#define MESA_22_INFO "Mesa 22.3.6 (LLVM 15.0.6)"
#define MESA_22_UUID "32322e332e36616161616161616161ff"
#define MESA_24_INFO "Mesa 24.2.8-1~bpo12+1 (LLVM 19.1.4)"
#define MESA_24_UUID "32342e322e38616161616161616161ff"

static og_device_info build_device(uint32_t driver_version, const char *info, const char *uuid)
{
    og_device_info dev = test_device(driver_version);
    snprintf(dev.driver_info, sizeof dev.driver_info, "%s", info);
    snprintf(dev.pipeline_cache_uuid, sizeof dev.pipeline_cache_uuid, "%s", uuid);
    return dev;
}

static int64_t build_device_id(og_db *db, const og_device_info *dev)
{
    int64_t id = 0;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, dev, &id, err, sizeof err), OG_OK, "%s", err);
    cr_assert_gt(id, 0);
    return id;
}

static selection select_on(og_db *db, const og_device_info *dev, int64_t m, int64_t n, int64_t k)
{
    og_record_key key = test_key();
    selection s;
    memset(&s, 0x55, sizeof s);
    char err[512] = "";
    og_status st = og_db_select(db, dev, &key, "tile", TEST_HASH, m, n, k, 1, &s.rec, &s.dev,
                                &s.found, &s.other_driver, err, sizeof err);
    cr_assert_eq(st, OG_OK, "og_db_select: %s", err);
    return s;
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

Test(db, missing_file_read_only_is_not_found)
{
    char path[512], err[512];
    tmp_path(path, sizeof path, "missing.db");
    expect_open_failure(path, 0, OG_ERROR_NOT_FOUND, err, sizeof err);
    cr_assert_neq(access(path, F_OK), 0, "a read-only open must not create the file");
}

Test(db, empty_file_read_only_has_no_schema)
{
    char path[512], err[512];
    tmp_path(path, sizeof path, "empty.db");
    write_file(path, "", 0);
    expect_open_failure(path, 0, OG_ERROR_DATABASE, err, sizeof err);
    cr_assert_not_null(strstr(err, "has no onegpu schema"), "%s", err);
}

Test(db, garbage_files_are_refused)
{
    /* Plain noise, and noise behind a valid SQLite header (a corrupt file),
     * in several sizes; read-only and writable. */
    static const size_t sizes[] = {1, 99, 100, 512, 4096, 65536};
    uint32_t seed = 12345;
    for (int header = 0; header < 2; header++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            unsigned char *bytes = malloc(sizes[i]);
            cr_assert_not_null(bytes);
            for (size_t j = 0; j < sizes[i]; j++) {
                seed = seed * 1103515245u + 12345u;
                bytes[j] = (unsigned char)(seed >> 16);
            }
            if (header && sizes[i] >= 16)
                memcpy(bytes, "SQLite format 3", 16);
            char path[512], err[512];
            snprintf(path, sizeof path, "%s/garbage%d_%zu.db", og_tmpdir, header, sizes[i]);
            write_file(path, bytes, sizes[i]);
            expect_open_failure(path, 0, OG_ERROR_DATABASE, err, sizeof err);
            expect_open_failure(path, 1, OG_ERROR_DATABASE, err, sizeof err);

            /* A refused file is left exactly as it was. */
            FILE *f = fopen(path, "rb");
            cr_assert_not_null(f);
            unsigned char *back = malloc(sizes[i] + 1);
            cr_assert_not_null(back);
            cr_assert_eq(fread(back, 1, sizes[i] + 1, f), sizes[i]);
            cr_assert_eq(memcmp(back, bytes, sizes[i]), 0, "%s was modified", path);
            fclose(f);
            free(back);
            free(bytes);
        }
    }
}

Test(db, newer_schema_version_is_refused)
{
    char path[512], err[512];
    tmp_path(path, sizeof path, "new.db");
    og_db_close(open_db(path, 1));
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", OG_DB_SCHEMA_VERSION + 1);
    raw_exec(path, sql);

    char newer[16], ours[16];
    snprintf(newer, sizeof newer, "%d", OG_DB_SCHEMA_VERSION + 1);
    snprintf(ours, sizeof ours, "%d", OG_DB_SCHEMA_VERSION);
    for (int writable = 0; writable < 2; writable++) {
        expect_open_failure(path, writable, OG_ERROR_DATABASE, err, sizeof err);
        cr_assert_not_null(strstr(err, newer), "%s", err);
        cr_assert_not_null(strstr(err, ours), "%s", err);
    }
}

Test(db, foreign_databases_are_refused)
{
    char path[512], err[512];
    /* Someone else's database: user_version 0 and tables of its own. */
    tmp_path(path, sizeof path, "foreign.db");
    raw_exec(path, "CREATE TABLE notes (body TEXT)");
    expect_open_failure(path, 0, OG_ERROR_DATABASE, err, sizeof err);
    cr_assert_not_null(strstr(err, "has no onegpu schema"), "%s", err);
    expect_open_failure(path, 1, OG_ERROR_DATABASE, err, sizeof err);
    cr_assert_not_null(strstr(err, "has no onegpu schema"), "%s", err);

    /* The right version number but not the tables. */
    tmp_path(path, sizeof path, "versioned.db");
    raw_exec(path, "PRAGMA user_version = 1; CREATE TABLE records (id INTEGER PRIMARY KEY)");
    expect_open_failure(path, 0, OG_ERROR_DATABASE, err, sizeof err);
    cr_assert_not_null(strstr(err, "has no onegpu schema"), "%s", err);
}

Test(db, read_only_cannot_write_or_add_devices)
{
    char path[512];
    tmp_path(path, sizeof path, "ro.db");
    create_with_record(path, 32);

    og_db *db = open_db(path, 0);
    og_record rec = test_record(32, 32, 32, 1, 1.0);
    og_device_info dev = test_device(7);
    int64_t id = -1;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, &dev, &id, err, sizeof err), OG_ERROR_NOT_FOUND);
    cr_assert_eq(id, 0);
    cr_assert_eq(og_db_insert(db, 1, &rec, err, sizeof err), OG_ERROR_DATABASE);
    cr_assert_eq(select_shape(db, 1, 32, 32, 32, 1).found, 1);
    /* Reading one record back (what a resumed tune asks) needs no write access. */
    og_record found_rec;
    int found = 0;
    cr_assert_eq(og_db_find(db, 1, &rec, &found_rec, &found, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(found, 1);
    cr_expect_str_eq(found_rec.params, rec.params);
    og_db_close(db);
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

/* Bytes 18 and 19 of a database file's header: 1 for the rollback journal,
 * 2 for WAL (SQLite's file format, "The Database Header"). */
static int journal_bytes(const char *path)
{
    unsigned char header[20];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fread(header, 1, sizeof header, f), sizeof header);
    fclose(f);
    cr_assert_eq(header[18], header[19]);
    return header[18];
}

static int exists(const char *dir_path, const char *suffix)
{
    char name[600];
    snprintf(name, sizeof name, "%s%s", dir_path, suffix);
    return access(name, F_OK) == 0;
}

/* The rollback journal: readable from directories the reader may not write
 * (installed pre-tuned databases), nothing left beside the file. */
Test(db, rollback_journal_leaves_nothing_beside_the_file)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    create_with_record(path, 64);
    og_db *db = open_db(path, 0);
    cr_assert_eq(select_shape(db, 1, 64, 64, 64, 1).found, 1);
    og_db_close(db);
    cr_expect_eq(journal_bytes(path), 1);
    cr_expect(!exists(path, "-wal") && !exists(path, "-shm") && !exists(path, "-journal"));
}

/* A file in WAL mode (earlier versions) becomes a rollback-journal file at a
 * writable open, except while another connection holds it: then the open
 * neither fails nor waits the busy timeout, and the file stays WAL. */
Test(db, wal_files_are_converted_when_no_one_else_holds_them)
{
    char path[512];
    tmp_path(path, sizeof path, "t.db");
    create_with_record(path, 64);
    raw_exec(path, "PRAGMA journal_mode = WAL");
    cr_assert_eq(journal_bytes(path), 2);

    sqlite3 *holder = NULL;
    cr_assert_eq(sqlite3_open(path, &holder), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(holder, "BEGIN; SELECT count(*) FROM records", NULL, NULL, NULL),
                 SQLITE_OK);
    time_t start = time(NULL);
    og_db *db = open_db(path, 1);
    cr_expect_lt(time(NULL) - start, 3, "the open waited for the other connection");
    og_record rec = test_record(32, 32, 32, 1, 1.0);
    insert(db, device_id(db, 1), &rec);
    og_db_close(db);
    cr_expect_eq(journal_bytes(path), 2);
    cr_assert_eq(sqlite3_exec(holder, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_close(holder), SQLITE_OK);

    db = open_db(path, 1);
    og_db_close(db);
    cr_expect_eq(journal_bytes(path), 1);
    cr_expect(!exists(path, "-wal") && !exists(path, "-shm"));
    db = open_db(path, 0);
    cr_expect_eq(select_shape(db, 1, 64, 64, 64, 1).found, 1);
    cr_expect_eq(select_shape(db, 1, 32, 32, 32, 1).found, 1);
    og_db_close(db);
}

/* A file of schema version 1, as the first release wrote it: the dtype
 * CHECK knows the float types only. */
static const char schema_v1[] =
    "CREATE TABLE devices (id INTEGER PRIMARY KEY, vendor_id INTEGER NOT NULL,"
    " device_id INTEGER NOT NULL, driver_id INTEGER NOT NULL, driver_version INTEGER NOT NULL,"
    " name TEXT NOT NULL, driver_name TEXT NOT NULL,"
    " UNIQUE (vendor_id, device_id, driver_id, driver_version));"
    "CREATE TABLE records (id INTEGER PRIMARY KEY, device INTEGER NOT NULL REFERENCES devices(id),"
    " op TEXT NOT NULL, dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16')),"
    " mode TEXT NOT NULL CHECK (mode IN ('fast', 'deterministic')),"
    " trans_a INTEGER NOT NULL CHECK (trans_a IN (0, 1)),"
    " trans_b INTEGER NOT NULL CHECK (trans_b IN (0, 1)), m INTEGER NOT NULL,"
    " n INTEGER NOT NULL, k INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_hash TEXT NOT NULL CHECK (length(template_hash) = 16), params TEXT NOT NULL,"
    " median_us REAL NOT NULL, gflops REAL NOT NULL, samples INTEGER NOT NULL,"
    " max_error REAL NOT NULL, accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " reason TEXT NOT NULL, created INTEGER NOT NULL);"
    "CREATE INDEX records_select ON records"
    " (device, op, dtype, mode, trans_a, trans_b, template_name, template_hash, accepted);"
    "INSERT INTO devices VALUES (1, 65541, 0, 13, 7, 'llvmpipe (test)', 'llvmpipe');"
    "INSERT INTO records VALUES (5, 1, 'gemm', 'f16', 'fast', 0, 1, 64, 64, 64, 1, 'tile',"
    " 'fedcba9876543210', 'v1 record', 12.5, 3.5, 9, 1e-6, 1, '', 1700000000);"
    "PRAGMA user_version = 1;";

Test(db, version_1_files_are_read_and_upgraded)
{
    char path[512];
    tmp_path(path, sizeof path, "v1.db");
    raw_exec(path, schema_v1);
    /* Read-only: read as it is, nothing changes. */
    og_db *db = open_db(path, 0);
    selection s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.params, "v1 record");
    og_db_close(db);

    /* Writable: upgraded to this version in place, the record kept with its id. */
    db = open_db(path, 1);
    s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.params, "v1 record");
    og_record rec = test_record(1, 768, 768, 1, 0.5);
    snprintf(rec.key.op, sizeof rec.key.op, "int8gemm");
    rec.key.dtype = OG_INT8;
    insert(db, device_id(db, 7), &rec);
    og_db_close(db);
    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    cr_assert_eq(sqlite3_prepare_v2(conn,
                                    "SELECT (SELECT user_version FROM pragma_user_version),"
                                    " (SELECT count(*) FROM records WHERE id = 5),"
                                    " (SELECT count(*) FROM records WHERE dtype = 'i8')",
                                    -1, &stmt, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
    cr_expect_eq(sqlite3_column_int(stmt, 0), OG_DB_SCHEMA_VERSION);
    cr_expect_eq(sqlite3_column_int(stmt, 1), 1, "the v1 record keeps its id");
    cr_expect_eq(sqlite3_column_int(stmt, 2), 1, "the int8gemm record is stored");
    sqlite3_finalize(stmt);
    /* The CHECK still refuses a type nobody reads. */
    cr_expect_neq(
        sqlite3_exec(conn, "UPDATE records SET dtype = 'x8' WHERE id = 5", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(conn);
}

/* A file of schema version 2: the 8-bit types, no source column. */
static const char schema_v2[] =
    "CREATE TABLE devices (id INTEGER PRIMARY KEY, vendor_id INTEGER NOT NULL,"
    " device_id INTEGER NOT NULL, driver_id INTEGER NOT NULL, driver_version INTEGER NOT NULL,"
    " name TEXT NOT NULL, driver_name TEXT NOT NULL,"
    " UNIQUE (vendor_id, device_id, driver_id, driver_version));"
    "CREATE TABLE records (id INTEGER PRIMARY KEY, device INTEGER NOT NULL REFERENCES devices(id),"
    " op TEXT NOT NULL,"
    " dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'i8', 'u8')),"
    " mode TEXT NOT NULL CHECK (mode IN ('fast', 'deterministic')),"
    " trans_a INTEGER NOT NULL CHECK (trans_a IN (0, 1)),"
    " trans_b INTEGER NOT NULL CHECK (trans_b IN (0, 1)), m INTEGER NOT NULL,"
    " n INTEGER NOT NULL, k INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_hash TEXT NOT NULL CHECK (length(template_hash) = 16), params TEXT NOT NULL,"
    " median_us REAL NOT NULL, gflops REAL NOT NULL, samples INTEGER NOT NULL,"
    " max_error REAL NOT NULL, accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " reason TEXT NOT NULL, created INTEGER NOT NULL);"
    "CREATE INDEX records_select ON records"
    " (device, op, dtype, mode, trans_a, trans_b, template_name, template_hash, accepted);"
    "INSERT INTO devices VALUES (1, 65541, 0, 13, 7, 'llvmpipe (test)', 'llvmpipe');"
    "INSERT INTO records VALUES (5, 1, 'gemm', 'f16', 'fast', 0, 1, 64, 64, 64, 1, 'tile',"
    " 'fedcba9876543210', 'v2 record', 12.5, 3.5, 9, 1e-6, 1, '', 1700000000);"
    "PRAGMA user_version = 2;";

static int first_record(void *user, const og_record *rec, const char *device)
{
    (void)device;
    *(og_record *)user = *rec;
    return 1;
}

Test(db, version_2_files_are_read_and_upgraded_with_an_empty_source)
{
    char path[512], err[512] = "";
    tmp_path(path, sizeof path, "v2.db");
    raw_exec(path, schema_v2);
    /* Read-only: read as it is (no source column: ""), nothing changes. */
    og_db *db = open_db(path, 0);
    selection s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.params, "v2 record");
    cr_expect_str_eq(s.rec.source, "");
    og_record rec;
    memset(&rec, 0x55, sizeof rec);
    cr_assert_eq(og_db_each(db, first_record, &rec, err, sizeof err), OG_OK, "%s", err);
    cr_expect_str_eq(rec.source, "");
    og_db_close(db);

    /* Writable: upgraded in place, the record kept with its id and source "". */
    db = open_db(path, 1);
    s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.source, "");
    rec = test_record(64, 64, 64, 1, 9.0);
    snprintf(rec.source, sizeof rec.source, "elsewhere.db");
    insert(db, device_id(db, 7), &rec);
    s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.rec.gflops, 9.0);
    cr_expect_str_eq(s.rec.source, "elsewhere.db");
    og_db_close(db);

    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    cr_assert_eq(sqlite3_prepare_v2(conn,
                                    "SELECT (SELECT user_version FROM pragma_user_version),"
                                    " (SELECT source FROM records WHERE id = 5),"
                                    " (SELECT count(*) FROM records)",
                                    -1, &stmt, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
    cr_expect_eq(sqlite3_column_int(stmt, 0), OG_DB_SCHEMA_VERSION);
    cr_expect_str_eq((const char *)sqlite3_column_text(stmt, 1), "");
    cr_expect_eq(sqlite3_column_int(stmt, 2), 2);
    sqlite3_finalize(stmt);
    sqlite3_close(conn);
}

/* A file of schema version 3: the source column, no spread or memory. */
static const char schema_v3[] =
    "CREATE TABLE devices (id INTEGER PRIMARY KEY, vendor_id INTEGER NOT NULL,"
    " device_id INTEGER NOT NULL, driver_id INTEGER NOT NULL, driver_version INTEGER NOT NULL,"
    " name TEXT NOT NULL, driver_name TEXT NOT NULL,"
    " UNIQUE (vendor_id, device_id, driver_id, driver_version));"
    "CREATE TABLE records (id INTEGER PRIMARY KEY, device INTEGER NOT NULL REFERENCES devices(id),"
    " op TEXT NOT NULL,"
    " dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'i8', 'u8')),"
    " mode TEXT NOT NULL CHECK (mode IN ('fast', 'deterministic')),"
    " trans_a INTEGER NOT NULL CHECK (trans_a IN (0, 1)),"
    " trans_b INTEGER NOT NULL CHECK (trans_b IN (0, 1)), m INTEGER NOT NULL,"
    " n INTEGER NOT NULL, k INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_hash TEXT NOT NULL CHECK (length(template_hash) = 16), params TEXT NOT NULL,"
    " median_us REAL NOT NULL, gflops REAL NOT NULL, samples INTEGER NOT NULL,"
    " max_error REAL NOT NULL, accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " reason TEXT NOT NULL, created INTEGER NOT NULL, source TEXT NOT NULL);"
    "CREATE INDEX records_select ON records"
    " (device, op, dtype, mode, trans_a, trans_b, template_name, template_hash, accepted);"
    "INSERT INTO devices VALUES (1, 65541, 0, 13, 7, 'llvmpipe (test)', 'llvmpipe');"
    "INSERT INTO records VALUES (5, 1, 'gemm', 'f16', 'fast', 0, 1, 64, 64, 64, 1, 'tile',"
    " 'fedcba9876543210', 'v3 record', 12.5, 3.5, 9, 1e-6, 1, '', 1700000000, 'vendor.db');"
    "INSERT INTO records VALUES (6, 1, 'gemm', 'f16', 'fast', 0, 1, 64, 64, 64, 1, 'tile',"
    " 'fedcba9876543210', 'v3 rejected', 0, 0, 0, 0.5, 0, 'wrong result', 1700000001, '');"
    "PRAGMA user_version = 3;";

static int walk_first(void *user, const og_device_info *dev, const og_record *rec)
{
    (void)dev;
    if (rec == NULL)
        return 0;
    *(og_record *)user = *rec;
    return 1;
}

/* Every read path of db gives the v3 record (id 5) spread 0 and memory "". */
static void expect_v3_record(og_db *db)
{
    char err[512] = "";
    selection s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.params, "v3 record");
    cr_expect_str_eq(s.rec.source, "vendor.db");
    cr_expect_eq(s.rec.spread, 0.0);
    cr_expect_str_eq(s.rec.memory, "");
    og_record rec;
    memset(&rec, 0x55, sizeof rec);
    cr_assert_eq(og_db_each(db, first_record, &rec, err, sizeof err), OG_OK, "%s", err);
    cr_expect_str_eq(rec.params, "v3 record");
    cr_expect_eq(rec.spread, 0.0);
    cr_expect_str_eq(rec.memory, "");
    memset(&rec, 0x55, sizeof rec);
    cr_assert_eq(og_db_walk(db, walk_first, &rec, err, sizeof err), OG_OK, "%s", err);
    cr_expect_str_eq(rec.source, "vendor.db");
    cr_expect_eq(rec.spread, 0.0);
    cr_expect_str_eq(rec.memory, "");
    og_record key = s.rec;
    int found = 0;
    memset(&rec, 0x55, sizeof rec);
    cr_assert_eq(og_db_find(db, 1, &key, &rec, &found, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(found, 1);
    cr_expect_eq(rec.spread, 0.0);
    cr_expect_str_eq(rec.memory, "");
}

Test(db, version_3_files_are_read_and_upgraded_with_spread_0_and_no_memory)
{
    char path[512], err[512] = "";
    tmp_path(path, sizeof path, "v3.db");
    raw_exec(path, schema_v3);
    /* Read-only: read as it is, nothing changes. */
    og_db *db = open_db(path, 0);
    expect_v3_record(db);
    og_db_close(db);

    /* Writable: upgraded in place, both records kept with their ids and sources. */
    db = open_db(path, 1);
    expect_v3_record(db);
    og_record rec = test_record(64, 64, 64, 1, 9.0);
    rec.spread = 0.25;
    snprintf(rec.memory, sizeof rec.memory, OG_DB_MEMORY_HOST_VISIBLE);
    insert(db, device_id(db, 7), &rec);
    selection s = select_shape(db, 7, 64, 64, 64, 1);
    cr_expect_eq(s.rec.gflops, 9.0);
    cr_expect_eq(s.rec.spread, 0.25);
    cr_expect_str_eq(s.rec.memory, OG_DB_MEMORY_HOST_VISIBLE);
    og_db_close(db);

    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    cr_assert_eq(sqlite3_prepare_v2(conn,
                                    "SELECT (SELECT user_version FROM pragma_user_version),"
                                    " (SELECT source || '|' || spread || '|' || memory"
                                    "  FROM records WHERE id = 5),"
                                    " (SELECT reason || '|' || spread || '|' || memory"
                                    "  FROM records WHERE id = 6),"
                                    " (SELECT count(*) FROM records)",
                                    -1, &stmt, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
    cr_expect_eq(sqlite3_column_int(stmt, 0), OG_DB_SCHEMA_VERSION);
    cr_expect_str_eq((const char *)sqlite3_column_text(stmt, 1), "vendor.db|0.0|");
    cr_expect_str_eq((const char *)sqlite3_column_text(stmt, 2), "wrong result|0.0|");
    cr_expect_eq(sqlite3_column_int(stmt, 3), 3);
    sqlite3_finalize(stmt);
    /* The CHECK refuses a memory nobody reads; the sqlite3 shell can still
     * run a record of a version 3 dump (spread and memory by default). */
    cr_expect_neq(
        sqlite3_exec(conn, "UPDATE records SET memory = 'vram' WHERE id = 5", NULL, NULL, NULL),
        SQLITE_OK);
    cr_expect_eq(sqlite3_exec(conn,
                              "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m,"
                              " n, k, batch, template_name, template_hash, params, median_us,"
                              " gflops, samples, max_error, accepted, reason, created, source)"
                              " VALUES (1, 'gemm', 'f16', 'fast', 0, 1, 8, 8, 8, 1, 'tile',"
                              " 'fedcba9876543210', 'shell', 1, 1, 3, 0, 1, '', 1700000000, '')",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    /* A hand-edited spread that is negative is refused when read. */
    cr_expect_eq(
        sqlite3_exec(conn, "UPDATE records SET spread = -1 WHERE id = 5", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(conn);
    db = open_db(path, 0);
    og_record first;
    cr_expect_eq(og_db_each(db, first_record, &first, err, sizeof err), OG_ERROR_DATABASE);
    cr_expect_not_null(strstr(err, "spread"), "message \"%s\"", err);
    og_db_close(db);
}

/* A file of schema version 4: spread and memory, devices without driver
 * info or pipeline cache UUID (the key of four numbers). */
static const char schema_v4[] =
    "CREATE TABLE devices (id INTEGER PRIMARY KEY, vendor_id INTEGER NOT NULL,"
    " device_id INTEGER NOT NULL, driver_id INTEGER NOT NULL, driver_version INTEGER NOT NULL,"
    " name TEXT NOT NULL, driver_name TEXT NOT NULL,"
    " UNIQUE (vendor_id, device_id, driver_id, driver_version));"
    "CREATE TABLE records (id INTEGER PRIMARY KEY, device INTEGER NOT NULL REFERENCES devices(id),"
    " op TEXT NOT NULL,"
    " dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'i8', 'u8')),"
    " mode TEXT NOT NULL CHECK (mode IN ('fast', 'deterministic')),"
    " trans_a INTEGER NOT NULL CHECK (trans_a IN (0, 1)),"
    " trans_b INTEGER NOT NULL CHECK (trans_b IN (0, 1)), m INTEGER NOT NULL,"
    " n INTEGER NOT NULL, k INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_hash TEXT NOT NULL CHECK (length(template_hash) = 16), params TEXT NOT NULL,"
    " median_us REAL NOT NULL, gflops REAL NOT NULL, samples INTEGER NOT NULL,"
    " max_error REAL NOT NULL, accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"
    " reason TEXT NOT NULL, created INTEGER NOT NULL, source TEXT NOT NULL,"
    " spread REAL NOT NULL DEFAULT 0, memory TEXT NOT NULL DEFAULT '' CHECK (memory IN ('',"
    " 'device-local', 'device-local-mapped', 'host-visible')));"
    "CREATE INDEX records_select ON records"
    " (device, op, dtype, mode, trans_a, trans_b, template_name, template_hash, accepted);"
    "INSERT INTO devices VALUES (3, 65541, 0, 13, 1, 'llvmpipe (test)',"
    " 'llvmpipe Mesa 22.3.6 (LLVM 15.0.6)');"
    "INSERT INTO records VALUES (5, 3, 'gemm', 'f16', 'fast', 0, 1, 64, 64, 64, 1, 'tile',"
    " 'fedcba9876543210', 'v4 record', 12.5, 3.5, 9, 1e-6, 1, '', 1700000000, '', 0.5,"
    " 'device-local');"
    "PRAGMA user_version = 4;";

static int walk_device(void *user, const og_device_info *dev, const og_record *rec)
{
    (void)rec;
    *(og_device_info *)user = *dev;
    return 1;
}

/* The v4 file's device reads with unknown driver info and UUID on every
 * path: a build that knows its own is another driver, one that knows
 * neither is the same. */
static void expect_v4_device(og_db *db)
{
    char err[512] = "";
    og_device_info mesa22 = build_device(1, MESA_22_INFO, MESA_22_UUID);
    selection s = select_on(db, &mesa22, 64, 64, 64);
    cr_expect_eq(s.found, 1);
    cr_expect_str_eq(s.rec.params, "v4 record");
    cr_expect_eq(s.other_driver, 1);
    cr_expect_str_eq(s.dev.driver_info, "");
    cr_expect_str_eq(s.dev.pipeline_cache_uuid, "");
    og_device_info unknown = build_device(1, "", "");
    cr_expect_eq(select_on(db, &unknown, 64, 64, 64).other_driver, 0);
    og_device_info dev;
    memset(&dev, 0x55, sizeof dev);
    cr_assert_eq(og_db_walk(db, walk_device, &dev, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(dev.driver_version, 1u);
    cr_expect_str_eq(dev.driver_info, "");
    cr_expect_str_eq(dev.pipeline_cache_uuid, "");
    cr_expect_str_eq(dev.driver_name, "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)");
}

Test(db, version_4_files_are_read_and_upgraded_with_unknown_driver_builds)
{
    char path[512], err[512] = "";
    tmp_path(path, sizeof path, "v4.db");
    raw_exec(path, schema_v4);
    /* Read-only: read as it is, nothing changes; the device of four numbers
     * is found only as the build of unknown info and UUID. */
    og_db *db = open_db(path, 0);
    expect_v4_device(db);
    og_device_info unknown = build_device(1, "", ""),
                   mesa22 = build_device(1, MESA_22_INFO, MESA_22_UUID);
    int64_t id = -1;
    cr_expect_eq(og_db_device(db, &unknown, &id, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(id, 3);
    cr_expect_eq(og_db_device(db, &mesa22, &id, err, sizeof err), OG_ERROR_NOT_FOUND);
    og_db_close(db);

    /* Writable: upgraded in place, the device and the record keep their ids,
     * and the build that knows its info and UUID gets a row of its own. */
    db = open_db(path, 1);
    expect_v4_device(db);
    cr_expect_eq(build_device_id(db, &unknown), 3);
    int64_t id22 = build_device_id(db, &mesa22);
    cr_expect_neq(id22, 3);
    og_record rec = test_record(64, 64, 64, 1, 9.0);
    insert(db, id22, &rec);
    selection s = select_on(db, &mesa22, 64, 64, 64);
    cr_expect_eq(s.other_driver, 0);
    cr_expect_eq(s.rec.gflops, 9.0);
    og_db_close(db);

    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    cr_assert_eq(sqlite3_prepare_v2(conn,
                                    "SELECT (SELECT user_version FROM pragma_user_version),"
                                    " (SELECT device || '|' || params || '|' || memory"
                                    "  FROM records WHERE id = 5),"
                                    " (SELECT count(*) FROM devices WHERE driver_info = ''"
                                    "  AND pipeline_cache_uuid = '' AND id = 3)",
                                    -1, &stmt, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
    cr_expect_eq(sqlite3_column_int(stmt, 0), OG_DB_SCHEMA_VERSION);
    cr_expect_str_eq((const char *)sqlite3_column_text(stmt, 1), "3|v4 record|device-local");
    cr_expect_eq(sqlite3_column_int(stmt, 2), 1);
    sqlite3_finalize(stmt);
    /* The records still refer to the devices: a record of no device is refused. */
    cr_expect_eq(sqlite3_exec(conn, "PRAGMA foreign_keys = ON", NULL, NULL, NULL), SQLITE_OK);
    cr_expect_neq(
        sqlite3_exec(conn, "UPDATE records SET device = 99 WHERE id = 5", NULL, NULL, NULL),
        SQLITE_OK);
    /* The sqlite3 shell can still run a device of a version 4 dump (driver
     * info and UUID by default). */
    cr_expect_eq(sqlite3_exec(conn,
                              "INSERT INTO devices (vendor_id, device_id, driver_id,"
                              " driver_version, name, driver_name) VALUES (1, 2, 3, 4, 'x', 'y')",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(conn));
    sqlite3_close(conn);
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
