/*
 * Tests of ogtune report: a database built with og_db_insert (a hostile
 * device name, params and reasons, a stale record, bytes that are not
 * UTF-8), the report written through the binary, and its page checked for
 * well-formed XML, one chart per tuned shape, escaping, the stale record and
 * the ratio; its CSV parsed as RFC 4180. No Vulkan device is needed.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_ogtune.h"
#include "og_text.h"
#include "og_tmpdir.h"

#include "og_tuner.h"

TestSuite(report, .init = make_tmpdir, .fini = remove_tmpdir);

static const char hostile_device[] = "GPU <b>\"one\"</b> & 'two'";
static const char hostile_params[] = "bm=<script>alert(\"x\")</script>,tm='1'&amp";
static const char hostile_params_escaped[] =
    "bm=&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;,tm=&#39;1&#39;&amp;amp";
static const char hostile_reason[] = "<script>alert('r')</script> \"quoted\", & more\r\nline two";
static const char stale_params[] =
    "bm=128,bn=64,bk=16,tm=8,tn=4,wgx=16,wgy=16,pad=7,load=staged,acc=blocked,vec=1,src=ssbo,"
    "split=rule";

/* ---- the database ---- */

static og_record record(int64_t m, int64_t n, int64_t k, const char *params, double gflops,
                        const char *reason)
{
    og_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.key.op, sizeof r.key.op, "gemm");
    r.key.dtype = OG_F32;
    r.key.mode = OG_MODE_FAST;
    r.m = m, r.n = n, r.k = k, r.batch = 1;
    snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_TILE);
    r.template_hash = og_template_hash(OG_TEMPLATE_TILE);
    snprintf(r.params, sizeof r.params, "%s", params);
    r.gflops = gflops;
    r.median_us = gflops > 0 ? 2.0 * m * n * k / (gflops * 1e3) : 0;
    r.samples = 5;
    if (reason == NULL) { /* rejected records are not timed */
        r.spread = 0.03125;
        snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_DEVICE_LOCAL);
    }
    r.max_error = 1e-7;
    r.accepted = reason == NULL;
    snprintf(r.reason, sizeof r.reason, "%s", reason ? reason : "");
    r.created = 1700000000;
    return r;
}

static int64_t device(og_db *db, const char *name, uint32_t id)
{
    og_device_info dev = {.vendor_id = 0x10de, .device_id = id, .driver_id = 4};
    snprintf(dev.name, sizeof dev.name, "%s", name);
    int64_t row = 0;
    char err[512] = "";
    cr_assert_eq(og_db_device(db, &dev, &row, err, sizeof err), OG_OK, "%s", err);
    return row;
}

static void insert(og_db *db, int64_t dev, og_record r)
{
    char err[512] = "";
    cr_assert_eq(og_db_insert(db, dev, &r, err, sizeof err), OG_OK, "%s", err);
}

/* Tile params: the default with bm, tm and pad changed. */
static const char *tile(char *buf, int bm, int tm, int pad)
{
    snprintf(buf, OG_PARAMS_MAX,
             "bm=%d,bn=64,bk=16,tm=%d,tn=4,wgx=16,wgy=%d,pad=%d,load=staged,acc=blocked,vec=1,"
             "src=ssbo,split=rule",
             bm, tm, bm / tm, pad);
    return buf;
}

#define N_RECORDS 11
#define N_SHAPES 4

/* Four tuned shapes: 64x64x64 on the hostile device (the default at 10
 * GFLOP/s, the best at 15, a stale record at 99, hostile params and
 * reasons), 32x48x40 on it, 2x64x64 (few rows) on it, and 64x64x64 again on
 * a second device. */
