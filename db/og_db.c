/*
 * The tuning database (og_db.h): an SQLite file of devices and records.
 *
 * Every function prepares its statements, runs them and finalizes them
 * before returning, on success and on every error path; nothing is cached
 * on the connection but the connection itself. Messages start with "db: "
 * and name the file.
 *
 * A database may come from elsewhere (a vendor's pre-tuned file, a user's
 * copy), so it is treated as untrusted data: opening validates the schema
 * version and the tables, SQLite's defensive mode and untrusted-schema mode
 * are on, and every value read back is checked before it lands in an
 * og_record.
 */
#include "og_db.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#define OG_DB_STR_(x) #x
#define OG_DB_STR(x) OG_DB_STR_(x)

/* Milliseconds a connection waits for another one's lock. */
#define OG_DB_BUSY_TIMEOUT_MS 5000

struct og_db {
    sqlite3 *conn;
    int writable;
    int version; /* the file's schema version (PRAGMA user_version) */
    char path[]; /* as given to og_db_open, for messages */
};

/* Created in one transaction together with PRAGMA user_version. The CHECKs
 * keep hand-edited or merged files (the .sql dumps in db/pretuned) in the shape this
 * code reads back. template_hash is TEXT because SQLite integers are signed
 * 64-bit and the hash is an unsigned 64-bit value. Version 2 added the
 * 8-bit input types ('i8', 'u8': op "int8gemm") to the dtype CHECK,
 * version 3 the source column (provenance, ogtune merge), version 4 the
 * spread and memory columns (how the timed calls spread, and the memory the
 * operands lived in; their defaults let the sqlite3 shell run the dumps of
 * version 3, which lack them), version 5 the driver info and pipeline cache
 * UUID of a device, part of its key (their defaults, unknown, let the shell
 * run the dumps of version 4). */
#define OG_DB_RECORDS_TABLE(name, devices)                                                         \
    "CREATE TABLE " name " ("                                                                      \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " device INTEGER NOT NULL REFERENCES " devices "(id),"                                         \
    " op TEXT NOT NULL,"                                                                           \
    " dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'i8', 'u8')),"                    \
    " mode TEXT NOT NULL CHECK (mode IN ('fast', 'deterministic')),"                               \
    " trans_a INTEGER NOT NULL CHECK (trans_a IN (0, 1)),"                                         \
    " trans_b INTEGER NOT NULL CHECK (trans_b IN (0, 1)),"                                         \
    " m INTEGER NOT NULL,"                                                                         \
    " n INTEGER NOT NULL,"                                                                         \
    " k INTEGER NOT NULL,"                                                                         \
    " batch INTEGER NOT NULL,"                                                                     \
    " template_name TEXT NOT NULL,"                                                                \
    " template_hash TEXT NOT NULL CHECK (length(template_hash) = 16),"                             \
    " params TEXT NOT NULL,"                                                                       \
    " median_us REAL NOT NULL,"                                                                    \
    " gflops REAL NOT NULL,"                                                                       \
    " samples INTEGER NOT NULL,"                                                                   \
    " max_error REAL NOT NULL,"                                                                    \
    " accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),"                                       \
    " reason TEXT NOT NULL,"                                                                       \
    " created INTEGER NOT NULL,"                                                                   \
    " source TEXT NOT NULL,"                                                                       \
    " spread REAL NOT NULL DEFAULT 0,"                                                             \
    " memory TEXT NOT NULL DEFAULT '' CHECK (memory IN ('', '" OG_DB_MEMORY_DEVICE_LOCAL           \
    "', '" OG_DB_MEMORY_DEVICE_LOCAL_MAPPED "', '" OG_DB_MEMORY_HOST_VISIBLE "')));"
#define OG_DB_RECORDS_INDEX                                                                        \
    "CREATE INDEX records_select ON records"                                                       \
    " (device, op, dtype, mode, trans_a, trans_b, template_name, template_hash, accepted);"
#define OG_DB_SET_VERSION "PRAGMA user_version = " OG_DB_STR(OG_DB_SCHEMA_VERSION) ";"

#define OG_DB_DEVICES_TABLE(name)                                                                  \
    "CREATE TABLE " name " ("                                                                      \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " vendor_id INTEGER NOT NULL,"                                                                 \
    " device_id INTEGER NOT NULL,"                                                                 \
    " driver_id INTEGER NOT NULL,"                                                                 \
    " driver_version INTEGER NOT NULL,"                                                            \
    " name TEXT NOT NULL,"                                                                         \
    " driver_name TEXT NOT NULL,"                                                                  \
    " driver_info TEXT NOT NULL DEFAULT '',"                                                       \
    " pipeline_cache_uuid TEXT NOT NULL DEFAULT '' CHECK (pipeline_cache_uuid = ''"                \
    " OR (length(pipeline_cache_uuid) = 32 AND pipeline_cache_uuid NOT GLOB '*[^0-9a-f]*')),"      \
    " UNIQUE (vendor_id, device_id, driver_id, driver_version, driver_info,"                       \
    " pipeline_cache_uuid));"

static const char og_db_schema_sql[] = OG_DB_DEVICES_TABLE("devices")
    OG_DB_RECORDS_TABLE("records", "devices") OG_DB_RECORDS_INDEX OG_DB_SET_VERSION;

/* Version 1 to 4 -> 5: SQLite cannot change a CHECK in place (1 -> 2), add
 * a column with one (3 -> 4) nor change a UNIQUE (4 -> 5), so both tables
 * move to tables of this version: the same columns in the same order and
 * the same ids, followed by the values of the columns the file lacks: for
 * the records (added) source '' (measured into this file), spread 0 and
 * memory '' (not known), for the devices driver info and pipeline cache
 * UUID '' (not known). The records table is dropped first and the new one
 * refers to the new devices table, so no foreign key is ever broken; the
 * rename makes that reference "devices". */
#define OG_DB_UPGRADE_DEVICES                                                                      \
    OG_DB_DEVICES_TABLE("devices_v5") "INSERT INTO devices_v5 SELECT *, '', '' FROM devices;"
#define OG_DB_UPGRADE_RECORDS OG_DB_RECORDS_TABLE("records_v5", "devices_v5")
#define OG_DB_UPGRADE_SQL(added)                                                                   \
    OG_DB_UPGRADE_DEVICES OG_DB_UPGRADE_RECORDS                                                    \
        "INSERT INTO records_v5 SELECT *" added " FROM records;"                                   \
        "DROP TABLE records;"                                                                      \
        "DROP TABLE devices;"                                                                      \
        "ALTER TABLE devices_v5 RENAME TO devices;"                                                \
        "ALTER TABLE records_v5 RENAME TO records;" OG_DB_RECORDS_INDEX OG_DB_SET_VERSION
