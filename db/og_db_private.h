/*
 * What the pieces of the tuning database (og_db.h) share: the handle, the
 * column lists every query reads rows through, and the helpers that bind
 * values to statements and read rows back. Private to db/.
 *
 * The pieces, in the order a database is used:
 *   og_db.c          opening and closing, the schema and its upgrades, the
 *                    connection's settings, transactions;
 *   og_db_row.c      values in and out of rows: messages, binding, reading
 *                    a record or a device back (checked), og_db_uuid_known,
 *                    og_db_same_driver and og_db_memory_known;
 *   og_db_records.c  devices and records: storing, finding, merging and
 *                    listing them (og_db_each, og_db_walk);
 *   og_db_select.c   the selection (og_db_select): the best record of a key
 *                    for a shape, exact or nearest, same driver first.
 * Each calls only og_db_row.c and itself.
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
#ifndef OG_DB_PRIVATE_H
#define OG_DB_PRIVATE_H

#include "og_db.h"

#include <sqlite3.h>

struct og_db {
    sqlite3 *conn;
    int writable;
    int version; /* the file's schema version (PRAGMA user_version) */
    char path[]; /* as given to og_db_open, for messages */
};

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

/* The names of og_dtype and og_mode values in the dtype and mode columns. */
extern const char *const og_db_dtype_names[OG_UINT8 + 1];
extern const char *const og_db_mode_names[OG_MODE_DETERMINISTIC + 1];

/* Formats "db: <path>: <message>" into err (which may be NULL) and returns st. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
og_status
og_db_fail(const char *path, og_status st, char *err, size_t errlen, const char *fmt, ...);

/* Reports a failed SQLite call on conn: what we were doing and SQLite's
 * reason. SQLite reports some corrupt files as out of memory (a size read
 * from the file asks for more than SQLite allocates; found by
 * fuzz/fuzz_db.c on open and on reading records), and the queries here
 * need little memory: SQLITE_NOMEM is a database error, said to be most
 * likely a corrupt file. */
og_status og_db_fail_sqlite(const char *path, sqlite3 *conn, int rc, const char *what, char *err,
                            size_t errlen);

/* Binds a fixed-size char array that the caller may have filled without a
 * terminating NUL. */
int og_db_bind_array(sqlite3_stmt *stmt, int index, const char *s, size_t size);

/* Writes a template hash as the 16 lowercase hex digits the table holds. */
void og_db_format_hash(char out[17], uint64_t hash);

/* Fills rec from the current row of a statement whose first columns are
 * OG_DB_RECORD_COLUMNS. Fails on values this code never writes, which only
 * a foreign or damaged file can hold. */
og_status og_db_read_record(const og_db *db, sqlite3_stmt *stmt, og_record *rec, char *err,
                            size_t errlen);

/* Fills dev from the OG_DB_DEVICE_COLUMNS and device tail of the current
 * row, starting at column first. Fails on values this code never writes:
 * key numbers beyond 32 bits, a malformed pipeline cache UUID. */
og_status og_db_read_device(const og_db *db, sqlite3_stmt *stmt, int first, og_device_info *dev,
                            char *err, size_t errlen);

#endif /* OG_DB_PRIVATE_H */