static void build_db(const char *path)
{
    og_db *db;
    char err[512] = "", def[OG_PARAMS_MAX], p[OG_PARAMS_MAX];
    cr_assert_eq(og_db_open(path, 1, &db, err, sizeof err), OG_OK, "%s", err);
    int64_t a = device(db, hostile_device, 1), b = device(db, "Second GPU", 2);
    og_params d = og_params_default();
    og_params_format(&d, def, sizeof def);

    insert(db, a, record(64, 64, 64, def, 10, NULL));
    insert(db, a, record(64, 64, 64, tile(p, 128, 8, 0), 15, NULL));
    insert(db, a, record(64, 64, 64, tile(p, 32, 2, 1), 12, NULL));
    insert(db, a, record(64, 64, 64, hostile_params, 5, NULL));
    insert(db, a, record(64, 64, 64, tile(p, 64, 8, 0), 0, hostile_reason));
    insert(db, a, record(64, 64, 64, tile(p, 64, 2, 0), 0, "bad \x01 byte \xff here"));
    og_record stale = record(64, 64, 64, stale_params, 99, NULL);
    stale.template_hash ^= 1;
    insert(db, a, stale);
    insert(db, a, record(32, 48, 40, tile(p, 32, 4, 0), 3, NULL));
    char rows[OG_PARAMS_MAX];
    og_params fewrows = og_params_fewrows(0, 64);
    og_params_format(&fewrows, rows, sizeof rows);
    insert(db, a, record(2, 64, 64, rows, 1, NULL));
    insert(db, b, record(64, 64, 64, def, 20, NULL));
    insert(db, b, record(64, 64, 64, tile(p, 128, 8, 0), 30, NULL));
    og_db_close(db);
}

/* ---- reading the output ---- */

/* Runs ogtune report on db into dir; returns its output. */
static char *report(const char *db, const char *dir)
{
    char args[1200], *out;
    snprintf(args, sizeof args, "report --db '%s' --out '%s'", db, dir);
    int rc = ogtune(args, &out);
    cr_assert_eq(rc, 0, "ogtune %s: exit %d", args, rc);
    return out;
}

/* ---- a small XML well-formedness checker ---- */

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == ':' || c == '.';
}