static const char og_db_upgrade_v2_sql[] = OG_DB_UPGRADE_SQL(", '', 0.0, ''");
static const char og_db_upgrade_v3_sql[] = OG_DB_UPGRADE_SQL(", 0.0, ''");
static const char og_db_upgrade_v4_sql[] = OG_DB_UPGRADE_SQL("");

/* The record columns in the order og_db_read_record expects, for a query
 * that names the records table r: these, then the source, spread and memory
 * columns. A query is a macro of those three and of the devices table d's
 * driver_info and pipeline_cache_uuid (OG_DB_SQL): the columns themselves,
 * or the values an older file stands for where it has no such column ('' for
 * source before version 3, 0.0 and '' for spread and memory before version
 * 4, '' and '' for driver info and UUID before version 5). */
#define OG_DB_RECORD_COLUMNS                                                                       \
    "r.op, r.dtype, r.mode, r.trans_a, r.trans_b, r.m, r.n, r.k, r.batch, r.template_name,"        \
    " r.template_hash, r.params, r.median_us, r.gflops, r.samples, r.max_error, r.accepted,"       \
    " r.reason, r.created, "
#define OG_DB_RECORD_NCOLUMNS 22

/* The text of a query for db's version. */
#define OG_DB_SQL(db, query)                                                                       \
    ((db)->version >= 5                                                                            \
         ? query("r.source, r.spread, r.memory", "d.driver_info, d.pipeline_cache_uuid")           \
     : (db)->version >= 4 ? query("r.source, r.spread, r.memory", "'', ''")                        \
     : (db)->version >= 3 ? query("r.source, 0.0, ''", "'', ''")                                   \
                          : query("'', 0.0, ''", "'', ''"))

/* The device columns in the order og_db_read_device expects, for a query
 * that names the devices table d: these, then driver_info and
 * pipeline_cache_uuid (OG_DB_SQL's second tail). */
#define OG_DB_DEVICE_COLUMNS                                                                       \
    "d.vendor_id, d.device_id, d.driver_id, d.driver_version, d.name, d.driver_name, "
#define OG_DB_DEVICE_NCOLUMNS 8

static const char *const og_db_dtype_names[] = {
    [OG_F32] = "f32", [OG_F16] = "f16", [OG_BF16] = "bf16", [OG_INT8] = "i8", [OG_UINT8] = "u8"};
static const char *const og_db_mode_names[] = {
    [OG_MODE_FAST] = "fast", [OG_MODE_DETERMINISTIC] = "deterministic"};

/* Formats "db: <path>: <message>" into err (which may be NULL) and returns st. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static og_status
og_db_fail(const char *path, og_status st, char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return st;
    int used = snprintf(err, errlen, "db: %s: ", path);
    if (used < 0 || (size_t)used >= errlen)
        return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
    va_end(ap);
    return st;
}

/* Reports a failed SQLite call on conn: what we were doing and SQLite's reason. */
/* SQLite reports some corrupt files as out of memory (a size read from the
 * file asks for more than SQLite allocates; found by fuzz/fuzz_db.c on
 * open and on reading records), and the queries here need little memory:
 * SQLITE_NOMEM is a database error, said to be most likely a corrupt file. */
static og_status og_db_fail_sqlite(const char *path, sqlite3 *conn, int rc, const char *what,
                                   char *err, size_t errlen)
{
    int nomem = (rc & 0xff) == SQLITE_NOMEM;
    return og_db_fail(path, OG_ERROR_DATABASE, err, errlen, "%s: %s%s", what,
                      conn != NULL ? sqlite3_errmsg(conn) : sqlite3_errstr(rc),
                      nomem ? " (a corrupt file, most likely)" : "");
}

/* Copies a possibly NULL column text into a fixed array, truncating. */
static void og_db_copy_text(char *dst, size_t size, const unsigned char *src)
{
    snprintf(dst, size, "%s", src != NULL ? (const char *)src : "");
}

/* Binds a fixed-size char array that the caller may have filled without a
 * terminating NUL. */
static int og_db_bind_array(sqlite3_stmt *stmt, int index, const char *s, size_t size)
{
    return sqlite3_bind_text(stmt, index, s, (int)strnlen(s, size), SQLITE_TRANSIENT);
}

static void og_db_format_hash(char out[17], uint64_t hash)
{
    snprintf(out, 17, "%016" PRIx64, hash);
}

/* Parses exactly 16 lowercase hex digits, the only form og_db_format_hash writes. */
static int og_db_parse_hash(const unsigned char *s, uint64_t *out)
{
    if (s == NULL || strlen((const char *)s) != 16)
        return -1;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        unsigned c = s[i];
        unsigned digit;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else
            return -1;
        v = v << 4 | digit;
    }
    *out = v;
    return 0;
}

int og_db_uuid_known(const char *s)
{
    if (s == NULL)
        return 0;
    size_t len = strlen(s);
    if (len != 0 && len != 32)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int og_db_same_driver(const og_device_info *a, const og_device_info *b)
{
    if (a->vendor_id != b->vendor_id || a->device_id != b->device_id ||
        a->driver_id != b->driver_id || a->driver_version != b->driver_version)
        return 0;
    size_t uuid_size = sizeof a->pipeline_cache_uuid;
    return strncmp(a->driver_info, b->driver_info, sizeof a->driver_info) == 0 &&
           strncmp(a->pipeline_cache_uuid, b->pipeline_cache_uuid, uuid_size) == 0;
}

int og_db_memory_known(const char *s)
{
    return s != NULL && (s[0] == '\0' || strcmp(s, OG_DB_MEMORY_DEVICE_LOCAL) == 0 ||
                         strcmp(s, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED) == 0 ||
                         strcmp(s, OG_DB_MEMORY_HOST_VISIBLE) == 0);
}

static int og_db_lookup_name(const char *const *names, int count, const unsigned char *s)
{
    if (s == NULL)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], (const char *)s) == 0)
            return i;
    return -1;
}

/* Fills rec from the current row of a statement whose first columns are
 * OG_DB_RECORD_COLUMNS. Fails on values this code never writes, which only
 * a foreign or damaged file can hold. */
