/* Databases that travel: export and import (a lossless, stable SQL text
 * dump; hostile dumps refused), merge (the best record per key, with its
 * provenance, idempotent), stale records (shown, never selected), and the
 * ogtune commands end to end. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_ogtune.h"
#include "og_test.h"
#include "og_text.h"
#include "og_tmpdir.h"

#include "og_travel.h"
#include "og_tuner.h"

TestSuite(travel, .init = make_tmpdir, .fini = remove_tmpdir);

/* ---- building databases ---- */

static og_device_info make_device(uint32_t vendor, uint32_t device, uint32_t version,
                                  const char *name)
{
    og_device_info d;
    memset(&d, 0, sizeof d);
    d.vendor_id = vendor;
    d.device_id = device;
    d.driver_id = 1;
    d.driver_version = version;
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.driver_name, sizeof d.driver_name, "driver of %s", name);
    return d;
}

/* A record of the current tile template at m x 64 x 64 with the default parameters. */
static og_record tile_record(int64_t m, double gflops, int accepted)
{
    og_record r;
    memset(&r, 0, sizeof r);
    r.key = (og_record_key){"gemm", OG_F32, OG_MODE_FAST, 0, 0};
    r.m = m;
    r.n = r.k = 64;
    r.batch = 1;
    snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_TILE);
    r.template_hash = og_template_hash(OG_TEMPLATE_TILE);
    og_params p = og_params_default();
    og_params_format(&p, r.params, sizeof r.params);
    r.median_us = 100.0;
    r.gflops = gflops;
    r.samples = 5;
    r.max_error = accepted ? 1e-7 : 0.5;
    r.accepted = accepted;
    if (!accepted)
        snprintf(r.reason, sizeof r.reason, "max error 0.5 > 1e-05");
    r.created = 1700000000;
    return r;
}

/* The devices and records of the round-trip tests: awkward strings
 * (quotes, a newline, '--', UTF-8), doubles that decimal text rounds
 * (0.1, 1/3, the smallest subnormal, an infinite error), integers beyond a
 * double's 53 bits, a stale record with parameters of another version, and
 * a device without records. */
#define N_DEVICES 4
#define N_RECORDS 7

static og_device_info sample_device(int i)
{
    switch (i) {
    case 0: {
        og_device_info d = make_device(0x10005, 0, 1, "llvmpipe (LLVM 15.0.6, 256 bits)");
        snprintf(d.driver_info, sizeof d.driver_info, "Mesa 22.3.6 (LLVM 15.0.6)");
        snprintf(d.pipeline_cache_uuid, sizeof d.pipeline_cache_uuid,
                 "32322e332e36616161616161616161ff");
        return d;
    }
    case 1: {
        og_device_info d =
            make_device(0x1002, 0x73bf, UINT32_MAX, "Radeon 'RX' 6800 -- \xc3\xbc\nrev 2");
        snprintf(d.driver_info, sizeof d.driver_info, "Adrenalin '23.1' -- x"); /* no UUID */
        return d;
    }
    case 2:
        return make_device(0x10de, 0x2684, 7, "");
    default:
        return make_device(0x8086, 0x56a0, 3, "no records; name; DROP TABLE devices");
    }
}

/* Record i and the index of its device. */
static og_record sample_record(int i, int *device)
{
    og_record r = tile_record(256, 10.25, 1);
    *device = 0;
    switch (i) {
    case 0:
        r.median_us = 1234.5678901234567;
        r.max_error = 1.1920928955078125e-07;
        r.spread = 0.1;
        snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_DEVICE_LOCAL);
        break;
    case 1: /* the same key, another measurement */
        r.gflops = 0.1;
        r.median_us = 1.0 / 3.0;
        r.spread = 2.0 / 3.0;
        snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_DEVICE_LOCAL_MAPPED);
        snprintf(r.source, sizeof r.source, "vendor's 'pretuned' db");
        break;
    case 2:
        r = tile_record(256, 0.0, 0);
        r.median_us = 0.0;
        r.max_error = INFINITY;
        snprintf(r.reason, sizeof r.reason, "it's wrong; 'quoted'\nsecond line -- no comment");
        break;
    case 3: {
        og_params p = og_params_fewrows(1, 4096);
        r.key = (og_record_key){"gemm", OG_F16, OG_MODE_DETERMINISTIC, 1, 1};
        r.m = 1;
        r.n = 4096;
        r.k = 0;
        r.batch = UINT32_MAX;
        snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_FEWROWS);
        r.template_hash = og_template_hash(OG_TEMPLATE_FEWROWS);
        og_params_format(&p, r.params, sizeof r.params);
        r.created = INT64_C(9007199254740993); /* 2^53 + 1 */
        *device = 1;
        break;
    }
    case 4: {
        og_params p = og_params_int8_tile();
        r.key = (og_record_key){"int8gemm", OG_INT8, OG_MODE_FAST, 0, 1};
        snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_INT8_TILE);
        r.template_hash = og_template_hash(OG_TEMPLATE_INT8_TILE);
        og_params_format(&p, r.params, sizeof r.params);
        r.gflops = 1e300;
        r.median_us = 4.9406564584124654e-324;
        r.samples = INT32_MAX;
        r.spread = 1e300;
        snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_HOST_VISIBLE);
        *device = 1;
        break;
    }
    case 5: /* stale: a template version with other parameters */
        r.template_hash = UINT64_C(0x8000000000000001);
        snprintf(r.params, sizeof r.params, "bm=64,bn=64,oldkey=3");
        r.gflops = 2.5;
        *device = 1;
        break;
    default:
        r.key.dtype = OG_BF16;
        r.gflops = 123456789.123456789;
        r.max_error = 0.0078125;
        *device = 2;
        break;
    }
    return r;
}

static og_db *open_db(const char *path, int writable)
{
    og_db *db = NULL;
    char err[1024] = "";
    cr_assert_eq(og_db_open(path, writable, &db, err, sizeof err), OG_OK, "%s", err);
    return db;
}

static int64_t device_row(og_db *db, const og_device_info *dev)
{
    int64_t id = 0;
    char err[1024] = "";
    cr_assert_eq(og_db_device(db, dev, &id, err, sizeof err), OG_OK, "%s", err);
    return id;
}

static void insert(og_db *db, const og_device_info *dev, const og_record *rec)
{
    char err[1024] = "";
    cr_assert_eq(og_db_insert(db, device_row(db, dev), rec, err, sizeof err), OG_OK, "%s", err);
}

/* The sample database, devices and records stored in the order of order[]:
 * 0..N_RECORDS-1 a record, N_RECORDS the device without records. */