/* A reference at p ("&amp;", "&#39;", ...); returns its length, 0 if not one. */
static size_t reference(const char *p)
{
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strncmp(p, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    size_t n = 2;
    if (p[1] != '#' || p[2] < '0' || p[2] > '9')
        return 0;
    while (p[n] >= '0' && p[n] <= '9')
        n++;
    return p[n] == ';' ? n + 1 : 0;
}

/* Character data up to the next '<': every '&' starts a reference. */
static const char *text_run(const char *p, const char *end_chars)
{
    while (*p && !strchr(end_chars, *p)) {
        if (*p == '&') {
            size_t n = reference(p);
            cr_assert_gt(n, 0, "stray & at: %.40s", p);
            p += n;
        } else {
            p++;
        }
    }
    return p;
}

/* Checks one start or end tag at p ('<'); pushes or pops the stack. */
static const char *tag(const char *p, char stack[][32], size_t *depth)
{
    int closing = p[1] == '/';
    const char *name = p + 1 + closing, *q = name;
    while (name_char(*q))
        q++;
    size_t len = (size_t)(q - name);
    cr_assert(len > 0 && len < 32, "bad tag at: %.40s", p);
    while (!closing && (*q == ' ' || *q == '\n')) {
        while (*q == ' ' || *q == '\n')
            q++;
        if (*q == '/' || *q == '>')
            break;
        const char *attr = q;
        while (name_char(*q))
            q++;
        cr_assert(q > attr && q[0] == '=' && q[1] == '"', "bad attribute at: %.40s", attr);
        q = text_run(q + 2, "\"<");
        cr_assert_eq(*q, '"', "unterminated attribute at: %.40s", attr);
        q++;
    }
    if (closing) {
        cr_assert_gt(*depth, 0, "end tag without a start at: %.40s", p);
        cr_assert(strlen(stack[*depth - 1]) == len && strncmp(stack[*depth - 1], name, len) == 0,
                  "</%.*s> closes <%s>", (int)len, name, stack[*depth - 1]);
        (*depth)--;
    } else if (*q != '/') {
        cr_assert_lt(*depth, (size_t)64, "nesting too deep");
        snprintf(stack[(*depth)++], 32, "%.*s", (int)len, name);
    }
    q += *q == '/';
    cr_assert_eq(*q, '>', "unterminated tag at: %.40s", p);
    return q + 1;
}

/* Well-formed XML after a <!DOCTYPE html> line: balanced tags, quoted
 * attributes, no '<' or '&' outside markup and references. */
static void expect_well_formed(const char *doc)
{
    char stack[64][32];
    size_t depth = 0, roots = 0;
    const char *p = doc;
    cr_assert_eq(strncmp(p, "<!DOCTYPE html>\n", 16), 0, "no doctype");
    p += 16;
    while (*p) {
        p = text_run(p, "<");
        if (!*p)
            break;
        roots += depth == 0;
        p = tag(p, stack, &depth);
    }
    cr_expect_eq(depth, 0, "%zu elements left open, the last <%s>", depth,
                 depth ? stack[depth - 1] : "");
    cr_expect_eq(roots, 1, "%zu root elements", roots);
}

/* ---- an RFC 4180 reader ---- */

typedef struct csv {
    char *fields[32][32]; /* rows x fields, malloc'ed */
    size_t rows, cols[32];
} csv;

static csv parse_csv(const char *p)
{
    csv c;
    memset(&c, 0, sizeof c);
    while (*p) {
        cr_assert_lt(c.rows, (size_t)32, "too many rows");
        size_t *n = &c.cols[c.rows];
        for (;;) {
            cr_assert_lt(*n, (size_t)32, "too many fields");
            char *field = calloc(strlen(p) + 1, 1), *w = field;
            cr_assert_not_null(field);
            if (*p == '"') {
                for (p++; !(p[0] == '"' && p[1] != '"'); p++) {
                    cr_assert_neq(*p, '\0', "unterminated quoted field");
                    p += p[0] == '"'; /* "" is one quote */
                    *w++ = *p;
                }
                p++;
            } else {
                while (*p && *p != ',' && *p != '\r' && *p != '\n') {
                    cr_assert_neq(*p, '"', "quote inside an unquoted field");
                    *w++ = *p++;
                }
            }
            c.fields[c.rows][(*n)++] = field;
            if (*p != ',')
                break;
            p++;
        }
        cr_assert(p[0] == '\r' && p[1] == '\n', "row %zu does not end in CRLF", c.rows);
        p += 2;
        c.rows++;
    }
    return c;
}

static void free_csv(csv *c)
{
    for (size_t r = 0; r < c->rows; r++)
        for (size_t i = 0; i < c->cols[r]; i++)
            free(c->fields[r][i]);
}

/* The column of the header named name. */
static size_t column(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols[0]; i++)
        if (strcmp(c->fields[0][i], name) == 0)
            return i;
    cr_assert_fail("no column %s", name);
    return 0;
}

/* ---- tests ---- */

