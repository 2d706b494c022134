/*
 * Values in and out of the tuning database's rows (og_db_private.h): the
 * messages, binding a fixed array, the template hash as text, reading a
 * record or a device back and checking every value on the way, and the
 * checks og_db.h exports for the values the schema's CHECKs accept.
 */
#include "og_db_private.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const og_db_dtype_names[OG_UINT8 + 1] = {
    [OG_F32] = "f32", [OG_F16] = "f16", [OG_BF16] = "bf16", [OG_INT8] = "i8", [OG_UINT8] = "u8"};
const char *const og_db_mode_names[OG_MODE_DETERMINISTIC + 1] = {
    [OG_MODE_FAST] = "fast", [OG_MODE_DETERMINISTIC] = "deterministic"};

og_status og_db_fail(const char *path, og_status st, char *err, size_t errlen, const char *fmt, ...)
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

og_status og_db_fail_sqlite(const char *path, sqlite3 *conn, int rc, const char *what, char *err,
                            size_t errlen)
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

int og_db_bind_array(sqlite3_stmt *stmt, int index, const char *s, size_t size)
{
    return sqlite3_bind_text(stmt, index, s, (int)strnlen(s, size), SQLITE_TRANSIENT);
}

void og_db_format_hash(char out[17], uint64_t hash)
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

og_status og_db_read_record(const og_db *db, sqlite3_stmt *stmt, og_record *rec, char *err,
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

og_status og_db_read_device(const og_db *db, sqlite3_stmt *stmt, int first, og_device_info *dev,
                            char *err, size_t errlen)
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
