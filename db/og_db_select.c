/*
 * The selection of the tuning database (og_db_select in og_db.h): the best
 * accepted record of a key for a shape, exact or the nearest in log space,
 * from the same driver build first and another build of it only when that
 * has none.
 */
#include "og_db_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
