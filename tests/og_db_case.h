/* The records, devices and files of the tuning database's tests
 * (test_db_records.c, test_db_files.c): a test device and record, a
 * database opened, written and selected from, and the driver builds of
 * Debian 12's lavapipe and a Mesa upgrade. */
#ifndef OG_DB_CASE_H
#define OG_DB_CASE_H

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

static inline og_device_info test_device(uint32_t driver_version)
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

static inline og_record_key test_key(void)
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

static inline og_record test_record(int64_t m, int64_t n, int64_t k, int64_t batch, double gflops)
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

static inline og_db *open_db(const char *path, int writable)
{
    og_db *db = NULL;
    char err[512] = "";
    og_status st = og_db_open(path, writable, &db, err, sizeof err);
    cr_assert_eq(st, OG_OK, "og_db_open(%s): %s", path, err);
    cr_assert_not_null(db);
    return db;
}

static inline int64_t device_id(og_db *db, uint32_t driver_version)
{
    og_device_info dev = test_device(driver_version);
    int64_t id = 0;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, &dev, &id, err, sizeof err), OG_OK, "%s", err);
    cr_assert_gt(id, 0);
    return id;
}

static inline void insert(og_db *db, int64_t device, const og_record *rec)
{
    char err[512] = "";
    cr_assert_eq(og_db_insert(db, device, rec, err, sizeof err), OG_OK, "%s", err);
}

/* A new database at path holding one record of shape s x s x s for the
 * test device of driver version 1. */
static inline void create_with_record(const char *path, int64_t s)
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

static inline selection select_shape(og_db *db, uint32_t driver_version, int64_t m, int64_t n, int64_t k,
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
static inline void expect_open_failure(const char *path, int writable, og_status want, char *err,
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

static inline void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* Runs SQL on a file directly with SQLite, bypassing og_db. */
static inline void raw_exec(const char *path, const char *sql)
{
    sqlite3 *conn = NULL;
    cr_assert_eq(sqlite3_open(path, &conn), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);
    cr_assert_eq(rc, SQLITE_OK, "%s: %s", sql, msg != NULL ? msg : "");
    sqlite3_free(msg);
    cr_assert_eq(sqlite3_close(conn), SQLITE_OK);
}

/* What lavapipe of Debian 12 reports (driverInfo, pipelineCacheUUID as
 * hex), and what a Mesa upgrade reports with the same driverVersion 1. */
#define MESA_22_INFO "Mesa 22.3.6 (LLVM 15.0.6)"
#define MESA_22_UUID "32322e332e36616161616161616161ff"
#define MESA_24_INFO "Mesa 24.2.8-1~bpo12+1 (LLVM 19.1.4)"
#define MESA_24_UUID "32342e322e38616161616161616161ff"

static inline og_device_info build_device(uint32_t driver_version, const char *info, const char *uuid)
{
    og_device_info dev = test_device(driver_version);
    snprintf(dev.driver_info, sizeof dev.driver_info, "%s", info);
    snprintf(dev.pipeline_cache_uuid, sizeof dev.pipeline_cache_uuid, "%s", uuid);
    return dev;
}

static inline int64_t build_device_id(og_db *db, const og_device_info *dev)
{
    int64_t id = 0;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, dev, &id, err, sizeof err), OG_OK, "%s", err);
    cr_assert_gt(id, 0);
    return id;
}

static inline selection select_on(og_db *db, const og_device_info *dev, int64_t m, int64_t n, int64_t k)
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

#endif /* OG_DB_CASE_H */