Test(report, page_and_csv)
{
    char db[512], dir[512], path[600];
    tmp_path(db, sizeof db, "tuning.db");
    tmp_path(dir, sizeof dir, "out");
    build_db(db);
    free(report(db, dir));

    snprintf(path, sizeof path, "%s/report.html", dir);
    char *html = read_text(path);
    expect_well_formed(html);
    cr_expect_eq(count(html, "<svg class=\"shape\""), (size_t)N_SHAPES, "one chart per shape");
    cr_expect_eq(count(html, "<svg class=\"sensitivity\""), (size_t)2,
                 "a sensitivity view where parameters vary (64x64x64 on each device)");
    cr_expect_eq(count(html, "<svg"), count(html, "</svg>"));
    /* Nothing runs and nothing is fetched; the database's text is escaped. */
    cr_expect_null(strstr(html, "<script"));
    cr_expect_null(strstr(html, "<SCRIPT"));
    cr_expect_null(strstr(html, "http"));
    cr_expect_null(strstr(html, " src="));
    cr_expect_null(strstr(html, "url("));
    cr_expect_null(strstr(html, "@import"));
    cr_expect_null(strstr(html, hostile_params));
    cr_expect_null(strstr(html, hostile_device));
    cr_expect_null(strstr(html, "<script>alert('r')"));
    cr_expect_gt(count(html, hostile_params_escaped), (size_t)0, "hostile params not shown");
    cr_expect_gt(count(html, "GPU &lt;b&gt;&quot;one&quot;&lt;/b&gt; &amp; &#39;two&#39;"),
                 (size_t)1, "device name not escaped");
    cr_expect_gt(count(html, "&lt;script&gt;alert(&#39;r&#39;)&lt;/script&gt; &quot;quoted&quot;, "
                             "&amp; more"),
                 (size_t)0, "hostile reason not shown escaped");
    cr_expect_gt(count(html, "bad \xef\xbf\xbd byte \xef\xbf\xbd here"), (size_t)0,
                 "control character and bad byte not replaced");
    /* The stale record: marked, drawn, never the best (99 GFLOP/s). */
    cr_expect_eq(count(html, "<tr class=\"stale\">"), (size_t)1);
    cr_expect_eq(count(html, "<rect class=\"bar stale\""), (size_t)1);
    const char *stale_row = strstr(html, "<tr class=\"stale\">");
    cr_assert_not_null(stale_row);
    cr_expect_not_null(strstr(stale_row, stale_params));
    cr_expect_gt(count(html, "Best: 15.00 GFLOP/s"), (size_t)0, "the stale record was the best");
    cr_expect_eq(count(html, "99.00 GFLOP/s, 5.3 us (stale: measured on an older template)"),
                 (size_t)1);
    /* Best and default marked (the few-rows record is both); the ratios
     * (15 / 10 and 30 / 20, each in the summary and in the section). */
    cr_expect_eq(count(html, "<rect class=\"bar default\""), (size_t)2);
    cr_expect_eq(count(html, "<rect class=\"bar default best\""), (size_t)1);
    cr_expect_eq(count(html, "text-anchor=\"middle\">best</text>"), (size_t)3);
    cr_expect_eq(count(html, "text-anchor=\"middle\">best = default</text>"), (size_t)1);
    cr_expect_eq(count(html, "text-anchor=\"middle\">default</text>"), (size_t)2);
    cr_expect_eq(count(html, "1.50x"), (size_t)4, "summary and section of both devices");
    cr_expect_gt(count(html, "default not measured"), (size_t)0);
    /* Sensitivity: the best rate at each value, from current records only. */
    cr_expect_eq(count(html, "bm=128: best 15.00 GFLOP/s (100% of the best)"), (size_t)1);
    cr_expect_eq(count(html, "bm=32: best 12.00 GFLOP/s (80% of the best)"), (size_t)1);
    cr_expect_eq(count(html, "bm=64: best 10.00 GFLOP/s (67% of the best)"), (size_t)1);
    cr_expect_eq(count(html, "bm=128: best 30.00 GFLOP/s (100% of the best)"), (size_t)1);
    cr_expect_eq(count(html, "pad=1: best 12.00 GFLOP/s (80% of the best)"), (size_t)1);
    cr_expect_eq(count(html, "99.00"), (size_t)2, "the stale rate outside its bar and row");
    free(html);

    snprintf(path, sizeof path, "%s/report.csv", dir);
    char *text = read_text(path);
    csv c = parse_csv(text);
    cr_expect_eq(c.rows, (size_t)N_RECORDS + 1, "header and one row per record");
    for (size_t r = 0; r < c.rows; r++)
        cr_expect_eq(c.cols[r], (size_t)23, "row %zu has %zu fields", r, c.cols[r]);
    size_t params = column(&c, "params"), reason = column(&c, "reason"), dev = column(&c, "device"),
           stale = column(&c, "stale"), samples = column(&c, "samples"),
           spread = column(&c, "spread"), memory = column(&c, "memory");
    cr_expect(spread == samples + 1 && memory == samples + 2, "spread and memory after samples");
    /* Row 1: accepted, timed in device-local memory; row 5: rejected. */
    cr_expect_str_eq(c.fields[1][spread], "0.03125");
    cr_expect_str_eq(c.fields[1][memory], "device-local");
    cr_expect_str_eq(c.fields[5][spread], "0");
    cr_expect_str_eq(c.fields[5][memory], "");
    cr_expect_str_eq(c.fields[4][params], hostile_params);
    cr_expect_str_eq(c.fields[5][reason], hostile_reason);
    cr_expect_str_eq(c.fields[1][dev], hostile_device);
    for (size_t r = 1; r < c.rows; r++)
        cr_expect_str_eq(c.fields[r][stale], r == 7 ? "1" : "0", "row %zu", r);
    cr_expect_not_null(strstr(text, "\"bm=<script>alert(\"\"x\"\")</script>,tm='1'&amp\""));
    free_csv(&c);
    free(text);

    /* Written through temporary files: nothing else is left in dir. */
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            files++;
            cr_expect(strcmp(e->d_name, "report.html") == 0 || strcmp(e->d_name, "report.csv") == 0,
                      "left %s", e->d_name);
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
    cr_expect_eq(files, (size_t)2);
}

