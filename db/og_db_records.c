/*
 * The devices and records of the tuning database (og_db.h): a device's row
 * id (stored when missing), storing a record, finding the record of a key
 * (a resumed tuning run), merging one (ogtune merge), and listing them all
 * (og_db_each, og_db_walk). The selection is og_db_select.c's.
 */
#include "og_db_private.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
