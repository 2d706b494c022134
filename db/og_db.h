/*
 * The tuning database: an SQLite file holding devices and tuning records
 * (parameters and measurements, never code; docs/reference-design.md,
 * "Invariants" 2).
 * Internal to onegpu; the runtime reads it, ogtune writes it.
 */
#ifndef OG_DB_H
#define OG_DB_H

#include <stddef.h>
#include <stdint.h>

#include "og_types.h"

/* Bumped whenever the schema changes; a file with a higher number is
 * refused, one with a lower number is read as it is and upgraded when opened
 * writable. */
#define OG_DB_SCHEMA_VERSION 5

typedef struct og_db og_db;

/* The device key: vendor id, device id, driver id, driver version, driver
 * info and pipeline cache UUID. The last three say which build of the
 * driver: lavapipe reports driver version 1 for every Mesa release, and
 * only its driver info ("Mesa 22.3.6 (LLVM 15.0.6)") and pipeline cache
 * UUID tell them apart. Files before schema version 5 have neither: they
 * read as "" (unknown). */
typedef struct og_device_info {
    uint32_t vendor_id, device_id, driver_id, driver_version;
    char name[256];        /* VkPhysicalDeviceProperties::deviceName */
    char driver_name[256]; /* VkPhysicalDeviceDriverProperties::driverName */
    char driver_info[256]; /* VkPhysicalDeviceDriverProperties::driverInfo; "" unknown */
    /* VkPhysicalDeviceProperties::pipelineCacheUUID as 32 lowercase hex
     * digits, byte 0 first; "" unknown. */
    char pipeline_cache_uuid[33];
} og_device_info;

/* Whether s (a terminated string) is "" or 32 lowercase hex digits: what
 * the schema's CHECK accepts as a pipeline cache UUID. */
int og_db_uuid_known(const char *s);

/* Whether two device keys name the same driver build of the same device:
 * vendor id, device id, driver id, driver version, driver info and
 * pipeline cache UUID all equal ("" equals only ""). */
int og_db_same_driver(const og_device_info *a, const og_device_info *b);

/* The op of the records of float32 recovered from float16 products (the
 * unscaled kernel with the default residual shift): kept apart from native
 * float32's "gemm", so neither is ever selected for the other. */
#define OG_OP_GEMM_RECOVERED "gemm_recovered"
/* The start of a convolution's op (og_record_key). */
#define OG_OP_CONV_PREFIX "conv:"
/* The start of a low-bit weight product's op: "qgemm:" and the weight
 * format's canonical text (og_qweights_format_name: "qgemm:mxfp4",
 * "qgemm:int4:g128:f16:uint4"); dtype is A's, trans_b 1 (W is N x K). */
#define OG_OP_QGEMM_PREFIX "qgemm:"

/* What a record is about: everything selection matches on but the shape. */
typedef struct og_record_key {
    /* "gemm", OG_OP_GEMM_RECOVERED (dtype OG_F32), "int8gemm" (dtype
     * OG_INT8 for every 8-bit signedness), or a convolution's
     * OG_OP_CONV_PREFIX "RxS:sHxW:dHxW" (og_conv_op: trans_a its layout,
     * trans_b its weights' layout, m, n, k and batch its implicit GEMM's),
     * or a low-bit weight product's OG_OP_QGEMM_PREFIX and format
     * (og_qgemm_op; dtype A's, trans_b 1) */
    char op[32];
    og_dtype dtype;
    og_mode mode;
    int trans_a, trans_b;
} og_record_key;

/* The memory a record was measured in (og_record::memory). Device-local
 * memory, filled through staging copies: */
#define OG_DB_MEMORY_DEVICE_LOCAL "device-local"
/* Device-local and host-visible memory, mapped directly (integrated GPUs,
 * resizable BAR): */
#define OG_DB_MEMORY_DEVICE_LOCAL_MAPPED "device-local-mapped"
/* Host-visible memory on a device without a device-local type: */
#define OG_DB_MEMORY_HOST_VISIBLE "host-visible"

/* Whether s (a terminated string) is "" or one of the OG_DB_MEMORY_ names:
 * what the schema's CHECK accepts. */
int og_db_memory_known(const char *s);

typedef struct og_record {
    og_record_key key;
    int64_t m, n, k, batch;
    char template_name[32];
    uint64_t template_hash;
    char params[160];
    double median_us; /* median GPU time of one call, microseconds */
    double gflops;    /* 2*M*N*K*batch / median time */
    int samples;      /* timed calls behind median_us */
    /* Relative spread of the timed calls: (slowest - fastest) / median,
     * finite and >= 0; 0 for rejected records and files before schema
     * version 4. */
    double spread;
    /* Where the operands lived when measured (OG_DB_MEMORY_*); "" for
     * files before schema version 4 (shown as "unknown"). */
    char memory[32];
    double max_error; /* the design's metric: max|gpu - ref| / max|ref| */
    int accepted;
    char reason[256]; /* why it was rejected ("" when accepted) */
    int64_t created;  /* Unix time */
    /* Provenance: "" for a record measured into this database, else the
     * database it was first merged from (ogtune merge), as named there.
     * Files before schema version 3 read as "". */
    char source[256];
} og_record;