static void fill(const char *path, const int *order)
{
    og_db *db = open_db(path, 1);
    for (int i = 0; i < N_RECORDS + 1; i++) {
        int device;
        if (order[i] == N_RECORDS) {
            og_device_info d = sample_device(3);
            device_row(db, &d);
            continue;
        }
        og_record r = sample_record(order[i], &device);
        og_device_info d = sample_device(device);
        insert(db, &d, &r);
    }
    og_db_close(db);
}

/* ---- reading them back ---- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n < 2) {
            buf = realloc(buf, cap *= 2);
            cr_assert_not_null(buf);
        }
    }
    buf[n] = '\0';
    fclose(f);
    *len = n;
    return buf;
}

/* Exports the database db_path to out_path; returns the dump. */
static char *export_to(const char *db_path, const char *out_path, size_t *len)
{
    og_db *db = open_db(db_path, 0);
    FILE *f = fopen(out_path, "wb");
    cr_assert_not_null(f);
    char err[1024] = "";
    og_status st = og_export(db, f, NULL, err, sizeof err);
    og_db_close(db);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(st, OG_OK, "og_export: %s", err);
    return read_file(out_path, len);
}

typedef struct entry {
    og_device_info dev;
    og_record rec;
    int is_device; /* a device's own entry, before its records */
} entry;

typedef struct listing {
    entry *e;
    size_t n;
} listing;

static int collect(void *user, const og_device_info *dev, const og_record *rec)
{
    listing *l = user;
    entry *grown = realloc(l->e, (l->n + 1) * sizeof *grown);
    cr_assert_not_null(grown);
    l->e = grown;
    entry *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    e->dev = *dev;
    e->is_device = rec == NULL;
    if (rec != NULL)
        e->rec = *rec;
    return 0;
}

static listing walk(const char *path)
{
    listing l = {NULL, 0};
    og_db *db = open_db(path, 0);
    char err[1024] = "";
    cr_assert_eq(og_db_walk(db, collect, &l, err, sizeof err), OG_OK, "%s", err);
    og_db_close(db);
    return l;
}

static void same_double(double a, double b, const char *what, size_t i)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    cr_expect_eq(x, y, "entry %zu: %s %.17g (0x%016" PRIx64 ") != %.17g (0x%016" PRIx64 ")", i,
                 what, a, x, b, y);
}

/* Every field of every entry equal, doubles bit for bit. */
static void expect_same(const listing *a, const listing *b)
{
    cr_assert_eq(a->n, b->n, "%zu entries, then %zu", a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const entry *x = &a->e[i], *y = &b->e[i];
        cr_expect_eq(x->is_device, y->is_device, "entry %zu", i);
        cr_expect_eq(x->dev.vendor_id, y->dev.vendor_id, "entry %zu", i);
        cr_expect_eq(x->dev.device_id, y->dev.device_id, "entry %zu", i);
        cr_expect_eq(x->dev.driver_id, y->dev.driver_id, "entry %zu", i);
        cr_expect_eq(x->dev.driver_version, y->dev.driver_version, "entry %zu", i);
        cr_expect_str_eq(x->dev.name, y->dev.name, "entry %zu", i);
        cr_expect_str_eq(x->dev.driver_name, y->dev.driver_name, "entry %zu", i);
        cr_expect_str_eq(x->dev.driver_info, y->dev.driver_info, "entry %zu", i);
        cr_expect_str_eq(x->dev.pipeline_cache_uuid, y->dev.pipeline_cache_uuid, "entry %zu", i);
        const og_record *r = &x->rec, *s = &y->rec;
        cr_expect_str_eq(r->key.op, s->key.op, "entry %zu", i);
        cr_expect_eq(r->key.dtype, s->key.dtype, "entry %zu", i);
        cr_expect_eq(r->key.mode, s->key.mode, "entry %zu", i);
        cr_expect_eq(r->key.trans_a, s->key.trans_a, "entry %zu", i);
        cr_expect_eq(r->key.trans_b, s->key.trans_b, "entry %zu", i);
        cr_expect_eq(r->m, s->m, "entry %zu", i);
        cr_expect_eq(r->n, s->n, "entry %zu", i);
        cr_expect_eq(r->k, s->k, "entry %zu", i);
        cr_expect_eq(r->batch, s->batch, "entry %zu", i);
        cr_expect_str_eq(r->template_name, s->template_name, "entry %zu", i);
        cr_expect_eq(r->template_hash, s->template_hash, "entry %zu", i);
        cr_expect_str_eq(r->params, s->params, "entry %zu", i);
        same_double(r->median_us, s->median_us, "median_us", i);
        same_double(r->gflops, s->gflops, "gflops", i);
        cr_expect_eq(r->samples, s->samples, "entry %zu", i);
        same_double(r->spread, s->spread, "spread", i);
        cr_expect_str_eq(r->memory, s->memory, "entry %zu", i);
        same_double(r->max_error, s->max_error, "max_error", i);
        cr_expect_eq(r->accepted, s->accepted, "entry %zu", i);
        cr_expect_str_eq(r->reason, s->reason, "entry %zu", i);
        cr_expect_eq(r->created, s->created, "entry %zu", i);
        cr_expect_str_eq(r->source, s->source, "entry %zu", i);
    }
}

/* The entries of the sample set, in any order: every sample record and device is there. */
static void expect_samples(const listing *l)
{
    cr_assert_eq(l->n, N_DEVICES + N_RECORDS, "%zu entries", l->n);
    for (int i = 0; i < N_RECORDS; i++) {
        int device, found = 0;
        og_record want = sample_record(i, &device);
        for (size_t j = 0; j < l->n; j++)
            found += !l->e[j].is_device &&
                     l->e[j].dev.vendor_id == sample_device(device).vendor_id &&
                     memcmp(&l->e[j].rec.gflops, &want.gflops, sizeof want.gflops) == 0 &&
                     strcmp(l->e[j].rec.source, want.source) == 0 &&
                     memcmp(&l->e[j].rec.spread, &want.spread, sizeof want.spread) == 0 &&
                     strcmp(l->e[j].rec.memory, want.memory) == 0 &&
                     strcmp(l->e[j].rec.reason, want.reason) == 0;
        cr_expect_eq(found, 1, "sample record %d found %d times", i, found);
    }
}

/* ---- export and import ---- */