static og_status og_db_read_record(const og_db *db, sqlite3_stmt *stmt, og_record *rec, char *err,
                                   size_t errlen)
{
    int dtype = og_db_lookup_name(og_db_dtype_names, 5, sqlite3_column_text(stmt, 1));
    int mode = og_db_lookup_name(og_db_mode_names, 2, sqlite3_column_text(stmt, 2));
    uint64_t hash;
    if (dtype < 0 || mode < 0 || og_db_parse_hash(sqlite3_column_text(stmt, 10), &hash) != 0)
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                          "malformed record (dtype, mode or template_hash)");

    memset(rec, 0, sizeof *rec);
    og_db_copy_text(rec->key.op, sizeof rec->key.op, sqlite3_column_text(stmt, 0));
    rec->key.dtype = (og_dtype)dtype;
    rec->key.mode = (og_mode)mode;
    rec->key.trans_a = sqlite3_column_int64(stmt, 3) != 0;
    rec->key.trans_b = sqlite3_column_int64(stmt, 4) != 0;
    rec->m = sqlite3_column_int64(stmt, 5);
    rec->n = sqlite3_column_int64(stmt, 6);
    rec->k = sqlite3_column_int64(stmt, 7);
    rec->batch = sqlite3_column_int64(stmt, 8);
    og_db_copy_text(rec->template_name, sizeof rec->template_name, sqlite3_column_text(stmt, 9));
    rec->template_hash = hash;
    og_db_copy_text(rec->params, sizeof rec->params, sqlite3_column_text(stmt, 11));
    rec->median_us = sqlite3_column_double(stmt, 12);
    rec->gflops = sqlite3_column_double(stmt, 13);
    rec->samples = sqlite3_column_int(stmt, 14);
    rec->max_error = sqlite3_column_double(stmt, 15);
    rec->accepted = sqlite3_column_int64(stmt, 16) != 0;
    og_db_copy_text(rec->reason, sizeof rec->reason, sqlite3_column_text(stmt, 17));
    rec->created = sqlite3_column_int64(stmt, 18);
    og_db_copy_text(rec->source, sizeof rec->source, sqlite3_column_text(stmt, 19));
    rec->spread = sqlite3_column_double(stmt, 20);
    og_db_copy_text(rec->memory, sizeof rec->memory, sqlite3_column_text(stmt, 21));
    if (!isfinite(rec->spread) || rec->spread < 0 || !og_db_memory_known(rec->memory))
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                          "malformed record (spread or memory)");
    return OG_OK;
}

/* Fills dev from the OG_DB_DEVICE_COLUMNS and device tail of the current
 * row, starting at column first. Fails on values this code never writes:
 * key numbers beyond 32 bits, a malformed pipeline cache UUID. */
static og_status og_db_read_device(const og_db *db, sqlite3_stmt *stmt, int first,
                                   og_device_info *dev, char *err, size_t errlen)
{
    uint32_t key[4];
    for (int i = 0; i < 4; i++) {
        sqlite3_int64 v = sqlite3_column_int64(stmt, first + i);
        if (sqlite3_column_type(stmt, first + i) != SQLITE_INTEGER || v < 0 ||
            v > (sqlite3_int64)UINT32_MAX)
            return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                              "malformed device (vendor, device or driver id or version)");
        key[i] = (uint32_t)v;
    }
    memset(dev, 0, sizeof *dev);
    dev->vendor_id = key[0];
    dev->device_id = key[1];
    dev->driver_id = key[2];
    dev->driver_version = key[3];
    og_db_copy_text(dev->name, sizeof dev->name, sqlite3_column_text(stmt, first + 4));
    og_db_copy_text(dev->driver_name, sizeof dev->driver_name,
                    sqlite3_column_text(stmt, first + 5));
    og_db_copy_text(dev->driver_info, sizeof dev->driver_info,
                    sqlite3_column_text(stmt, first + 6));
    const unsigned char *uuid = sqlite3_column_text(stmt, first + 7);
    if (!og_db_uuid_known(uuid != NULL ? (const char *)uuid : ""))
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                          "malformed device (pipeline cache UUID)");
    og_db_copy_text(dev->pipeline_cache_uuid, sizeof dev->pipeline_cache_uuid, uuid);
    return OG_OK;
}

/* Reads PRAGMA user_version. This is the first statement that reads the
 * file, so a file that is not an SQLite database fails here. */
static og_status og_db_user_version(og_db *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, "PRAGMA user_version", -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        og_status st = og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen, "not a database (%s)",
                                  sqlite3_errmsg(db->conn));
        sqlite3_finalize(stmt);
        return st;
    }
    *version = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return OG_OK;
}

/* Runs a query returning one integer (0 when it returns no row). */
static og_status og_db_query_int(og_db *db, const char *sql, int64_t *value, char *err,
                                 size_t errlen)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        og_status st = og_db_fail_sqlite(db->path, db->conn, rc, "reading the schema", err, errlen);
        sqlite3_finalize(stmt);
        return st;
    }
    *value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    return OG_OK;
}

/* Creates the schema in a file whose user_version is 0, or upgrades an
 * older one. BEGIN IMMEDIATE takes the write lock before user_version is
 * read again, so two processes opening the same file do not both change it.
 * A file with user_version 0 that already holds tables is some other
 * database, and is left alone. */
static og_status og_db_update_schema(og_db *db, char *err, size_t errlen)
{
    int rc = sqlite3_exec(db->conn, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return og_db_fail_sqlite(db->path, db->conn, rc, "creating the schema", err, errlen);

    int version = 0;
    int64_t tables = 0;
    og_status st = og_db_user_version(db, &version, err, errlen);
    if (st == OG_OK && version == 0)
        st = og_db_query_int(db, "SELECT count(*) FROM sqlite_master", &tables, err, errlen);
    if (st == OG_OK && version == 0 && tables != 0)
        st = og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                        "has no onegpu schema (user_version 0 but %" PRId64 " schema objects)",
                        tables);
    const char *sql = version == 0                     ? og_db_schema_sql
                      : version < 3                    ? og_db_upgrade_v2_sql
                      : version < 4                    ? og_db_upgrade_v3_sql
                      : version < OG_DB_SCHEMA_VERSION ? og_db_upgrade_v4_sql
                                                       : NULL;
    if (st == OG_OK && sql) {
        rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            st = og_db_fail_sqlite(db->path, db->conn, rc,
                                   version == 0 ? "creating the schema" : "upgrading the schema",
                                   err, errlen);
    }
    if (st == OG_OK) {
        rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            st = og_db_fail_sqlite(db->path, db->conn, rc, "creating the schema", err, errlen);
    }
    if (st != OG_OK)
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL); /* fails harmlessly if none is open */
    return st;
}

