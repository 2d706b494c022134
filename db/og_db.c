/*
 * The tuning database (og_db.h): opening and closing a file, its schema and
 * the upgrades from older versions, the connection's settings and
 * transactions. What the other pieces share, and which piece does what:
 * og_db_private.h.
 */
#include "og_db_private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OG_DB_STR_(x) #x
#define OG_DB_STR(x) OG_DB_STR_(x)

/* Milliseconds a connection waits for another one's lock. */
#define OG_DB_BUSY_TIMEOUT_MS 5000

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