Test(travel, export_import_round_trip_is_lossless)
{
    static const int order[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    char a[512], b[512], dump_a[512], dump_b[512];
    tmp_path(a, sizeof a, "a.db");
    tmp_path(b, sizeof b, "b.db");
    tmp_path(dump_a, sizeof dump_a, "a.sql");
    tmp_path(dump_b, sizeof dump_b, "b.sql");
    fill(a, order);

    size_t len_a, len_b;
    char *text_a = export_to(a, dump_a, &len_a);
    og_travel_counts counts = {0, 0};
    char err[1024] = "";
    cr_assert_eq(og_import(dump_a, b, &counts, err, sizeof err), OG_OK, "og_import: %s", err);
    cr_expect_eq(counts.devices, N_DEVICES);
    cr_expect_eq(counts.records, N_RECORDS);

    listing la = walk(a), lb = walk(b);
    expect_samples(&la);
    expect_same(&la, &lb);
    char *text_b = export_to(b, dump_b, &len_b);
    cr_expect_eq(len_a, len_b, "export lengths %zu and %zu", len_a, len_b);
    cr_expect_eq(memcmp(text_a, text_b, len_a < len_b ? len_a : len_b), 0,
                 "the export of the imported database differs:\n%s\n----\n%s", text_a, text_b);

    /* No row ids: records name their device by its key. */
    cr_expect_not_null(strstr(text_a, "(SELECT id FROM devices WHERE vendor_id = 4098 AND"
                                      " device_id = 29631 AND driver_id = 1 AND"
                                      " driver_version = 4294967295 AND driver_info ="
                                      " 'Adrenalin ''23.1'' -- x' AND pipeline_cache_uuid = '')"),
                       "%s", text_a);
    cr_expect_not_null(strstr(text_a, " driver_name, driver_info, pipeline_cache_uuid) VALUES"
                                      " (65541, 0, 1, 1, 'llvmpipe (LLVM 15.0.6, 256 bits)',"
                                      " 'driver of llvmpipe (LLVM 15.0.6, 256 bits)',"
                                      " 'Mesa 22.3.6 (LLVM 15.0.6)',"
                                      " '32322e332e36616161616161616161ff');"),
                       "%s", text_a);
    cr_expect_null(strstr(text_a, "INSERT INTO records (id"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, "'vendor''s ''pretuned'' db'"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, "1e999"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, " reason, created, source, spread, memory) VALUES"), "%s",
                       text_a);
    cr_expect_not_null(strstr(text_a, ", 0.10000000000000001, 'device-local');"), "%s", text_a);
    free(text_a);
    free(text_b);
    free(la.e);
    free(lb.e);
}

Test(travel, export_order_ignores_insertion_order)
{
    static const int forward[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int backward[N_RECORDS + 1] = {7, 6, 5, 4, 3, 2, 1, 0};
    static const int shuffled[N_RECORDS + 1] = {4, 2, 7, 6, 0, 5, 1, 3};
    const int *orders[] = {forward, backward, shuffled};
    char *first = NULL;
    size_t first_len = 0;
    for (int i = 0; i < 3; i++) {
        char db[512], out[512], name[32];
        snprintf(name, sizeof name, "order%d.db", i);
        tmp_path(db, sizeof db, name);
        snprintf(name, sizeof name, "order%d.sql", i);
        tmp_path(out, sizeof out, name);
        fill(db, orders[i]);
        size_t len;
        char *text = export_to(db, out, &len);
        if (first == NULL) {
            first = text;
            first_len = len;
            continue;
        }
        cr_expect_eq(len, first_len, "order %d: %zu bytes, not %zu", i, len, first_len);
        cr_expect_eq(memcmp(text, first, len < first_len ? len : first_len), 0,
                     "order %d exports:\n%s\n---- instead of:\n%s", i, text, first);
        free(text);
    }
    /* Devices by key: llvmpipe (0x10005) after AMD (0x1002), NVIDIA (0x10de) and Intel (0x8086). */
    const char *amd = strstr(first, "(4098, 29631");
    const char *nvidia = strstr(first, "(4318, 9860");
    const char *intel = strstr(first, "(32902, 22176");
    const char *llvmpipe = strstr(first, "(65541, 0");
    cr_expect(amd && nvidia && intel && llvmpipe && amd < nvidia && nvidia < intel &&
                  intel < llvmpipe,
              "devices out of order:\n%s", first);
    free(first);
}

#define GOOD_PARAMS                                                                                \
    "'bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo'"

/* A dump written by hand in the format of og_travel.h: one device, then
 * the given lines. */
static const char hand_device[] =
    "INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name, driver_name)"
    " VALUES (4098, 29631, 1, 8388608, 'GPU', 'radv');\n";

/* A record line of that device with the given gflops and params literals,
 * in the format of schema version 3 (no spread or memory). */
static void hand_record(char *buf, size_t len, const char *gflops, const char *params)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source) VALUES ((SELECT id FROM devices WHERE"
             " vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608), 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1,"
             " 'gemm_tile', '%016" PRIx64 "', %s, 100, %s, 3, 0, 1, '', 1700000000, '');\n",
             og_template_hash(OG_TEMPLATE_TILE), params, gflops);
}

/* A record line of that device as og_export writes it now, with the given
 * spread and memory literals. */
static void hand_record_v4(char *buf, size_t len, const char *spread, const char *memory)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source, spread, memory) VALUES ((SELECT id FROM devices"
             " WHERE vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608), 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1,"
             " 'gemm_tile', '%016" PRIx64 "', " GOOD_PARAMS ", 100, 8.5, 3, 0, 1, '', 1700000000,"
             " '', %s, %s);\n",
             og_template_hash(OG_TEMPLATE_TILE), spread, memory);
}

/* A device and a record line as og_export writes them now: the device of
 * hand_device, but of the driver build with the given driver info and
 * pipeline cache UUID literals, and a record of it with the given gflops. */
static void hand_device_v5(char *buf, size_t len, const char *info, const char *uuid)
{
    snprintf(buf, len,
             "INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
             " driver_name, driver_info, pipeline_cache_uuid) VALUES (4098, 29631, 1, 8388608,"
             " 'GPU', 'radv', %s, %s);\n",
             info, uuid);
}

static void hand_record_v5(char *buf, size_t len, const char *info, const char *uuid,
                           const char *gflops)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source, spread, memory) VALUES ((SELECT id FROM devices"
             " WHERE vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608 AND driver_info = %s AND pipeline_cache_uuid = %s),"
             " 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1, 'gemm_tile', '%016" PRIx64
             "', " GOOD_PARAMS ", 100, %s, 3, 0, 1, '', 1700000000, '', 0.5, 'device-local');\n",
             info, uuid, og_template_hash(OG_TEMPLATE_TILE), gflops);
}

/* buf, formatted: a dump of the hostile cases. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static const char *
compose(char buf[4096], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, 4096, fmt, ap);
    va_end(ap);
    return buf;
}

Test(travel, hand_written_dump_imports)
{
    char dump[512], db[512], rec[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "hand.sql");
    tmp_path(db, sizeof db, "hand.db");
    hand_record(rec, sizeof rec, "7.5", GOOD_PARAMS);
    /* Keywords in any case, other spacing and comments are SQL too. */
    snprintf(text, sizeof text, "-- by hand\nbegin ;\n%s\n%s  -- the record\ncommit;\n-- end\n",
             hand_device, rec);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.records, 1);
    listing l = walk(db);
    cr_assert_eq(l.n, 2);
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect_str_eq(l.e[0].dev.name, "GPU");
    free(l.e);
}