#define OG_DB_CHECK_SQL(tail, device_tail)                                                         \
    "SELECT " OG_DB_RECORD_COLUMNS tail ", d.id, " OG_DB_DEVICE_COLUMNS device_tail                \
    " FROM records r, devices d WHERE r.device = d.id LIMIT 0"

/* Checks the version and that both tables have every column this code uses
 * at that version: preparing a statement that names them all fails
 * otherwise. Sets db->version. */
static og_status og_db_check_schema(og_db *db, char *err, size_t errlen)
{
    int version = 0;
    og_status st = og_db_user_version(db, &version, err, errlen);
    if (st != OG_OK)
        return st;
    if (version > OG_DB_SCHEMA_VERSION)
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                          "schema version %d is newer than this build's %d", version,
                          OG_DB_SCHEMA_VERSION);
    if (version < 1)
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                          "has no onegpu schema (user_version %d)", version);
    db->version = version;

    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, OG_DB_SQL(db, OG_DB_CHECK_SQL), -1, &stmt, NULL);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_OK) /* out of memory too: a corrupt file (og_db_fail_sqlite) */
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen, "has no onegpu schema (%s%s)",
                          sqlite3_errmsg(db->conn),
                          (rc & 0xff) == SQLITE_NOMEM ? ", a corrupt file most likely" : "");
    return OG_OK;
}

/* Connection settings. Busy timeout: tuners and applications share files.
 * Defensive and untrusted-schema modes: a database is data from elsewhere,
 * so neither its schema (views, triggers) nor SQL may corrupt the file or
 * call functions with side effects. Foreign keys: a record must name a
 * stored device. */
static og_status og_db_configure(og_db *db, char *err, size_t errlen)
{
    int rc = sqlite3_busy_timeout(db->conn, OG_DB_BUSY_TIMEOUT_MS);
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(db->conn, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(db->conn, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->conn, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return og_db_fail_sqlite(db->path, db->conn, rc, "configuring the connection", err, errlen);
    return OG_OK;
}

/* Writable setup: the schema when the file is new, then the rollback
 * journal (see og_db_rollback_journal). A file with a newer schema, or another
 * application's database, is refused (here or by og_db_check_schema) before
 * anything in it changes, journal mode included. */
/* The rollback journal (journal_mode DELETE), not WAL: a WAL database
 * cannot be read from a directory the reader may not write (SQLite's wal.html,
 * "Read-Only Databases": the installed pre-tuned databases under share/ for
 * every user but root), leaves -wal and -shm files beside it after read-only
 * use, and does not work on network file systems (home directories on
 * clusters). Readers and the tuner's short commits wait for each other
 * within the busy timeout instead. Files of earlier versions, in WAL mode,
 * are converted here; the change needs the file to itself, so while another
 * process holds it (without waiting for it) the file stays in WAL mode,
 * which reads and writes correctly, and the next writable open tries again. */
static og_status og_db_rollback_journal(og_db *db, char *err, size_t errlen)
{
    int rc = sqlite3_busy_timeout(db->conn, 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->conn, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        rc = SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(db->conn, OG_DB_BUSY_TIMEOUT_MS);
    if (rc != SQLITE_OK)
        return og_db_fail_sqlite(db->path, db->conn, rc, "setting the rollback journal", err,
                                 errlen);
    return OG_OK;
}

static og_status og_db_prepare_writable(og_db *db, char *err, size_t errlen)
{
    int version = 0;
    og_status st = og_db_user_version(db, &version, err, errlen);
    if (st != OG_OK || version > OG_DB_SCHEMA_VERSION)
        return st;
    if (version < OG_DB_SCHEMA_VERSION) {
        st = og_db_update_schema(db, err, errlen);
        if (st != OG_OK)
            return st;
    }
    return og_db_rollback_journal(db, err, errlen);
}

/* Whether the -shm file of a WAL database at path exists. */
static int og_db_shm_exists(const char *path)
{
    char shm[4096];
    struct stat sb;
    return snprintf(shm, sizeof shm, "%s-shm", path) < (int)sizeof shm && stat(shm, &sb) == 0;
}

/* Whether the directory holding path lets this process create files. */
static int og_db_dir_writable(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return access(".", W_OK) == 0;
    if (slash == path)
        return access("/", W_OK) == 0;
    char dir[4096];
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir)
        return 1; /* let SQLite report what it finds */
    memcpy(dir, path, n);
    dir[n] = '\0';
    return access(dir, W_OK) == 0;
}

/* Checks the file before SQLite sees it. SQLite reports a missing file as
 * SQLITE_CANTOPEN, as it does a directory or a permission problem, and only
 * a missing file is NOT_FOUND. And SQLite takes a file of a few bytes for an
 * empty database, which a writable open would then overwrite: a non-empty
 * file must start with SQLite's magic string. A reader cannot open a file in
 * WAL mode (header bytes 18 and 19 are 2) from a directory it may not write
 * unless its -shm file is there (og_db_rollback_journal): said plainly
 * instead of SQLite's "attempt to write a readonly database". */
static og_status og_db_check_file(const char *path, int writable, char *err, size_t errlen)
{
    static const char magic[16] = "SQLite format 3"; /* with its NUL: 16 bytes */
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int e = errno;
        if (e == ENOENT && writable)
            return OG_OK;
        return og_db_fail(path, e == ENOENT ? OG_ERROR_NOT_FOUND : OG_ERROR_DATABASE, err, errlen,
                          "cannot open: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size == 0)
        return OG_OK; /* SQLite refuses the one and takes the other for a new database */

    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int e = errno;
        return og_db_fail(path, OG_ERROR_DATABASE, err, errlen, "cannot open: %s", strerror(e));
    }
    unsigned char header[20];
    size_t got = fread(header, 1, sizeof header, f);
    fclose(f);
    if (got < sizeof magic || memcmp(header, magic, sizeof magic) != 0)
        return og_db_fail(path, OG_ERROR_DATABASE, err, errlen,
                          "not a database (no SQLite header)");
    if (!writable && got == sizeof header && header[18] == 2 && header[19] == 2 &&
        !og_db_dir_writable(path) && !og_db_shm_exists(path))
        return og_db_fail(path, OG_ERROR_DATABASE, err, errlen,
                          "a database in WAL mode, in a directory this process cannot write "
                          "(SQLite needs its -shm file beside it): convert it where it can be "
                          "written with sqlite3 FILE 'PRAGMA journal_mode = DELETE', or open it "
                          "once writable with this version of onegpu");
    return OG_OK;
}

og_status og_db_open(const char *path, int writable, og_db **out, char *err, size_t errlen)
{
    if (out == NULL)
        return og_db_fail(path != NULL ? path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "out is NULL");
    *out = NULL;
    if (path == NULL || path[0] == '\0')
        return og_db_fail("(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen, "no path given");

    og_status st = og_db_check_file(path, writable, err, errlen);
    if (st != OG_OK)
        return st;

    size_t pathlen = strlen(path);
    og_db *db = malloc(sizeof *db + pathlen + 1);
    if (db == NULL)
        return og_db_fail(path, OG_ERROR_OUT_OF_MEMORY, err, errlen, "out of memory");
    db->conn = NULL;
    db->writable = writable != 0;
    memcpy(db->path, path, pathlen + 1);

    int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int rc = sqlite3_open_v2(path, &db->conn, flags, NULL);
    if (rc != SQLITE_OK)
        st = og_db_fail_sqlite(path, db->conn, rc, "cannot open", err, errlen);
    else
        st = og_db_configure(db, err, errlen);
    if (st == OG_OK && writable)
        st = og_db_prepare_writable(db, err, errlen);
    if (st == OG_OK)
        st = og_db_check_schema(db, err, errlen);
    if (st != OG_OK) {
        og_db_close(db);
        return st;
    }
    *out = db;
    return OG_OK;
}

void og_db_close(og_db *db)
{
    if (db == NULL)
        return;
    /* Every statement is finalized before its function returns, so the
     * connection closes at once. */
    sqlite3_close(db->conn);
    free(db);
}

/* Binds ?1 to ?6 to a device key: vendor id, device id, driver id, driver
 * version, driver info, pipeline cache UUID. */
static int og_db_bind_device_key(sqlite3_stmt *stmt, const og_device_info *dev)
{
    int rc = sqlite3_bind_int64(stmt, 1, dev->vendor_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 2, dev->device_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 3, dev->driver_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 4, dev->driver_version);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 5, dev->driver_info, sizeof dev->driver_info);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 6, dev->pipeline_cache_uuid, sizeof dev->pipeline_cache_uuid);
    return rc;
}

/* Looks up the row id of a device key; *id = 0 when there is none. A file
 * before schema version 5 holds devices of unknown driver info and UUID
 * only, which no other key finds. */
static og_status og_db_find_device(og_db *db, const og_device_info *dev, int64_t *id, char *err,
                                   size_t errlen)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn,
                                db->version >= 5
                                    ? "SELECT id FROM devices WHERE vendor_id = ?1 AND"
                                      " device_id = ?2 AND driver_id = ?3 AND driver_version = ?4"
                                      " AND driver_info = ?5 AND pipeline_cache_uuid = ?6"
                                    : "SELECT id FROM devices WHERE vendor_id = ?1 AND"
                                      " device_id = ?2 AND driver_id = ?3 AND driver_version = ?4"
                                      " AND '' = ?5 AND '' = ?6",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = og_db_bind_device_key(stmt, dev);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        og_status st =
            og_db_fail_sqlite(db->path, db->conn, rc, "looking up the device", err, errlen);
        sqlite3_finalize(stmt);
        return st;
    }
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    return OG_OK;
}

