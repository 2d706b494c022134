/*
 * ogtune report: the tuning database as a self-contained HTML page (inline
 * CSS and SVG, no scripts, nothing fetched) and a CSV file. The records
 * grouped by tuned shape (og_report_data.c), the parameter-sensitivity table
 * (og_report_params.c), text escaping (og_report_xml.c) and the writers
 * (og_report_html.c, og_report_svg.c, og_report_csv.c).
 */
#ifndef OG_REPORT_H
#define OG_REPORT_H

#include <stdio.h>

#include "og_tuner.h"

/* One record of the database with its device's name. */
typedef struct og_report_rec {
    og_record r;
    char device[256];
    int stale;  /* template_hash is not og_template_hash(template_name): measured
                   on an older template, never counted as the best */
    int usable; /* accepted with a finite, non-negative GFLOP/s: drawn as a bar */
} og_report_rec;

/* A tuned (device, op, dtype, mode, trans_a, trans_b, shape) and its records:
 * the usable ones first (the bars), fastest first, then the others. */
typedef struct og_report_group {
    const og_report_rec **recs;
    size_t n;                  /* records */
    size_t bars;               /* usable records: recs[0 .. bars) */
    size_t stale;              /* stale records (usable or not) */
    size_t current;            /* usable records that are not stale */
    const og_report_rec *best; /* the fastest usable current record, or NULL */
    const og_report_rec *def;  /* the usable current record of the default kernel, or NULL */
    char default_params[OG_PARAMS_MAX]; /* what the runtime runs without a database */
} og_report_group;

typedef struct og_report {
    og_report_rec *recs; /* in database order, oldest first */
    size_t n;
    const og_report_rec **sorted; /* by group, each as og_report_group orders it */
    og_report_group *groups;      /* in (device, op, dtype, mode, trans, shape) order */
    size_t n_groups;
    size_t stale;
} og_report;

/* Reads every record of db and groups them. On failure (reason in err) the
 * report is empty and needs no og_report_free. */
og_status og_report_load(og_db *db, og_report *out, char *err, size_t errlen);
void og_report_free(og_report *rep);

/* "f32 fast NN 64x64x64x1"-style label parts of a group. */
void og_report_shape_text(const og_record *r, char *buf, size_t len);

/* ---- parameter sensitivity (og_report_params.c) ---- */

typedef struct og_report_value {
    char text[OG_PARAMS_MAX];
    double best; /* the best GFLOP/s of the current records with this value */
} og_report_value;

typedef struct og_report_param {
    char name[OG_PARAMS_MAX];
    og_report_value *values; /* numbers first (ascending), then text (byte order) */
    size_t n, cap;
} og_report_param;

/* For every parameter that takes more than one value among the group's
 * usable current records ("name=value" items of the params text), the best
 * GFLOP/s reached at each value. *out is malloc'ed (free with
 * og_report_params_free). Returns 0, or -1 when out of memory. */
int og_report_params(const og_report_group *g, og_report_param **out, size_t *n);
void og_report_params_free(og_report_param *p, size_t n);

/* ---- writers ---- */

/* Writes s as XML/HTML text or attribute content: & < > " ' as references,
 * bytes that are not well-formed UTF-8 and characters XML 1.0 forbids as
 * U+FFFD; at most max characters, then an ellipsis. */
void og_xml_text(FILE *f, const char *s, size_t max);

/* x with that many decimals, or in exponent form from 1e9 (and when not
 * finite): a hostile database's rates stay short. */
void og_report_number(FILE *f, double x, int decimals);

/* The page; the chart of a group (class "shape") and its sensitivity view
 * (class "sensitivity", or a paragraph when no parameter varies). Return 0,
 * or -1 with errno set (out of memory; write errors are left in ferror). */
int og_report_write_html(FILE *f, const og_report *rep, const char *db_path);
void og_report_svg_chart(FILE *f, const og_report_group *g);
int og_report_svg_sensitivity(FILE *f, const og_report_group *g);

/* One row per record in database order, after a header; RFC 4180 quoting,
 * CRLF line ends. */
void og_report_write_csv(FILE *f, const og_report *rep);

#endif /* OG_REPORT_H */