/* A dump of schema version 3 (records without spread and memory) imports:
 * spread 0, memory unknown; one may even mix both formats. */
Test(travel, dumps_without_spread_and_memory_import)
{
    char dump[512], db[512], old[2048], now[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "mixed.sql");
    tmp_path(db, sizeof db, "mixed.db");
    hand_record(old, sizeof old, "7.5", GOOD_PARAMS);
    hand_record_v4(now, sizeof now, "0.125", "'host-visible'");
    snprintf(text, sizeof text, "BEGIN;\n%s%s%sCOMMIT;\n", hand_device, old, now);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.records, 2);
    listing l = walk(db);
    cr_assert_eq(l.n, 3);
    /* In key order: the params tie, then 7.5 GFLOP/s before 8.5. */
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect_eq(l.e[1].rec.spread, 0.0);
    cr_expect_str_eq(l.e[1].rec.memory, "");
    cr_expect_eq(l.e[2].rec.gflops, 8.5);
    cr_expect_eq(l.e[2].rec.spread, 0.125);
    cr_expect_str_eq(l.e[2].rec.memory, OG_DB_MEMORY_HOST_VISIBLE);
    free(l.e);
}

/* A dump of schema version 4 or before (devices without driver info and
 * pipeline cache UUID, records naming their device by four numbers)
 * imports with both unknown; beside it in the same dump, a device of the
 * same four numbers with a known driver build is another device, and the
 * records of each find their own. */
Test(travel, dumps_without_driver_builds_import)
{
    char dump[512], db[512], old[2048], dev5[1024], rec5[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "builds.sql");
    tmp_path(db, sizeof db, "builds.db");
    hand_record(old, sizeof old, "7.5", GOOD_PARAMS);
    hand_device_v5(dev5, sizeof dev5, "'Mesa 24.2.8'", "'32342e322e38616161616161616161ff'");
    hand_record_v5(rec5, sizeof rec5, "'Mesa 24.2.8'", "'32342e322e38616161616161616161ff'", "9.5");
    snprintf(text, sizeof text, "BEGIN;\n%s%s%s%sCOMMIT;\n", hand_device, old, dev5, rec5);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.devices, 2);
    cr_expect_eq(counts.records, 2);
    listing l = walk(db);
    cr_assert_eq(l.n, 4);
    /* In key order: the unknown build ("") first. */
    cr_expect(l.e[0].is_device);
    cr_expect_str_eq(l.e[0].dev.driver_info, "");
    cr_expect_str_eq(l.e[0].dev.pipeline_cache_uuid, "");
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect(l.e[2].is_device);
    cr_expect_str_eq(l.e[2].dev.driver_info, "Mesa 24.2.8");
    cr_expect_str_eq(l.e[2].dev.pipeline_cache_uuid, "32342e322e38616161616161616161ff");
    cr_expect_eq(l.e[3].rec.gflops, 9.5);
    free(l.e);
}

/* The shipped dumps (db/pretuned) import as they are: records measured
 * before schema version 4 (spread 0, memory '') beside newer ones, which
 * say where they were measured; and every record is of the templates as
 * they are (a stale record is never selected, so a template change must
 * measure the shipped records again, or re-stamp them where the kernels'
 * code is unchanged: db/pretuned/README.md). */
/* Each shipped dump: Mesa 22.3.6's lavapipe, and Mesa 26's (the second
 * driver lane). */
static void check_pretuned_dump(const char *name)
{
    char db[512], path[512], err[1024] = "";
    tmp_path(db, sizeof db, name);
    snprintf(path, sizeof path, "%s/%s", OG_PRETUNED_SQL, name);
    og_travel_counts counts = {0, 0};
    cr_assert_eq(og_import(path, db, &counts, err, sizeof err), OG_OK, "%s: %s", path, err);
    cr_expect_gt(counts.records, 0, "%s", name);
    listing l = walk(db);
    for (size_t i = 0; i < l.n; i++) {
        if (l.e[i].is_device)
            continue;
        const og_record *r = &l.e[i].rec;
        cr_expect(og_db_memory_known(r->memory) && r->spread >= 0, "entry %zu: '%s', spread %g", i,
                  r->memory, r->spread);
        cr_expect(r->memory[0] != '\0' || r->spread == 0.0, "entry %zu: a spread without a memory",
                  i);
        cr_expect_eq(r->template_hash, og_template_hash(r->template_name),
                     "entry %zu (%s %s): stale, measured with another version of %s", i,
                     r->template_name, r->params, r->template_name);
    }
    free(l.e);
}

Test(travel, pretuned_dumps_import)
{
    check_pretuned_dump("llvmpipe.sql");
    check_pretuned_dump("llvmpipe-mesa26.sql");
}

/* The user's default database is made where XDG_CACHE_HOME says although
 * none of its directories exist yet (a fresh account has no ~/.cache). */
Test(travel, default_database_directories_are_made)
{
    char cache[512], db[600], args[1024], *out;
    tmp_path(cache, sizeof cache, "fresh/account/.cache");
    snprintf(db, sizeof db, "%s/onegpu/tuning.db", cache);
    char *saved = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    setenv("XDG_CACHE_HOME", cache, 1);
    snprintf(args, sizeof args, "import '%s/llvmpipe.sql' 2>&1", OG_PRETUNED_SQL);
    int rc = ogtune(args, &out);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
    cr_expect_eq(rc, 0, "%s", out);
    free(out);
    struct stat st;
    cr_expect_eq(stat(db, &st), 0, "no %s", db);
}