og_status og_db_device(og_db *db, const og_device_info *dev, int64_t *id, char *err, size_t errlen)
{
    if (db == NULL || dev == NULL || id == NULL)
        return og_db_fail(db != NULL ? db->path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_device: NULL argument");
    *id = 0;
    og_status st = og_db_find_device(db, dev, id, err, errlen);
    if (st != OG_OK || *id != 0)
        return st;
    if (!db->writable)
        return og_db_fail(db->path, OG_ERROR_NOT_FOUND, err, errlen,
                          "no device %04" PRIx32 ":%04" PRIx32 " driver %" PRIu32
                          " version %" PRIu32 " info '%.*s' pipeline cache UUID '%.*s'",
                          dev->vendor_id, dev->device_id, dev->driver_id, dev->driver_version,
                          (int)sizeof dev->driver_info, dev->driver_info,
                          (int)sizeof dev->pipeline_cache_uuid, dev->pipeline_cache_uuid);
    /* The caller may have filled the UUID without a NUL. */
    char uuid[sizeof dev->pipeline_cache_uuid + 1];
    snprintf(uuid, sizeof uuid, "%.*s", (int)sizeof dev->pipeline_cache_uuid,
             dev->pipeline_cache_uuid);
    if (!og_db_uuid_known(uuid))
        return og_db_fail(db->path, OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_device: pipeline cache UUID '%s' is not 32 lowercase hex digits",
                          uuid);

    /* OR IGNORE: another process may insert the same device between the
     * lookup and here; the lookup after the insert finds either row. */
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn,
                                "INSERT OR IGNORE INTO devices (vendor_id, device_id, driver_id,"
                                " driver_version, driver_info, pipeline_cache_uuid, name,"
                                " driver_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = og_db_bind_device_key(stmt, dev);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 7, dev->name, sizeof dev->name);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 8, dev->driver_name, sizeof dev->driver_name);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) {
        st = og_db_fail_sqlite(db->path, db->conn, rc, "storing the device", err, errlen);
        sqlite3_finalize(stmt);
        return st;
    }
    sqlite3_finalize(stmt);

    st = og_db_find_device(db, dev, id, err, errlen);
    if (st == OG_OK && *id == 0)
        st = og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen,
                        "device row vanished after insert");
    return st;
}

/* Binds ?1 to ?13 to the key columns of a record on a device, in the order
 * of the table: device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,
 * template_name, template_hash, params. The caller has checked dtype and
 * mode. */
