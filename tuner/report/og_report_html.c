/* ogtune report: report.html, one section per tuned shape. XHTML-compatible
 * markup (every element closed, attributes quoted) so the page is also
 * well-formed XML; no scripts and nothing loaded from elsewhere. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "og_report.h"

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:64em}\n"
    "table{border-collapse:collapse;margin:0.5em 0}\n"
    "th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}\n"
    "td.num{text-align:right}\n"
    "section{margin:2em 0;border-top:1px solid #ccc}\n"
    "svg{display:block;margin:0.5em 0;font-family:monospace;font-size:10px}\n"
    ".bar{fill:#4a78b0}\n.bar.stale{fill:#c9c9c9}\n.bar.default{fill:#e69f00}\n"
    ".bar.best{fill:#2b9348}\n.grid{stroke:#e4e4e4}\n.axis{stroke:#888}\n"
    ".group{fill:none;stroke:#e4e4e4}\n.mark,.name{font-weight:bold}\n"
    "tr.stale td,.stale-note{color:#a33}\n";

/* Reason shown for an accepted record whose GFLOP/s is not a number. */
static const char unusable[] = "accepted, but its GFLOP/s is not a finite non-negative number";

static const char *reason(const og_report_rec *r)
{
    return r->r.accepted ? unusable : r->r.reason;
}

static int reason_cmp(const void *pa, const void *pb)
{
    return strcmp(reason(*(const og_report_rec *const *)pa),
                  reason(*(const og_report_rec *const *)pb));
}

static void code(FILE *f, const char *text)
{
    fputs("<code>", f);
    og_xml_text(f, text, SIZE_MAX);
    fputs("</code>", f);
}

/* "1.52x", or why there is no ratio. */
static void ratio(FILE *f, const og_report_group *g)
{
    if (g->best && g->def && g->def->r.gflops > 0) {
        og_report_number(f, g->best->r.gflops / g->def->r.gflops, 2);
        fputc('x', f);
    } else {
        fputs(g->best ? "default not measured" : "no accepted candidate", f);
    }
}

static void summary_row(FILE *f, const og_report_group *g, size_t index)
{
    char shape[192];
    og_report_shape_text(&g->recs[0]->r, shape, sizeof shape);
    fputs("<tr><td>", f);
    og_xml_text(f, g->recs[0]->device, SIZE_MAX);
    fprintf(f, "</td><td><a href=\"#shape-%zu\">", index + 1);
    og_xml_text(f, shape, SIZE_MAX);
    fprintf(f, "</a></td><td class=\"num\">%zu</td><td class=\"num\">", g->n);
    if (g->best)
        og_report_number(f, g->best->r.gflops, 2);
    fputs("</td><td class=\"num\">", f);
    if (g->def)
        og_report_number(f, g->def->r.gflops, 2);
    fputs("</td><td class=\"num\">", f);
    ratio(f, g);
    fputs("</td></tr>\n", f);
}

/* The rejected records (and accepted ones without a usable rate), counted
 * by reason. */
static int rejected_table(FILE *f, const og_report_group *g)
{
    size_t n = g->n - g->bars;
    if (n == 0)
        return 0;
    const og_report_rec **list = malloc(n * sizeof *list);
    if (!list) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(list, g->recs + g->bars, n * sizeof *list);
    qsort(list, n, sizeof *list, reason_cmp);
    fputs("<table class=\"rejected\">\n<tr><th>rejected: reason</th><th>candidates</th></tr>\n", f);
    for (size_t i = 0, count = 1; i < n; i++, count++) {
        if (i + 1 < n && strcmp(reason(list[i]), reason(list[i + 1])) == 0)
            continue;
        fputs("<tr><td>", f);
        og_xml_text(f, reason(list[i]), SIZE_MAX);
        fprintf(f, "</td><td class=\"num\">%zu</td></tr>\n", count);
        count = 0;
    }
    fputs("</table>\n", f);
    free(list);
    return 0;
}