Test(travel, hostile_dumps_are_refused_without_change)
{
    char good[2048], text_gflops[2048], sql_params[2048], absurd_params[2048], call[2048];
    hand_record(good, sizeof good, "7.5", GOOD_PARAMS);
    hand_record(text_gflops, sizeof text_gflops, "'7.5'", GOOD_PARAMS);
    hand_record(sql_params, sizeof sql_params, "7.5", "'bm=64''); DROP TABLE records; --'");
    hand_record(absurd_params, sizeof absurd_params, "7.5",
                "'bm=9999,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,"
                "vec=1,src=ssbo'");
    hand_record(call, sizeof call, "randomblob(100)", GOOD_PARAMS);
    char vram[2048], negative[2048], nan_word[2048], nan_text[2048], infinite[2048];
    hand_record_v4(vram, sizeof vram, "0", "'vram'");
    hand_record_v4(negative, sizeof negative, "-1", "'device-local'");
    hand_record_v4(nan_word, sizeof nan_word, "NaN", "'device-local'");
    hand_record_v4(nan_text, sizeof nan_text, "'NaN'", "'device-local'");
    hand_record_v4(infinite, sizeof infinite, "1e999", "'device-local'");
    /* The columns of version 4 with the values of version 3. */
    char short_values[2048];
    hand_record(short_values, sizeof short_values, "7.5", GOOD_PARAMS);
    char *at = strstr(short_values, "source)");
    cr_assert_not_null(at);
    memmove(at + strlen("source, spread, memory)"), at + strlen("source)"),
            strlen(at + strlen("source)")) + 1);
    memcpy(at, "source, spread, memory)", strlen("source, spread, memory)"));

    /* A 10 MB device name. */
    size_t huge_len = 10u << 20;
    char *huge = malloc(huge_len + 1024);
    cr_assert_not_null(huge);
    int head = snprintf(huge, 1024,
                        "BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id,"
                        " driver_version, name, driver_name) VALUES (1, 2, 3, 4, '");
    memset(huge + head, 'A', huge_len);
    snprintf(huge + head + huge_len, 1024 - (size_t)head, "', 'x');\nCOMMIT;\n");

    char buf[20][4096], other_build[2048];
    hand_record_v5(other_build, sizeof other_build, "'Mesa 24'", "''", "7.5");
    const struct {
        const char *text, *expect; /* the dump, and what the message names */
    } cases[] = {
        {compose(buf[0], "BEGIN;\n%sDROP TABLE records;\n%sCOMMIT;\n", hand_device, good),
         "line 3: 'DROP'"},
        {compose(buf[1], "BEGIN;\nATTACH DATABASE 'evil.db' AS evil;\n%s%sCOMMIT;\n", hand_device,
                 good),
         "line 2: 'ATTACH'"},
        {huge, "line 2: a string longer than 255 bytes"},
        {compose(buf[2], "BEGIN;\n%s%sCOMMIT;\n", hand_device, text_gflops),
         "line 3: gflops: expected a number, found a string"},
        {compose(buf[3], "BEGIN;\n%s%sCOMMIT;\n", hand_device, sql_params),
         "line 3: record: template name or params"},
        {compose(buf[4], "BEGIN;\n%s%sCOMMIT;\n", hand_device, absurd_params),
         "line 3: record: params: bm=9999"},
        {compose(buf[5], "BEGIN;\n%sINSERT INTO users (name) VALUES ('root');\nCOMMIT;\n",
                 hand_device),
         "line 3: unknown table 'users'"},
        {compose(buf[6], "BEGIN;\n%s%s", hand_device, good), "ends without COMMIT"},
        {compose(buf[7], "BEGIN;\n%s%sCOMMIT;\n", good, hand_device),
         "line 2: record of device 4098:29631:1:8388608 before"},
        {compose(buf[8], "BEGIN;\n%s%sCOMMIT;\n", hand_device, call), "line 3: expected a value"},
        {compose(buf[9], "BEGIN;\n%s%sCOMMIT;\nDELETE FROM records;\n", hand_device, good),
         "line 5: 'DELETE' after COMMIT"},
        {compose(buf[10], "BEGIN;\n%s%s%sCOMMIT;\n", hand_device, hand_device, good),
         "line 3: device 4098:29631:1:8388608 again"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name, id) VALUES (1, 2, 3, 4, 'a', 'b', 5);\nCOMMIT;\n",
         "line 2: expected 'driver_info', found 'id'"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name, driver_info, pipeline_cache_uuid) VALUES (1, 2, 3, 4, 'a', 'b', 'c',"
         " '32322E332E36616161616161616161FF');\nCOMMIT;\n",
         "line 2: pipeline_cache_uuid: '32322E332E36616161616161616161FF' is not 32 lowercase"
         " hex digits"},
        {compose(buf[19], "BEGIN;\n%s%sCOMMIT;\n", hand_device, other_build),
         "line 3: record of device 4098:29631:1:8388608 (driver info 'Mesa 24', pipeline cache"
         " UUID '') before its INSERT INTO devices"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name) VALUES (-1, 2, 3, 4, 'a', 'b');\nCOMMIT;\n",
         "line 2: vendor_id: -1 is not in 0..4294967295"},
        {"BEGIN;\nSELECT load_extension('evil.so');\nCOMMIT;\n", "line 2: 'SELECT'"},
        {"BEGIN;\n\x01\nCOMMIT;\n", "line 2: unexpected byte 0x01"},
        {compose(buf[12], "BEGIN;\n%s%sCOMMIT;\n", hand_device, vram),
         "line 3: record: memory 'vram' is not device-local, device-local-mapped, host-visible"},
        {compose(buf[13], "BEGIN;\n%s%sCOMMIT;\n", hand_device, negative),
         "line 3: record: spread -1 is negative or not finite"},
        {compose(buf[14], "BEGIN;\n%s%sCOMMIT;\n", hand_device, nan_word),
         "line 3: expected a value (a number or a string), found 'NaN'"},
        {compose(buf[15], "BEGIN;\n%s%sCOMMIT;\n", hand_device, nan_text),
         "line 3: spread: expected a number, found a string"},
        {compose(buf[16], "BEGIN;\n%s%sCOMMIT;\n", hand_device, infinite),
         "line 3: record: spread inf is negative or not finite"},
        {compose(buf[17], "BEGIN;\n%s%sCOMMIT;\n", hand_device, short_values),
         "line 3: expected ',', found ')'"},
        {compose(buf[18],
                 "BEGIN;\n%sINSERT INTO records (device, op, dtype, mode, trans_a,"
                 " trans_b, m, n, k, batch, template_name, template_hash, params,"
                 " median_us, gflops, samples, max_error, accepted, reason, created,"
                 " source memory) VALUES (1);\nCOMMIT;\n",
                 hand_device),
         "line 3: expected ',' or ')', found 'memory'"},
        {"", "line 1: expected 'BEGIN', found the end of the file"},
    };

    char target[512], before_path[512], after_path[512], missing[512], dump[512];
    tmp_path(target, sizeof target, "target.db");
    tmp_path(before_path, sizeof before_path, "before.sql");
    tmp_path(after_path, sizeof after_path, "after.sql");
    tmp_path(missing, sizeof missing, "never-created.db");
    tmp_path(dump, sizeof dump, "hostile.sql");
    static const int order[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    fill(target, order);
    size_t before_len;
    char *before = export_to(target, before_path, &before_len);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(dump, cases[i].text);
        char err[1024] = "";
        og_travel_counts counts = {0, 0};
        og_status st = og_import(dump, target, &counts, err, sizeof err);
        cr_expect_eq(st, OG_ERROR_DATABASE, "case %zu imported (status %d)", i, st);
        cr_expect_not_null(strstr(err, cases[i].expect), "case %zu: message \"%s\" lacks \"%s\"", i,
                           err, cases[i].expect);
        cr_expect_not_null(strstr(err, dump), "case %zu: message \"%s\" does not name the file", i,
                           err);
        size_t after_len;
        char *after = export_to(target, after_path, &after_len);
        cr_expect(after_len == before_len && memcmp(after, before, before_len) == 0,
                  "case %zu changed the database", i);
        free(after);

        /* A refused dump creates no database either. */
        cr_expect_neq(og_import(dump, missing, &counts, err, sizeof err), OG_OK);
        cr_expect_neq(access(missing, F_OK), 0, "case %zu created %s", i, missing);
    }
    free(before);
    free(huge);
}