static int og_db_bind_key(sqlite3_stmt *stmt, int64_t device, const og_record *rec)
{
    char hash[17];
    og_db_format_hash(hash, rec->template_hash);
    int rc = sqlite3_bind_int64(stmt, 1, device);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 2, rec->key.op, sizeof rec->key.op);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 3, og_db_dtype_names[rec->key.dtype], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 4, og_db_mode_names[rec->key.mode], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 5, rec->key.trans_a != 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 6, rec->key.trans_b != 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 7, rec->m);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 8, rec->n);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 9, rec->k);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 10, rec->batch);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 11, rec->template_name, sizeof rec->template_name);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 12, hash, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 13, rec->params, sizeof rec->params);
    return rc;
}

/* The argument checks of the functions that take a record. */
static og_status og_db_check_record(og_db *db, const og_record *rec, const char *what, char *err,
                                    size_t errlen)
{
    if (db == NULL || rec == NULL)
        return og_db_fail(db != NULL ? db->path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "%s: NULL argument", what);
    if ((unsigned)rec->key.dtype > OG_UINT8 || (unsigned)rec->key.mode > OG_MODE_DETERMINISTIC)
        return og_db_fail(db->path, OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "record has dtype %d, mode %d", (int)rec->key.dtype, (int)rec->key.mode);
    return OG_OK;
}

/* ... and of those that write one: nothing is stored that og_db_read_record
 * would refuse to read back. */
static og_status og_db_check_write(og_db *db, const og_record *rec, const char *what, char *err,
                                   size_t errlen)
{
    og_status st = og_db_check_record(db, rec, what, err, errlen);
    if (st != OG_OK)
        return st;
    if (!db->writable)
        return og_db_fail(db->path, OG_ERROR_DATABASE, err, errlen, "opened read-only");
    char memory[sizeof rec->memory + 1]; /* the caller may have filled it without a NUL */
    snprintf(memory, sizeof memory, "%.*s", (int)sizeof rec->memory, rec->memory);
    if (!isfinite(rec->spread) || rec->spread < 0 || !og_db_memory_known(memory))
        return og_db_fail(db->path, OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "%s: record has spread %g, memory '%s'", what, rec->spread, memory);
    return OG_OK;
}

og_status og_db_insert(og_db *db, int64_t device, const og_record *rec, char *err, size_t errlen)
{
    og_status st = og_db_check_write(db, rec, "og_db_insert", err, errlen);
    if (st != OG_OK)
        return st;

    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(
        db->conn,
        "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
        " template_name, template_hash, params, median_us, gflops, samples, max_error, accepted,"
        " reason, created, source, spread, memory)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
        " ?18, ?19, ?20, ?21, ?22, ?23)",
        -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = og_db_bind_key(stmt, device, rec);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(stmt, 14, rec->median_us);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(stmt, 15, rec->gflops);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 16, rec->samples);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(stmt, 17, rec->max_error);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 18, rec->accepted != 0);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 19, rec->reason, sizeof rec->reason);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 20, rec->created != 0 ? rec->created : (int64_t)time(NULL));
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 21, rec->source, sizeof rec->source);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(stmt, 22, rec->spread);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 23, rec->memory, sizeof rec->memory);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE)
        st = og_db_fail_sqlite(db->path, db->conn, rc, "storing a record", err, errlen);
    sqlite3_finalize(stmt);
    return st;
}

/* Squared distance of two shapes in log space. Sizes below 1 (an empty
 * operand) count as 1 so the logarithm stays finite. */
static double og_db_shape_distance(const int64_t a[4], const int64_t b[4])
{
    double d = 0.0;
    for (int i = 0; i < 4; i++) {
        double x = a[i] < 1 ? 1.0 : (double)a[i];
        double y = b[i] < 1 ? 1.0 : (double)b[i];
        double l = log(x / y);
        d += l * l;
    }
    return d;
}

/* The best candidate seen so far while scanning records, with its device. */
typedef struct og_db_pick {
    int found; /* 0 none, 1 exact, 2 nearest */
    double distance;
    og_record rec;
    og_device_info dev;
} og_db_pick;

/* Whether a row (exact shape or not, its distance and its GFLOP/s) beats
 * the pick: an exact shape beats any other, then the smaller distance, then
 * the higher GFLOP/s. Distances that differ only by rounding (log(2) and
 * log(1/2) squared, say) count as a tie. */
static int og_db_better(const og_db_pick *pick, int exact, double distance, double gflops)
{
    if (pick->found == 0)
        return 1;
    if (exact != (pick->found == 1))
        return exact;
    double tolerance = 1e-12 * (distance > pick->distance ? distance : pick->distance);
    if (fabs(distance - pick->distance) > tolerance)
        return distance < pick->distance;
    return gflops > pick->rec.gflops;
}

/* The accepted records of one key on every device of the same vendor,
 * device and driver id, each row with its device (OG_DB_RECORD_NCOLUMNS
 * on), newest first. */
#define OG_DB_SCAN_SQL(tail, device_tail)                                                          \
    "SELECT " OG_DB_RECORD_COLUMNS tail ", " OG_DB_DEVICE_COLUMNS device_tail                      \
    " FROM devices d JOIN records r ON r.device = d.id"                                            \
    " WHERE d.vendor_id = ?1 AND d.device_id = ?2 AND d.driver_id = ?3"                            \
    " AND r.op = ?4 AND r.dtype = ?5 AND r.mode = ?6 AND r.trans_a = ?7 AND r.trans_b = ?8"        \
    " AND r.template_name = ?9 AND r.template_hash = ?10 AND r.accepted = 1"                       \
    " ORDER BY r.id DESC"

/* Scans the accepted records of one key on dev's vendor, device and driver
 * id into two picks: picks[0] those of dev's own driver build
 * (og_db_same_driver), picks[1] those of every other build. Rows come
 * newest first and only a strictly better row replaces a pick, so among
 * equals the newest record wins. */
