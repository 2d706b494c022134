/* The tuning database's files (db/, og_db.h) in a temporary directory:
 * missing, empty, garbage, newer and foreign files refused, read-only
 * connections, the rollback journal (WAL files converted), and the files of
 * schema versions 1 to 4 read and upgraded. */
#include "og_db_case.h"

TestSuite(db, .init = make_tmpdir, .fini = remove_tmpdir);

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