/* ---- merge ---- */

/* The record of m in a listing, and how many it holds. */
static const og_record *find_m(const listing *l, int64_t m, int *count)
{
    const og_record *found = NULL;
    *count = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!l->e[i].is_device && l->e[i].rec.m == m) {
            found = &l->e[i].rec;
            (*count)++;
        }
    return found;
}

static void merge(const char *dst, const char *const *srcs, size_t n, og_merge_count *counts)
{
    char err[1024] = "";
    cr_assert_eq(og_merge(dst, srcs, n, counts, err, sizeof err), OG_OK, "og_merge: %s", err);
}

Test(travel, merge_keeps_the_best_record_with_its_source)
{
    char dst[512], src1[512], src2[512], tie[512], out1[512], out2[512];
    tmp_path(dst, sizeof dst, "dst.db");
    tmp_path(src1, sizeof src1, "src1.db");
    tmp_path(src2, sizeof src2, "src2.db");
    tmp_path(tie, sizeof tie, "tie.db");
    tmp_path(out1, sizeof out1, "out1.sql");
    tmp_path(out2, sizeof out2, "out2.sql");
    og_device_info dev = make_device(0x1002, 0x73bf, 5, "GPU");
    /* Keys by M: 1 faster in src1; 2 rejected in dst, accepted in src1; 3
     * rejected in src1, accepted in src2; 4 already merged from elsewhere;
     * 5 rejected everywhere; 6 only in dst. */
    og_db *db = open_db(dst, 1);
    og_record r = tile_record(1, 10.0, 1);
    insert(db, &dev, &r);
    r = tile_record(2, 0.0, 0);
    insert(db, &dev, &r);
    r = tile_record(6, 1.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);

    db = open_db(src1, 1);
    r = tile_record(1, 20.0, 1);
    r.spread = 0.0625;
    snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_DEVICE_LOCAL);
    insert(db, &dev, &r);
    r = tile_record(2, 5.0, 1);
    insert(db, &dev, &r);
    r = tile_record(3, 0.0, 0);
    insert(db, &dev, &r);
    r = tile_record(4, 7.0, 1);
    snprintf(r.source, sizeof r.source, "origin.db");
    insert(db, &dev, &r);
    og_db_close(db);

    db = open_db(src2, 1);
    r = tile_record(1, 15.0, 1);
    insert(db, &dev, &r);
    r = tile_record(3, 3.0, 1);
    insert(db, &dev, &r);
    r = tile_record(5, 0.0, 0);
    insert(db, &dev, &r);
    og_db_close(db);

    const char *srcs[] = {src1, src2};
    og_merge_count counts[2];
    merge(dst, srcs, 2, counts);
    cr_expect_eq(counts[0].records, 4);
    cr_expect_eq(counts[0].stored, 4);
    cr_expect_eq(counts[1].records, 3);
    cr_expect_eq(counts[1].stored, 2, "src2 stored %zu (its M = 1 is slower)", counts[1].stored);

    listing l = walk(dst);
    int n;
    const og_record *k1 = find_m(&l, 1, &n);
    cr_assert_eq(n, 1, "M = 1: %d records", n);
    cr_expect_eq(k1->gflops, 20.0);
    cr_expect_str_eq(k1->source, src1);
    cr_expect_eq(k1->spread, 0.0625, "the winner's spread");
    cr_expect_str_eq(k1->memory, OG_DB_MEMORY_DEVICE_LOCAL, "the winner's memory");
    const og_record *k2 = find_m(&l, 2, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(k2->accepted, 1, "an accepted record replaces a rejected one");
    cr_expect_str_eq(k2->source, src1);
    const og_record *k3 = find_m(&l, 3, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(k3->accepted, 1);
    cr_expect_eq(k3->gflops, 3.0);
    cr_expect_str_eq(k3->source, src2);
    const og_record *k4 = find_m(&l, 4, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(k4->source, "origin.db", "a record keeps where it came from first");
    const og_record *k5 = find_m(&l, 5, &n);
    cr_assert_eq(n, 1, "a rejected record is kept when its key has no accepted one");
    cr_expect_eq(k5->accepted, 0);
    cr_expect_str_eq(k5->source, src2);
    const og_record *k6 = find_m(&l, 6, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(k6->source, "", "dst's own record is untouched");
    free(l.e);

    /* Idempotent: the same sources again, and a source that only ties, change nothing. */
    size_t len1, len2;
    char *before = export_to(dst, out1, &len1);
    merge(dst, srcs, 2, counts);
    cr_expect_eq(counts[0].stored + counts[1].stored, 0);
    db = open_db(tie, 1);
    r = tile_record(1, 20.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    const char *ties[] = {tie};
    merge(dst, ties, 1, counts);
    cr_expect_eq(counts[0].stored, 0, "a tie replaced the stored record");
    char *after = export_to(dst, out2, &len2);
    cr_expect(len1 == len2 && memcmp(before, after, len1) == 0,
              "merging again changed the database:\n%s\n----\n%s", before, after);
    free(before);
    free(after);
}

Test(travel, merge_refuses_a_bad_record_without_change)
{
    char dst[512], good[512], bad[512], out1[512], out2[512];
    tmp_path(dst, sizeof dst, "dst.db");
    tmp_path(good, sizeof good, "good.db");
    tmp_path(bad, sizeof bad, "bad.db");
    tmp_path(out1, sizeof out1, "out1.sql");
    tmp_path(out2, sizeof out2, "out2.sql");
    og_device_info dev = make_device(0x1002, 0x73bf, 5, "GPU");
    og_db *db = open_db(dst, 1);
    og_record r = tile_record(1, 10.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    db = open_db(good, 1);
    r = tile_record(2, 10.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    db = open_db(bad, 1);
    r = tile_record(3, 10.0, 1);
    snprintf(r.params, sizeof r.params, "bm=64'); DROP TABLE records; --");
    insert(db, &dev, &r);
    og_db_close(db);

    size_t len1, len2;
    char *before = export_to(dst, out1, &len1);
    const char *srcs[] = {good, bad};
    og_merge_count counts[2];
    char err[1024] = "";
    cr_expect_eq(og_merge(dst, srcs, 2, counts, err, sizeof err), OG_ERROR_DATABASE);
    cr_expect_not_null(strstr(err, bad), "message \"%s\" does not name the source", err);
    char *after = export_to(dst, out2, &len2);
    cr_expect(len1 == len2 && memcmp(before, after, len1) == 0,
              "a refused merge changed the database (the good source's record too)");
    free(before);
    free(after);
}

/* ---- stale records ---- */

Test(travel, stale_records_are_shown_and_never_selected, .timeout = 120)
{
    char path[512], args[1200];
    tmp_path(path, sizeof path, "stale.db");
    og_context *ctx = NULL;
    og_context_desc desc = {.tuning_db = path};
    cr_assert_eq(og_context_create(&desc, &ctx), OG_OK, "%s", og_last_error());

    /* Exact shape, accepted, far faster, other parameters: but stale. */
    og_record stale = tile_record(256, 1e6, 1);
    stale.n = stale.k = 256;
    stale.template_hash ^= 1;
    og_params p = og_params_default();
    p.split = 2;
    og_params_format(&p, stale.params, sizeof stale.params);
    og_db *db = open_db(path, 1);
    insert(db, &ctx->info, &stale);
    og_db_close(db);
    cr_expect_eq(og_record_stale(&stale), 1);

    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "a stale record was selected");

    /* A current record, slower, is selected over it. */
    og_record current = tile_record(256, 1.0, 1);
    current.n = current.k = 256;
    p.split = 1;
    og_params_format(&p, current.params, sizeof current.params);
    db = open_db(path, 1);
    insert(db, &ctx->info, &current);
    og_db_close(db);
    cr_expect_eq(og_record_stale(&current), 0);
    close_context(ctx);
    cr_assert_eq(og_context_create(&desc, &ctx), OG_OK, "%s", og_last_error());
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_eq(c.gflops, 1.0, "selected the record of %g GFLOP/s", c.gflops);
    cr_expect_eq(c.params.split, 1);
    close_context(ctx);

    char *out;
    snprintf(args, sizeof args, "show --json --db '%s'", path);
    cr_assert_eq(ogtune(args, &out), 0);
    const char *first = strstr(out, "\"stale\":true");
    cr_expect_not_null(first, "no stale record in:\n%s", out);
    cr_expect(first == NULL || strstr(first + 1, "\"stale\":true") == NULL,
              "two stale records in:\n%s", out);
    cr_expect_not_null(strstr(out, "\"stale\":false"), "no current record in:\n%s", out);
    cr_expect_not_null(strstr(out, "split=2\",\"median_us\""), "%s", out);
    free(out);
    snprintf(args, sizeof args, "show --db '%s'", path);
    cr_assert_eq(ogtune(args, &out), 0);
    const char *line = strstr(out, "split=2");
    cr_expect(line != NULL && strstr(line, "stale") != NULL &&
                  strstr(line, "stale") < strchr(line, '\n'),
              "the stale record is not marked:\n%s", out);
    line = strstr(out, "split=1");
    cr_expect(line != NULL &&
                  (strstr(line, "stale") == NULL || strstr(line, "stale") > strchr(line, '\n')),
              "the current record is marked stale:\n%s", out);
    free(out);
}

/* ---- the ogtune commands ---- */

Test(travel, ogtune_export_import_merge, .timeout = 120)
{
    char a[512], b[512], c[512], dump[512], hostile[512], args[2048];
    tmp_path(a, sizeof a, "a.db");
    tmp_path(b, sizeof b, "b.db");
    tmp_path(c, sizeof c, "c.db");
    tmp_path(dump, sizeof dump, "a.sql");
    tmp_path(hostile, sizeof hostile, "hostile.sql");
    static const int order[N_RECORDS + 1] = {3, 1, 4, 7, 5, 0, 2, 6};
    fill(a, order);
    char *out;

    snprintf(args, sizeof args, "export --db '%s' --out '%s'", a, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "exported 7 records of 4 devices"), "%s", out);
    free(out);

    snprintf(args, sizeof args, "import '%s' --db '%s' --json", dump, b);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "\"devices\":4,\"records\":7}"), "%s", out);
    free(out);

    /* The export of the imported database, on stdout, is the dump itself. */
    size_t len;
    char *text = read_file(dump, &len);
    snprintf(args, sizeof args, "export --db '%s'", b);
    cr_assert_eq(ogtune(args, &out), 0);
    cr_expect_str_eq(out, text);
    free(out);
    free(text);

    snprintf(args, sizeof args, "merge '%s' --db '%s'", a, c);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    /* Every record was stored when it came: the key of samples 0 to 2 took the rejected
     * one, then sample 1, then sample 0, the best. */
    cr_expect_not_null(strstr(out, ": 7 records, 7 stored"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "merge '%s' '%s' --db '%s' --json", a, b, c);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "\"records\":7,\"stored\":0},{\"source\":"), "%s", out);
    cr_expect_not_null(strstr(out, "\"records\":7,\"stored\":0}]}"), "%s", out);
    free(out);

    /* Provenance shows: the records merged from a name it. */
    snprintf(args, sizeof args, "show --db '%s'", c);
    cr_assert_eq(ogtune(args, &out), 0);
    char from[600];
    snprintf(from, sizeof from, "(from %s)", a);
    cr_expect_not_null(strstr(out, from), "%s", out);
    cr_expect_not_null(strstr(out, "stale"), "%s", out);
    /* The timed calls: how many, their spread and the memory (sample 0 won its key). */
    cr_expect_not_null(strstr(out, " us (x5, spread 10.0%, device-local), "), "%s", out);
    free(out);
    snprintf(args, sizeof args, "show --db '%s' --json", c);
    cr_assert_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"samples\":5,\"spread\":0.1,\"memory\":\"device-local\","),
                       "%s", out);
    free(out);

    /* A hostile dump: refused with the line, exit status 1. */
    write_text(hostile, "BEGIN;\nDROP TABLE records;\nCOMMIT;\n");
    snprintf(args, sizeof args, "import '%s' --db '%s' 2>&1", hostile, b);
    cr_expect_eq(ogtune(args, &out), 1);
    cr_expect_not_null(strstr(out, "ogtune import: "), "%s", out);
    cr_expect_not_null(strstr(out, "line 2: 'DROP'"), "%s", out);
    free(out);

    /* Wrong arguments. */
    static const char *const wrong[] = {"import 2>/dev/null", "merge --db x.db 2>/dev/null",
                                        "import a.sql b.sql 2>/dev/null",
                                        "export --json 2>/dev/null", "show extra 2>/dev/null"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        cr_expect_eq(ogtune(wrong[i], &out), 2, "ogtune %s", wrong[i]);
        free(out);
    }
}