static og_status og_db_scan(og_db *db, const og_device_info *dev, const og_record_key *key,
                            const char *template_name, const char *hash, const int64_t shape[4],
                            og_db_pick picks[2], og_device_info *row_dev, char *err, size_t errlen)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, OG_DB_SQL(db, OG_DB_SCAN_SQL), -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 1, dev->vendor_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 2, dev->device_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(stmt, 3, dev->driver_id);
    if (rc == SQLITE_OK)
        rc = og_db_bind_array(stmt, 4, key->op, sizeof key->op);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 5, og_db_dtype_names[key->dtype], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 6, og_db_mode_names[key->mode], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 7, key->trans_a != 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(stmt, 8, key->trans_b != 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 9, template_name, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(stmt, 10, hash, -1, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) {
        og_status st = og_db_fail_sqlite(db->path, db->conn, rc, "selecting", err, errlen);
        sqlite3_finalize(stmt);
        return st;
    }

    og_status st = OG_OK;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t row_shape[4] = {sqlite3_column_int64(stmt, 5), sqlite3_column_int64(stmt, 6),
                                sqlite3_column_int64(stmt, 7), sqlite3_column_int64(stmt, 8)};
        int exact = memcmp(row_shape, shape, sizeof row_shape) == 0;
        double distance = exact ? 0.0 : og_db_shape_distance(row_shape, shape);
        st = og_db_read_device(db, stmt, OG_DB_RECORD_NCOLUMNS, row_dev, err, errlen);
        if (st != OG_OK)
            break;
        og_db_pick *pick = &picks[!og_db_same_driver(dev, row_dev)];
        if (!og_db_better(pick, exact, distance, sqlite3_column_double(stmt, 13)))
            continue;
        st = og_db_read_record(db, stmt, &pick->rec, err, errlen);
        if (st != OG_OK)
            break;
        pick->dev = *row_dev;
        pick->found = exact ? 1 : 2;
        pick->distance = distance;
    }
    if (st == OG_OK && rc != SQLITE_DONE)
        st = og_db_fail_sqlite(db->path, db->conn, rc, "selecting", err, errlen);
    sqlite3_finalize(stmt);
    return st;
}

/* What og_db_select keeps while it scans: off small thread stacks. */
typedef struct og_db_selector {
    og_db_pick picks[2];
    og_device_info row_dev;
} og_db_selector;

og_status og_db_select(og_db *db, const og_device_info *dev, const og_record_key *key,
                       const char *template_name, uint64_t template_hash, int64_t m, int64_t n,
                       int64_t k, int64_t batch, og_record *out, og_device_info *rec_dev,
                       int *found, int *other_driver, char *err, size_t errlen)
{
    if (db == NULL || dev == NULL || key == NULL || template_name == NULL || out == NULL ||
        rec_dev == NULL || found == NULL || other_driver == NULL)
        return og_db_fail(db != NULL ? db->path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_select: NULL argument");
    *found = 0;
    *other_driver = 0;
    memset(rec_dev, 0, sizeof *rec_dev);
    if ((unsigned)key->dtype > OG_UINT8 || (unsigned)key->mode > OG_MODE_DETERMINISTIC)
        return og_db_fail(db->path, OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "key has dtype %d, mode %d", (int)key->dtype, (int)key->mode);

    char hash[17];
    og_db_format_hash(hash, template_hash);
    const int64_t shape[4] = {m, n, k, batch};
    og_db_selector *s = calloc(1, sizeof *s);
    if (s == NULL)
        return og_db_fail(db->path, OG_ERROR_OUT_OF_MEMORY, err, errlen, "out of memory");

    og_status st =
        og_db_scan(db, dev, key, template_name, hash, shape, s->picks, &s->row_dev, err, errlen);
    /* The same driver's records first; another build's only when it has none. */
    const og_db_pick *pick = s->picks[0].found != 0 ? &s->picks[0] : &s->picks[1];
    if (st == OG_OK && pick->found != 0) {
        *out = pick->rec;
        *rec_dev = pick->dev;
        *found = pick->found;
        *other_driver = pick == &s->picks[1];
    }
    free(s);
    return st;
}

#define OG_DB_EACH_SQL(tail, device_tail)                                                          \
    "SELECT " OG_DB_RECORD_COLUMNS tail ", coalesce(d.name, '')"                                   \
    " FROM records r LEFT JOIN devices d ON d.id = r.device ORDER BY r.id"

og_status og_db_each(og_db *db, int (*fn)(void *user, const og_record *rec, const char *device),
                     void *user, char *err, size_t errlen)
{
    if (db == NULL || fn == NULL)
        return og_db_fail(db != NULL ? db->path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_each: NULL argument");
    og_record *rec = malloc(sizeof *rec);
    if (rec == NULL)
        return og_db_fail(db->path, OG_ERROR_OUT_OF_MEMORY, err, errlen, "out of memory");

    /* LEFT JOIN: a hand-edited file may hold a record whose device is gone;
     * it is still listed, with an empty device name. */
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, OG_DB_SQL(db, OG_DB_EACH_SQL), -1, &stmt, NULL);
    og_status st = OG_OK;
    if (rc != SQLITE_OK) {
        st = og_db_fail_sqlite(db->path, db->conn, rc, "listing records", err, errlen);
    } else {
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            st = og_db_read_record(db, stmt, rec, err, errlen);
            if (st != OG_OK)
                break;
            const unsigned char *name = sqlite3_column_text(stmt, OG_DB_RECORD_NCOLUMNS);
            if (fn(user, rec, name != NULL ? (const char *)name : "") != 0) {
                rc = SQLITE_DONE;
                break;
            }
        }
        if (st == OG_OK && rc != SQLITE_DONE)
            st = og_db_fail_sqlite(db->path, db->conn, rc, "listing records", err, errlen);
    }
    sqlite3_finalize(stmt);
    free(rec);
    return st;
}

/* Records in the order og_db_walk promises, each row with its device
 * (OG_DB_RECORD_NCOLUMNS on) and whether the device has no record at all
 * (the row of a device without records, its record columns NULL). The
 * record tail (OG_DB_SQL) ends the order too. */
#define OG_DB_WALK_SQL(tail, device_tail)                                                          \
    "SELECT " OG_DB_RECORD_COLUMNS tail ", " OG_DB_DEVICE_COLUMNS device_tail ", r.id IS NULL"     \
    " FROM devices d LEFT JOIN records r ON r.device = d.id"                                       \
    " ORDER BY d.vendor_id, d.device_id, d.driver_id, d.driver_version, " device_tail ", r.op,"    \
    " r.dtype, r.mode, r.trans_a, r.trans_b, r.m, r.n, r.k, r.batch, r.template_name,"             \
    " r.template_hash, r.params, r.median_us, r.gflops, r.samples, r.max_error, r.accepted,"       \
    " r.reason, r.created, " tail
#define OG_DB_WALK_DEVICE OG_DB_RECORD_NCOLUMNS
#define OG_DB_WALK_NO_RECORD (OG_DB_RECORD_NCOLUMNS + OG_DB_DEVICE_NCOLUMNS)

/* What og_db_walk keeps while it steps: off the stack, like og_db_each's record. */
typedef struct og_db_walker {
    og_device_info dev, row_dev;
    og_record rec;
} og_db_walker;