/* Every stale record of the group, in the chart's order. */
static void stale_table(FILE *f, const og_report_group *g)
{
    if (g->stale == 0)
        return;
    fprintf(f,
            "<p class=\"stale-note\">%zu stale record%s: measured on an older version of the "
            "template (its hash differs), drawn grey and never counted as the best.</p>\n"
            "<table class=\"stale\">\n<tr><th>template</th><th>hash</th><th>params</th>"
            "<th>GFLOP/s</th></tr>\n",
            g->stale, g->stale == 1 ? "" : "s");
    for (size_t i = 0; i < g->n; i++) {
        const og_report_rec *r = g->recs[i];
        if (!r->stale)
            continue;
        fputs("<tr class=\"stale\"><td>", f);
        og_xml_text(f, r->r.template_name, SIZE_MAX);
        fprintf(f, "</td><td>%016llx</td><td>", (unsigned long long)r->r.template_hash);
        code(f, r->r.params);
        fputs("</td><td class=\"num\">", f);
        if (r->usable)
            og_report_number(f, r->r.gflops, 2);
        else
            fputs("rejected", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int section(FILE *f, const og_report_group *g, size_t index)
{
    char shape[192];
    og_report_shape_text(&g->recs[0]->r, shape, sizeof shape);
    fprintf(f, "<section id=\"shape-%zu\">\n<h2>", index + 1);
    og_xml_text(f, shape, SIZE_MAX);
    fputs(" on ", f);
    og_xml_text(f, g->recs[0]->device, SIZE_MAX);
    fprintf(f, "</h2>\n<p>%zu records: %zu accepted, %zu rejected, %zu stale.", g->n, g->bars,
            g->n - g->bars, g->stale);
    if (g->best) {
        fputs(" Best: ", f);
        og_report_number(f, g->best->r.gflops, 2);
        fputs(" GFLOP/s, ", f);
        code(f, g->best->r.params);
        fputc('.', f);
    }
    fputs(" Default kernel: ", f);
    code(f, g->default_params);
    if (g->def) {
        fputs(", ", f);
        og_report_number(f, g->def->r.gflops, 2);
        fputs(" GFLOP/s", f);
    }
    fputs(". Tuned / default: <b>", f);
    ratio(f, g);
    fputs("</b>.</p>\n", f);
    og_report_svg_chart(f, g);
    fputs("<h3>Parameter sensitivity</h3>\n<p>For each parameter that varies, the best GFLOP/s "
          "reached at each of its values (current template; hover a bar for the number).</p>\n",
          f);
    if (og_report_svg_sensitivity(f, g) != 0 || rejected_table(f, g) != 0)
        return -1;
    stale_table(f, g);
    fputs("</section>\n", f);
    return 0;
}

int og_report_write_html(FILE *f, const og_report *rep, const char *db_path)
{
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
            "<title>ogtune report</title>\n<style>\n%s</style>\n</head>\n<body>\n"
            "<h1>ogtune report</h1>\n<p>Database ",
            style);
    code(f, db_path);
    fprintf(f,
            ": %zu records of %zu tuned shapes, %zu stale.</p>\n<p>Each chart draws the GFLOP/s "
            "of every accepted candidate of a shape, fastest first: green the best (of the "
            "current template), orange the default kernel (the tuner's first candidate: what "
            "the runtime runs without a database, except on devices whose float16 qualifies "
            "for the cooperative-matrix kernel), grey the stale records. Hover a bar for its "
            "parameters. report.csv beside this page holds every record.</p>\n",
            rep->n, rep->n_groups, rep->stale);
    if (rep->n_groups == 0)
        fputs("<p>The database holds no records.</p>\n", f);
    else
        fputs("<table class=\"summary\">\n<tr><th>device</th><th>op, dtype, mode, "
              "transposes, shape</th><th>records</th><th>best GFLOP/s</th><th>default "
              "GFLOP/s</th><th>tuned / default</th></tr>\n",
              f);
    for (size_t i = 0; i < rep->n_groups; i++)
        summary_row(f, &rep->groups[i], i);
    if (rep->n_groups > 0)
        fputs("</table>\n", f);
    for (size_t i = 0; i < rep->n_groups; i++)
        if (section(f, &rep->groups[i], i) != 0)
            return -1;
    fputs("</body>\n</html>\n", f);
    return 0;
}