/* ---- pre-tuned databases ---- */

/* An accepted 256 cubed record for this device with split = ranges, in a
 * database at path (created). */
static void plant(const char *path, const og_device_info *dev, int ranges)
{
    og_record r = tile_record(256, 5.0, 1);
    r.n = r.k = 256;
    og_params p = og_params_default();
    p.split = ranges;
    og_params_format(&p, r.params, sizeof r.params);
    og_db *db = open_db(path, 1);
    insert(db, dev, &r);
    og_db_close(db);
}

static int selected_split(og_choice *c)
{
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, c), OG_OK);
    close_context(ctx);
    return c->source == OG_SOURCE_DB ? c->params.split : -1;
}

/* Without OG_TUNING_DB, the runtime searches the user's cache, then the
 * pre-tuned databases (OG_PRETUNED_DIR standing for the install prefix's
 * share/onegpu); OG_TUNING_DB replaces both. */
Test(travel, pretuned_databases_after_the_user_cache, .timeout = 120)
{
    char cache[512], pretuned[512], user_db[600], shipped[600], other[512];
    tmp_path(cache, sizeof cache, "cache");
    tmp_path(pretuned, sizeof pretuned, "share");
    tmp_path(other, sizeof other, "other.db");
    cr_assert_eq(mkdir(cache, 0700), 0);
    cr_assert_eq(mkdir(pretuned, 0700), 0);
    snprintf(user_db, sizeof user_db, "%s/onegpu", cache);
    cr_assert_eq(mkdir(user_db, 0700), 0);
    snprintf(user_db, sizeof user_db, "%s/onegpu/tuning.db", cache);
    snprintf(shipped, sizeof shipped, "%s/llvmpipe.db", pretuned);
    char *saved_cache = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_db = getenv("OG_TUNING_DB") ? strdup(getenv("OG_TUNING_DB")) : NULL;
    char *saved_dir = getenv("OG_PRETUNED_DIR") ? strdup(getenv("OG_PRETUNED_DIR")) : NULL;
    setenv("XDG_CACHE_HOME", cache, 1);
    setenv("OG_PRETUNED_DIR", pretuned, 1);
    unsetenv("OG_TUNING_DB");

    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    og_device_info dev = ctx->info;
    close_context(ctx);
    og_choice c;
    cr_expect_eq(selected_split(&c), -1, "nothing tuned yet");
    plant(shipped, &dev, 3);
    cr_expect_eq(selected_split(&c), 3, "the pre-tuned database is searched");
    cr_expect_str_eq(c.db_path, shipped);
    plant(user_db, &dev, 5);
    cr_expect_eq(selected_split(&c), 5, "the user's cache comes first");
    plant(other, &dev, 7);
    setenv("OG_TUNING_DB", other, 1);
    cr_expect_eq(selected_split(&c), 7, "OG_TUNING_DB replaces both");

    if (saved_dir)
        setenv("OG_PRETUNED_DIR", saved_dir, 1);
    else
        unsetenv("OG_PRETUNED_DIR");
    if (saved_cache)
        setenv("XDG_CACHE_HOME", saved_cache, 1);
    if (saved_db)
        setenv("OG_TUNING_DB", saved_db, 1);
    else
        unsetenv("OG_TUNING_DB");
    free(saved_cache);
    free(saved_db);
    free(saved_dir);
}