og_status og_db_walk(og_db *db,
                     int (*fn)(void *user, const og_device_info *dev, const og_record *rec),
                     void *user, char *err, size_t errlen)
{
    if (db == NULL || fn == NULL)
        return og_db_fail(db != NULL ? db->path : "(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_walk: NULL argument");
    og_db_walker *w = malloc(sizeof *w);
    if (w == NULL)
        return og_db_fail(db->path, OG_ERROR_OUT_OF_MEMORY, err, errlen, "out of memory");

    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, OG_DB_SQL(db, OG_DB_WALK_SQL), -1, &stmt, NULL);
    og_status st = OG_OK;
    int have_device = 0, stop = 0;
    if (rc != SQLITE_OK) {
        st = og_db_fail_sqlite(db->path, db->conn, rc, "listing records", err, errlen);
    } else {
        while (!stop && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            st = og_db_read_device(db, stmt, OG_DB_WALK_DEVICE, &w->row_dev, err, errlen);
            if (st != OG_OK)
                break;
            if (!have_device || !og_db_same_driver(&w->dev, &w->row_dev)) {
                w->dev = w->row_dev;
                have_device = 1;
                stop = fn(user, &w->dev, NULL) != 0;
            }
            if (stop || sqlite3_column_int(stmt, OG_DB_WALK_NO_RECORD) != 0)
                continue;
            st = og_db_read_record(db, stmt, &w->rec, err, errlen);
            if (st != OG_OK)
                break;
            stop = fn(user, &w->dev, &w->rec) != 0;
        }
        if (st == OG_OK && !stop && rc != SQLITE_DONE)
            st = og_db_fail_sqlite(db->path, db->conn, rc, "listing records", err, errlen);
    }
    sqlite3_finalize(stmt);
    free(w);
    return st;
}

og_status og_db_begin(og_db *db, char *err, size_t errlen)
{
    if (db == NULL)
        return og_db_fail("(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_begin: NULL argument");
    int rc = sqlite3_exec(db->conn, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return og_db_fail_sqlite(db->path, db->conn, rc, "starting a transaction", err, errlen);
    return OG_OK;
}

og_status og_db_commit(og_db *db, char *err, size_t errlen)
{
    if (db == NULL)
        return og_db_fail("(null)", OG_ERROR_INVALID_ARGUMENT, err, errlen,
                          "og_db_commit: NULL argument");
    int rc = sqlite3_exec(db->conn, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return og_db_fail_sqlite(db->path, db->conn, rc, "committing", err, errlen);
    return OG_OK;
}

void og_db_rollback(og_db *db)
{
    if (db != NULL)
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL); /* fails harmlessly if none is open */
}

/* The rows of one key (og_db_bind_key's ?1 to ?13). */
#define OG_DB_KEY_WHERE                                                                            \
    " WHERE device = ?1 AND op = ?2 AND dtype = ?3 AND mode = ?4 AND trans_a = ?5"                 \
    " AND trans_b = ?6 AND m = ?7 AND n = ?8 AND k = ?9 AND batch = ?10 AND template_name = ?11"   \
    " AND template_hash = ?12 AND params = ?13"

/* Runs a statement on the rows of rec's key on device. With found
 * non-NULL, reads the first row's accepted and gflops (*found 0 when there
 * is none). */
static og_status og_db_key_step(og_db *db, const char *sql, int64_t device, const og_record *rec,
                                int *found, int *accepted, double *gflops, char *err, size_t errlen)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = og_db_bind_key(stmt, device, rec);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    og_status st = OG_OK;
    if (rc == SQLITE_ROW && found != NULL) {
        *found = 1;
        *accepted = sqlite3_column_int(stmt, 0) != 0;
        *gflops = sqlite3_column_double(stmt, 1);
    } else if (rc == SQLITE_DONE && found != NULL) {
        *found = 0;
    } else if (rc != SQLITE_DONE) {
        st = og_db_fail_sqlite(db->path, db->conn, rc, "merging a record", err, errlen);
    }
    sqlite3_finalize(stmt);
    return st;
}

og_status og_db_merge_record(og_db *db, int64_t device, const og_record *rec, int *stored,
                             char *err, size_t errlen)
{
    og_status st = og_db_check_write(db, rec, "og_db_merge_record", err, errlen);
    if (st == OG_OK && stored == NULL)
        st = og_db_fail(db->path, OG_ERROR_INVALID_ARGUMENT, err, errlen,
                        "og_db_merge_record: NULL argument");
    if (st != OG_OK)
        return st;
    *stored = 0;

    int found = 0, accepted = 0;
    double gflops = 0.0;
    st = og_db_key_step(db,
                        "SELECT accepted, gflops FROM records" OG_DB_KEY_WHERE
                        " ORDER BY accepted DESC, gflops DESC LIMIT 1",
                        device, rec, &found, &accepted, &gflops, err, errlen);
    int outranks = !found || (rec->accepted != 0 && !accepted) ||
                   ((rec->accepted != 0) == accepted && rec->gflops > gflops);
    if (st != OG_OK || !outranks)
        return st;
    st = og_db_key_step(db, "DELETE FROM records" OG_DB_KEY_WHERE, device, rec, NULL, NULL, NULL,
                        err, errlen);
    if (st == OG_OK)
        st = og_db_insert(db, device, rec, err, errlen);
    if (st == OG_OK)
        *stored = 1;
    return st;
}

#define OG_DB_FIND_SQL(tail, device_tail)                                                          \
    "SELECT " OG_DB_RECORD_COLUMNS tail " FROM records r" OG_DB_KEY_WHERE                          \
    " ORDER BY accepted DESC, gflops DESC LIMIT 1"

og_status og_db_find(og_db *db, int64_t device, const og_record *rec, og_record *out, int *found,
                     char *err, size_t errlen)
{
    *found = 0;
    og_status st = og_db_check_record(db, rec, "og_db_find", err, errlen);
    if (st != OG_OK)
        return st;
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db->conn, OG_DB_SQL(db, OG_DB_FIND_SQL), -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = og_db_bind_key(stmt, device, rec);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        st = og_db_read_record(db, stmt, out, err, errlen);
        *found = st == OG_OK;
    } else if (rc != SQLITE_DONE) {
        st = og_db_fail_sqlite(db->path, db->conn, rc, "finding a record", err, errlen);
    }
    sqlite3_finalize(stmt);
    return st;
}
