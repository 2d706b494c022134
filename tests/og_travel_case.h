/* The databases of the travel tests (test_travel_dumps.c,
 * test_travel_merge.c, test_travel_select.c): sample devices and records
 * written into databases in a chosen order, read back whole (walk) and
 * compared field by field. */
#ifndef OG_TRAVEL_CASE_H
#define OG_TRAVEL_CASE_H

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
/* ---- building databases ---- */

static inline og_device_info make_device(uint32_t vendor, uint32_t device, uint32_t version,
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
static inline og_record tile_record(int64_t m, double gflops, int accepted)
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

static inline og_device_info sample_device(int i)
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
static inline og_record sample_record(int i, int *device)
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

static inline og_db *open_db(const char *path, int writable)
{
    og_db *db = NULL;
    char err[1024] = "";
    cr_assert_eq(og_db_open(path, writable, &db, err, sizeof err), OG_OK, "%s", err);
    return db;
}

static inline int64_t device_row(og_db *db, const og_device_info *dev)
{
    int64_t id = 0;
    char err[1024] = "";
    cr_assert_eq(og_db_device(db, dev, &id, err, sizeof err), OG_OK, "%s", err);
    return id;
}

static inline void insert(og_db *db, const og_device_info *dev, const og_record *rec)
{
    char err[1024] = "";
    cr_assert_eq(og_db_insert(db, device_row(db, dev), rec, err, sizeof err), OG_OK, "%s", err);
}

/* The sample database, devices and records stored in the order of order[]:
 * 0..N_RECORDS-1 a record, N_RECORDS the device without records. */
static inline void fill(const char *path, const int *order)
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

static inline char *read_file(const char *path, size_t *len)
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
static inline char *export_to(const char *db_path, const char *out_path, size_t *len)
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

static inline int collect(void *user, const og_device_info *dev, const og_record *rec)
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

static inline listing walk(const char *path)
{
    listing l = {NULL, 0};
    og_db *db = open_db(path, 0);
    char err[1024] = "";
    cr_assert_eq(og_db_walk(db, collect, &l, err, sizeof err), OG_OK, "%s", err);
    og_db_close(db);
    return l;
}

static inline void same_double(double a, double b, const char *what, size_t i)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    cr_expect_eq(x, y, "entry %zu: %s %.17g (0x%016" PRIx64 ") != %.17g (0x%016" PRIx64 ")", i,
                 what, a, x, b, y);
}

/* Every field of every entry equal, doubles bit for bit. */
static inline void expect_same(const listing *a, const listing *b)
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
static inline void expect_samples(const listing *l)
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

#endif /* OG_TRAVEL_CASE_H */