/* xmllint, where Debian's libxml2-utils is installed, agrees. */
Test(report, xmllint)
{
    if (access("/usr/bin/xmllint", X_OK) != 0)
        cr_skip_test("no /usr/bin/xmllint");
    char db[512], dir[512], cmd[1400];
    tmp_path(db, sizeof db, "tuning.db");
    snprintf(dir, sizeof dir, "%s", og_tmpdir);
    build_db(db);
    free(report(db, dir));
    snprintf(cmd, sizeof cmd, "/usr/bin/xmllint --noout '%s/report.html'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

/* No records: a page without charts, a CSV with its header alone. */
Test(report, empty_database)
{
    char db[512], path[600], err[512] = "";
    og_db *handle;
    tmp_path(db, sizeof db, "empty.db");
    cr_assert_eq(og_db_open(db, 1, &handle, err, sizeof err), OG_OK, "%s", err);
    og_db_close(handle);
    char *out = report(db, og_tmpdir);
    cr_expect_not_null(strstr(out, "0 records of 0 tuned shapes"), "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/report.html", og_tmpdir);
    char *html = read_text(path);
    expect_well_formed(html);
    cr_expect_eq(count(html, "<svg"), (size_t)0);
    cr_expect_not_null(strstr(html, "The database holds no records."));
    free(html);
    snprintf(path, sizeof path, "%s/report.csv", og_tmpdir);
    char *text = read_text(path);
    csv c = parse_csv(text);
    cr_expect_eq(c.rows, (size_t)1);
    free_csv(&c);
    free(text);
}

/* Errors name the path and exit non-zero; nothing is written. */
Test(report, errors)
{
    char db[512], file[512], args[1400], *out;
    tmp_path(db, sizeof db, "tuning.db");
    tmp_path(file, sizeof file, "plain-file");
    snprintf(args, sizeof args, "report --db '%s/missing.db' --out '%s' 2>&1", og_tmpdir,
             og_tmpdir);
    cr_expect_eq(ogtune(args, &out), 1);
    cr_expect_not_null(strstr(out, "missing.db"), "%s", out);
    free(out);

    build_db(db);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    snprintf(args, sizeof args, "report --db '%s' --out '%s' 2>&1", db, file);
    cr_expect_eq(ogtune(args, &out), 1);
    cr_expect_not_null(strstr(out, file), "%s", out);
    free(out);
    snprintf(args, sizeof args, "report --db '%s' --out '%s/no/such/dir' 2>&1", db, og_tmpdir);
    cr_expect_eq(ogtune(args, &out), 1);
    cr_expect_not_null(strstr(out, "no/such/dir"), "%s", out);
    free(out);
}
