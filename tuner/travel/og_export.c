/* ogtune export: a tuning database as SQL text (og_travel.h). */
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "og_gen.h"
#include "og_travel.h"

/* A value of a dump statement: 'i' integer, 'r' real or 't' text. */
typedef struct og_dump_value {
    char kind;
    int64_t i;
    double r;
    const char *t;
} og_dump_value;

static void put_text(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* %.17g reads back to the same double; SQL has no literal for the
 * infinities, and 1e999 overflows to one. NaN never reaches a database
 * (SQLite stores it as NULL, which the schema refuses). */
static void put_real(FILE *f, double x)
{
    if (isinf(x))
        fputs(x > 0 ? "1e999" : "-1e999", f);
    else
        fprintf(f, "%.17g", x);
}

/* Writes a statement of og_travel.h with its '?' replaced by v in order, and a newline. */
static void put_statement(FILE *f, const char *sql, const og_dump_value *v)
{
    for (; *sql; sql++) {
        if (*sql != '?') {
            fputc(*sql, f);
            continue;
        }
        if (v->kind == 'i')
            fprintf(f, "%" PRId64, v->i);
        else if (v->kind == 'r')
            put_real(f, v->r);
        else
            put_text(f, v->t);
        v++;
    }
    fputc('\n', f);
}

static void put_device(FILE *f, const og_device_info *d)
{
    const og_dump_value v[OG_DUMP_DEVICE_VALUES] = {
        {'i', d->vendor_id, 0, NULL}, {'i', d->device_id, 0, NULL},
        {'i', d->driver_id, 0, NULL}, {'i', d->driver_version, 0, NULL},
        {'t', 0, 0, d->name},         {'t', 0, 0, d->driver_name},
        {'t', 0, 0, d->driver_info},  {'t', 0, 0, d->pipeline_cache_uuid}};
    fputc('\n', f); /* a blank line before each device's block */
    put_statement(f, OG_DUMP_DEVICE_SQL, v);
}

static void put_record(FILE *f, const og_device_info *d, const og_record *r)
{
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, r->template_hash);
    const og_dump_value v[OG_DUMP_RECORD_VALUES] = {
        {'i', d->vendor_id, 0, NULL},
        {'i', d->device_id, 0, NULL},
        {'i', d->driver_id, 0, NULL},
        {'i', d->driver_version, 0, NULL},
        {'t', 0, 0, d->driver_info},
        {'t', 0, 0, d->pipeline_cache_uuid},
        {'t', 0, 0, r->key.op},
        {'t', 0, 0, og_dtype_name(r->key.dtype)},
        {'t', 0, 0, r->key.mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast"},
        {'i', r->key.trans_a, 0, NULL},
        {'i', r->key.trans_b, 0, NULL},
        {'i', r->m, 0, NULL},
        {'i', r->n, 0, NULL},
        {'i', r->k, 0, NULL},
        {'i', r->batch, 0, NULL},
        {'t', 0, 0, r->template_name},
        {'t', 0, 0, hash},
        {'t', 0, 0, r->params},
        {'r', 0, r->median_us, NULL},
        {'r', 0, r->gflops, NULL},
        {'i', r->samples, 0, NULL},
        {'r', 0, r->max_error, NULL},
        {'i', r->accepted, 0, NULL},
        {'t', 0, 0, r->reason},
        {'i', r->created, 0, NULL},
        {'t', 0, 0, r->source},
        {'r', 0, r->spread, NULL},
        {'t', 0, 0, r->memory}};
    put_statement(f, OG_DUMP_RECORD_SQL, v);
}

typedef struct og_exporter {
    FILE *out;
    og_travel_counts counts;
} og_exporter;

/* og_db_walk's callback: stops at the first failed write. */
static int export_one(void *user, const og_device_info *dev, const og_record *rec)
{
    og_exporter *e = user;
    if (rec == NULL) {
        put_device(e->out, dev);
        e->counts.devices++;
    } else {
        put_record(e->out, dev, rec);
        e->counts.records++;
    }
    return ferror(e->out) != 0;
}

og_status og_export(og_db *db, FILE *out, og_travel_counts *counts, char *err, size_t errlen)
{
    /* The C locale for this thread: %.17g writes '.' whatever the process's. */
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c == (locale_t)0) {
        snprintf(err, errlen, "export: out of memory");
        return OG_ERROR_OUT_OF_MEMORY;
    }
    locale_t saved = uselocale(c);
    og_exporter e = {.out = out};
    fprintf(out,
            "-- onegpu tuning database (ogtune export, schema %d): one block per device, records\n"
            "-- in key order, devices named by their key. ogtune import reads it back.\n"
            "BEGIN;\n",
            OG_DB_SCHEMA_VERSION);
    og_status st = og_db_walk(db, export_one, &e, err, errlen);
    if (st == OG_OK && !ferror(out))
        fputs("\nCOMMIT;\n", out);
    if (st == OG_OK && (fflush(out) != 0 || ferror(out))) {
        snprintf(err, errlen, "export: writing the dump failed");
        st = OG_ERROR_DATABASE;
    }
    uselocale(saved);
    freelocale(c);
    if (counts != NULL)
        *counts = e.counts;
    return st;
}