/* Opens a database. writable: creates the file and the schema when needed
 * (rollback journal, converting a file in WAL mode when no other process
 * holds it; 5 s busy timeout). Read-only: the file must exist and hold
 * the schema. Errors (reason in err): OG_ERROR_NOT_FOUND (missing file),
 * OG_ERROR_DATABASE (not a database, corrupt, no schema, a newer schema
 * version than OG_DB_SCHEMA_VERSION, or, read-only, a file in WAL mode in a
 * directory this process cannot write). */
og_status og_db_open(const char *path, int writable, og_db **out, char *err, size_t errlen);
void og_db_close(og_db *db);

/* Row id of a device, inserting it (writable databases) when missing. */
og_status og_db_device(og_db *db, const og_device_info *dev, int64_t *id, char *err, size_t errlen);

/* Stores one record for a device (committed at once, or with the
 * transaction of og_db_begin). */
og_status og_db_insert(og_db *db, int64_t device, const og_record *rec, char *err, size_t errlen);

/* The record of this device with rec's key, shape, template, template hash
 * and params (the best, accepted first, when there are several), into *out
 * with *found = 1; *found = 0 when there is none. What a resumed tuning run
 * asks before measuring a candidate. */
og_status og_db_find(og_db *db, int64_t device, const og_record *rec, og_record *out, int *found,
                     char *err, size_t errlen);

/* Selection: the accepted record with the highest GFLOP/s for this device,
 * key, template and hash at exactly (m, n, k, batch); else the best record
 * of the nearest tuned shape in log space (sum of squared log ratios of M,
 * N, K and batch). *found: 0 none, 1 exact, 2 nearest.
 *
 * Which devices' records count (the rule onegpu.h states for users):
 * first those of the same driver (og_db_same_driver with dev); only when
 * there is none for the key, those of another build of the same driver on
 * the same device (same vendor, device and driver id; another driver
 * version, driver info or pipeline cache UUID, an unknown one included),
 * and *other_driver is then set. Records of another vendor, device or
 * driver id are never used. *rec_dev receives the device row the record
 * belongs to (zeroed when none is found). */
og_status og_db_select(og_db *db, const og_device_info *dev, const og_record_key *key,
                       const char *template_name, uint64_t template_hash, int64_t m, int64_t n,
                       int64_t k, int64_t batch, og_record *out, og_device_info *rec_dev,
                       int *found, int *other_driver, char *err, size_t errlen);

/* Calls fn for every record, oldest first (with its device's name). Stops
 * early when fn returns non-zero. */
og_status og_db_each(og_db *db, int (*fn)(void *user, const og_record *rec, const char *device),
                     void *user, char *err, size_t errlen);

/* Calls fn for every device in the order of its key (vendor id, device id,
 * driver id, driver version, driver info, pipeline cache UUID) with rec
 * NULL, then for each of its records in the order of their columns (op,
 * dtype, mode, trans_a, trans_b, m, n, k, batch, template_name,
 * template_hash, params, then the measurements, reason, created, source,
 * spread and memory): an order that depends on the contents only, never on
 * row ids or insertion order. Records whose device row is missing (only a
 * hand-edited file has them) are not visited. Stops early when fn returns
 * non-zero. */
og_status og_db_walk(og_db *db,
                     int (*fn)(void *user, const og_device_info *dev, const og_record *rec),
                     void *user, char *err, size_t errlen);

/* A transaction around the writes that follow: og_db_begin takes the write
 * lock at once (BEGIN IMMEDIATE); og_db_commit stores everything since, and
 * og_db_rollback drops it (harmless when no transaction is open). */
og_status og_db_begin(og_db *db, char *err, size_t errlen);
og_status og_db_commit(og_db *db, char *err, size_t errlen);
void og_db_rollback(og_db *db);

/* One step of a merge. The records of rec's key on device (the same op,
 * dtype, mode, trans_a, trans_b, m, n, k, batch, template_name,
 * template_hash and params) are compared with rec by rank: an accepted
 * record above a rejected one, then the higher GFLOP/s. When rec ranks
 * above all of them (or there are none) they are deleted and rec is stored
 * (*stored = 1); otherwise nothing changes (*stored = 0), so a tie keeps
 * what is stored and merging a record twice changes nothing. */
og_status og_db_merge_record(og_db *db, int64_t device, const og_record *rec, int *stored,
                             char *err, size_t errlen);

#endif /* OG_DB_H */