/* ogtune select --json names the driver build a record was measured on and
 * the rule that let it in: "same" for this device's own build, "other" for
 * another build of its driver (here the Mesa upgrade: the same driver
 * version, another driver info); a record of another device is never used,
 * so the choice is the default and has no driver. */
Test(travel, select_json_reports_the_records_driver, .timeout = 120)
{
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    og_device_info mine = ctx->info;
    close_context(ctx);
    og_device_info upgraded = mine, other_device = mine;
    snprintf(upgraded.driver_info, sizeof upgraded.driver_info, "Mesa 99.0.0 (LLVM 42.0.0)");
    other_device.device_id += 1;

    static const struct {
        const char *name;
        int which; /* 0 mine, 1 upgraded, 2 other_device */
    } cases[] = {{"same.db", 0}, {"upgraded.db", 1}, {"other-device.db", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const og_device_info *dev = cases[i].which == 0   ? &mine
                                    : cases[i].which == 1 ? &upgraded
                                                          : &other_device;
        char db[512], args[1024], want[1024];
        tmp_path(db, sizeof db, cases[i].name);
        plant(db, dev, 3);
        snprintf(args, sizeof args,
                 "select --shape 256x256x256 --dtype f32 --json --db '%s' 2>/dev/null", db);
        char *out = NULL;
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        if (cases[i].which == 2) {
            cr_expect_not_null(strstr(out, "\"source\":\"default\""), "%s:\n%s", cases[i].name,
                               out);
            cr_expect_null(strstr(out, "\"driver\":"), "%s:\n%s", cases[i].name, out);
        } else {
            snprintf(want, sizeof want,
                     "\"driver\":{\"rule\":\"%s\",\"version\":%u,\"info\":\"%s\","
                     "\"pipeline_cache_uuid\":\"%s\"}",
                     cases[i].which == 0 ? "same" : "other", dev->driver_version, dev->driver_info,
                     dev->pipeline_cache_uuid);
            cr_expect_not_null(strstr(out, "\"source\":\"db\""), "%s:\n%s", cases[i].name, out);
            cr_expect_not_null(strstr(out, want), "%s: no %s in\n%s", cases[i].name, want, out);
        }
        free(out);
        /* In text too, once: the selection's warning, not a second note. */
        snprintf(args, sizeof args, "select --shape 256x256x256 --dtype f32 --db '%s' 2>&1", db);
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        size_t said = count(out, "another driver build") + count(out, "another build");
        cr_expect_eq(said, cases[i].which == 1 ? 1u : 0u, "%s: said %zu times in\n%s",
                     cases[i].name, said, out);
        free(out);
        /* Another build's records are announced once per context, however many
         * shapes select them (here the tuned shape and its nearest). */
        snprintf(args, sizeof args,
                 "bench --shapes 256x256x256,192x192x192 --dtype f32 --db '%s' 2>&1", db);
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        size_t warnings = count(out, "warning: using a tuning record of another driver build");
        cr_expect_eq(warnings, cases[i].which == 1 ? 1u : 0u, "%s: %zu warnings in\n%s",
                     cases[i].name, warnings, out);
        free(out);
    }
}
