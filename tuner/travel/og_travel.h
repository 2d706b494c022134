/*
 * Databases that travel: a tuning database as SQL text (ogtune export and
 * import), the merge of databases into one (ogtune merge), and the checks a
 * record from elsewhere passes first. Internal to onegpu (also used by the
 * tests).
 *
 * The dump is SQL text that the sqlite3 shell can run on a database of this
 * schema; ogtune import never executes it, but reads exactly what og_export
 * writes: comments (--), BEGIN;, one block per device (OG_DUMP_DEVICE_SQL,
 * then OG_DUMP_RECORD_SQL for each of its records, in og_db_walk's order),
 * COMMIT;. It reads older dumps too: devices without driver info and
 * pipeline cache UUID (schema 4 and before: both "", unknown), records
 * that name their device without them (the device of unknown driver info
 * and UUID) and records without spread and memory (schema 3: 0 and "").
 * Values are literals only: integers, reals
 * (%.17g in the C locale, so every double reads back to the same bits;
 * 1e999 and -1e999 for the infinities) and strings in single quotes, a
 * quote doubled. Records name their device by its key, never by a row id:
 * a dump holds no value that depends on how the file was written.
 */
#ifndef OG_TRAVEL_H
#define OG_TRAVEL_H

#include <stddef.h>
#include <stdio.h>

#include "og_db.h"

/* The statements of a dump, '?' standing for a value. A device: the
 * columns of schema version 4, those added in version 5 (driver info and
 * pipeline cache UUID), then the values in that order. */
#define OG_DUMP_DEVICE_HEAD                                                                        \
    "INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name, driver_name"
#define OG_DUMP_DEVICE_ADDED ", driver_info, pipeline_cache_uuid"
#define OG_DUMP_DEVICE_BODY ") VALUES (?, ?, ?, ?, ?, ?"
#define OG_DUMP_DEVICE_SQL OG_DUMP_DEVICE_HEAD OG_DUMP_DEVICE_ADDED OG_DUMP_DEVICE_BODY ", ?, ?);"
#define OG_DUMP_DEVICE_VALUES 8

/* A record: the columns up to source (every dump has them), the columns of
 * schema version 4 (spread and memory), then the values: the device's key
 * (the numbers, then from schema version 5 its driver info and pipeline
 * cache UUID), those up to source, then the added ones. */
#define OG_DUMP_RECORD_HEAD                                                                        \
    "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"              \
    " template_name, template_hash, params, median_us, gflops, samples, max_error, accepted,"      \
    " reason, created, source"
#define OG_DUMP_RECORD_ADDED ", spread, memory"
#define OG_DUMP_RECORD_DEVICE                                                                      \
    ") VALUES ((SELECT id FROM devices WHERE vendor_id = ? AND device_id = ? AND driver_id = ?"    \
    " AND driver_version = ?"
#define OG_DUMP_RECORD_DEVICE_ADDED " AND driver_info = ? AND pipeline_cache_uuid = ?"
#define OG_DUMP_RECORD_BODY "), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
/* What og_export writes (OG_DUMP_RECORD_VALUES values); older dumps lack
 * the added columns, the added device key or both. */
#define OG_DUMP_RECORD_SQL                                                                         \
    OG_DUMP_RECORD_HEAD OG_DUMP_RECORD_ADDED OG_DUMP_RECORD_DEVICE OG_DUMP_RECORD_DEVICE_ADDED     \
        OG_DUMP_RECORD_BODY ", ?, ?);"
#define OG_DUMP_RECORD_VALUES 28

/* Whether a record was measured with another version of its template than
 * this build's (og_template_hash): selection never reads it. */
int og_record_stale(const og_record *rec);

/* Checks a record from elsewhere (a dump, another database) before it is
 * stored: op gemm, gemm_recovered (dtype f32) or int8gemm; dtype, mode, trans_a, trans_b and
 * accepted in range; M, N, K below 2^32 and batch 1 to 2^32 - 1; template name and params of the
 * characters og_params_format writes (a-z, 0-9, '_', '=',
 * ','); for a record that is not stale, params that og_params_parse reads
 * and that name the record's template; times and GFLOP/s finite and not
 * negative, max_error not negative (infinite allowed), samples not negative,
 * spread finite and not negative, memory "" or one of the OG_DB_MEMORY_
 * names, created after 1970. Stale records keep only the character checks on
 * params: their template's parameters may have changed since. Returns 0, or
 * -1 with the reason in why. */
int og_record_check(const og_record *rec, char *why, size_t len);

/* What an export or an import handled. */
typedef struct og_travel_counts {
    size_t devices, records;
} og_travel_counts;

/* Writes the dump of db to out. Errors: the database's, or
 * OG_ERROR_DATABASE for a failed write (the dump then lacks its COMMIT, so
 * og_import refuses it). */
og_status og_export(og_db *db, FILE *out, og_travel_counts *counts, char *err, size_t errlen);

/* Reads the dump in the file dump_path into the database db_path (created
 * when missing) in one transaction. The whole dump is checked before the
 * database is opened: a refused dump (OG_ERROR_DATABASE; OG_ERROR_NOT_FOUND
 * for a missing file) leaves the database as it was, or absent, and the
 * message names the line. Records are added to what the database holds. */
og_status og_import(const char *dump_path, const char *db_path, og_travel_counts *counts, char *err,
                    size_t errlen);

/* What a merge took from one source. */
typedef struct og_merge_count {
    size_t records; /* records read */
    size_t stored;  /* records stored (new keys, or better than what was stored) */
} og_merge_count;

/* Merges the records of the databases srcs[0..n) (read-only) into dst_path
 * (created when missing) in one transaction, through og_db_merge_record:
 * per key (device, op, dtype, mode, trans_a, trans_b, M, N, K, batch,
 * template name and hash, params) the best record stays, accepted above
 * rejected and then the higher GFLOP/s; a tie keeps what is stored (dst's
 * own, else the earlier source). A stored record keeps its source when it
 * has one, else gets the name of the database it came from as given in
 * srcs. Every record passes og_record_check first; one that fails refuses
 * the whole merge and dst's contents are left as they were. counts: n
 * entries. */
og_status og_merge(const char *dst_path, const char *const *srcs, size_t n, og_merge_count *counts,
                   char *err, size_t errlen);

#endif /* OG_TRAVEL_H */
