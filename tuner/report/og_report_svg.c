/* ogtune report: the inline SVG charts of a tuned shape (GFLOP/s of every
 * accepted candidate, and the best GFLOP/s at each parameter value). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_report.h"

/* The candidates chart: its size and the plot's margins, in pixels. */
#define CHART_W 760
#define CHART_H 280
#define LEFT 60
#define RIGHT 12
#define TOP 34
#define BOTTOM 40

/* The sensitivity view: one bar group per parameter, flowing in rows. */
#define SENS_W 760
#define SENS_ROW 124
#define SENS_BARS 70  /* height of the tallest bar */
#define SENS_LABEL 10 /* characters of a value or name shown under a bar */

/* The smallest 1, 2, 2.5, 5 or 10 times a power of ten at or above x (1 for 0;
 * x itself when that overflows). */
static double nice_ceil(double x)
{
    static const double steps[] = {1, 2, 2.5, 5, 10};
    if (!(x > 0))
        return 1;
    double p = pow(10, floor(log10(x)));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= x)
            return isfinite(steps[i] * p) ? steps[i] * p : x;
    return x;
}

static void legend_item(FILE *f, int x, const char *cls, const char *label)
{
    fprintf(f, "<rect class=\"key bar%s%s\" x=\"%d\" y=\"6\" width=\"10\" height=\"10\"/>",
            *cls ? " " : "", cls, x);
    fprintf(f, "<text x=\"%d\" y=\"15\">%s</text>\n", x + 14, label);
}

static void bar(FILE *f, const og_report_group *g, size_t i, double slot, double ymax)
{
    const og_report_rec *r = g->recs[i];
    const int plot_h = CHART_H - TOP - BOTTOM;
    double h = r->r.gflops / ymax * plot_h;
    double w = slot > 3 ? slot * 0.8 : slot;
    double x = LEFT + i * slot + (slot - w) / 2, y = TOP + plot_h - h;
    int best = r == g->best, def = r == g->def;
    fprintf(f, "<rect class=\"bar%s%s%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">",
            r->stale ? " stale" : "", def ? " default" : "", best ? " best" : "", x, y, w, h);
    fprintf(f, "<title>#%zu ", i + 1);
    og_xml_text(f, r->r.params, SIZE_MAX);
    fputs(": ", f);
    og_report_number(f, r->r.gflops, 2);
    fputs(" GFLOP/s, ", f);
    og_report_number(f, r->r.median_us, 1);
    fprintf(f, " us%s%s%s</title></rect>\n",
            r->stale ? " (stale: measured on an older template)" : "",
            def ? " (default kernel)" : "", best ? " (best)" : "");
    double cx = x + w / 2;
    if (best)
        fprintf(f,
                "<text class=\"mark\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">best%s</text>\n",
                cx, y - 4, def ? " = default" : "");
    if (def && !best)
        fprintf(f,
                "<text class=\"mark\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">default</text>\n",
                cx, TOP + plot_h + 14);
}

void og_report_svg_chart(FILE *f, const og_report_group *g)
{
    const int plot_w = CHART_W - LEFT - RIGHT, plot_h = CHART_H - TOP - BOTTOM;
    double top = 0;
    for (size_t i = 0; i < g->bars; i++)
        top = fmax(top, g->recs[i]->r.gflops);
    double ymax = nice_ceil(top);
    fprintf(f,
            "<svg class=\"shape\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n"
            "<title>GFLOP/s of every accepted candidate, fastest first</title>\n",
            CHART_W, CHART_H, CHART_W, CHART_H);
    legend_item(f, LEFT, "", "current");
    legend_item(f, LEFT + 80, "best", "best");
    legend_item(f, LEFT + 140, "default", "default kernel");
    legend_item(f, LEFT + 260, "stale", "stale (older template)");
    for (int t = 0; t <= 4; t++) {
        double y = TOP + plot_h * (1 - t / 4.0);
        fprintf(f,
                "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>"
                "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n",
                LEFT, y, LEFT + plot_w, y, LEFT - 6, y + 3, ymax * t / 4);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">GFLOP/s</text>\n", LEFT - 6, TOP - 10);
    for (size_t i = 0; i < g->bars; i++)
        bar(f, g, i, (double)plot_w / g->bars, ymax);
    if (g->bars == 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no accepted candidate</text>\n",
                LEFT + plot_w / 2, TOP + plot_h / 2);
    fprintf(
        f,
        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%zu accepted candidates, fastest first; "
        "%zu rejected</text>\n</svg>\n",
        LEFT, TOP + plot_h, LEFT + plot_w, TOP + plot_h, LEFT + plot_w / 2, CHART_H - 6, g->bars,
        g->n - g->bars);
}

/* Characters (not bytes) of UTF-8 text shown under a bar, at most SENS_LABEL
 * and an ellipsis. */
static int label_chars(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n > SENS_LABEL ? SENS_LABEL + 1 : n;
}

static int slot_width(const og_report_value *v)
{
    int w = 6 * label_chars(v->text) + 8;
    return w < 24 ? 24 : w;
}

static int group_width(const og_report_param *p)
{
    int w = 16;
    for (size_t i = 0; i < p->n; i++)
        w += slot_width(&p->values[i]);
    return w < 96 ? 96 : w;
}

/* The bar group of one parameter, its frame at (x, y). */
static void param_group(FILE *f, const og_report_param *p, int x, int y, double best)
{
    fprintf(f, "<rect class=\"group\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", x + 2, y + 2,
            group_width(p) - 4, SENS_ROW - 4);
    fprintf(f, "<text class=\"name\" x=\"%d\" y=\"%d\">", x + 8, y + 16);
    og_xml_text(f, p->name, SENS_LABEL);
    fputs("</text>\n", f);
    int sx = x + 8, base = y + 24 + SENS_BARS;
    for (size_t i = 0; i < p->n; i++) {
        const og_report_value *v = &p->values[i];
        int sw = slot_width(v);
        double h = best > 0 ? v->best / best * SENS_BARS : 0;
        fprintf(f, "<rect class=\"bar%s\" x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\"><title>",
                v->best == best ? " best" : "", sx + 3, base - h, sw - 6, h);
        og_xml_text(f, p->name, SIZE_MAX);
        fputc('=', f);
        og_xml_text(f, v->text, SIZE_MAX);
        fputs(": best ", f);
        og_report_number(f, v->best, 2);
        fprintf(f, " GFLOP/s (%.0f%% of the best)</title></rect>",
                best > 0 ? 100 * v->best / best : 0);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", sx + sw / 2.0, base + 14);
        og_xml_text(f, v->text, SENS_LABEL);
        fputs("</text>\n", f);
        sx += sw;
    }
}

int og_report_svg_sensitivity(FILE *f, const og_report_group *g)
{
    og_report_param *params;
    size_t n;
    if (og_report_params(g, &params, &n) != 0)
        return -1;
    if (n == 0 || !g->best) {
        fputs("<p>No parameter varies among the accepted candidates of the current "
              "template.</p>\n",
              f);
        og_report_params_free(params, n);
        return 0;
    }
    /* Lay the groups out in rows first, to size the picture. */
    int width = SENS_W, rows = 1, x = 0, y = 0;
    for (size_t i = 0; i < n; i++) {
        int w = group_width(&params[i]);
        if (x > 0 && x + w > SENS_W) {
            rows++;
            x = 0;
        }
        x += w;
        width = x > width ? x : width;
    }
    fprintf(f,
            "<svg class=\"sensitivity\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "role=\"img\">\n<title>The best GFLOP/s at each value of each parameter</title>\n",
            width, rows * SENS_ROW, width, rows * SENS_ROW);
    x = 0;
    for (size_t i = 0; i < n; i++) {
        int w = group_width(&params[i]);
        if (x > 0 && x + w > SENS_W) {
            y += SENS_ROW;
            x = 0;
        }
        param_group(f, &params[i], x, y, g->best->r.gflops);
        x += w;
    }
    fputs("</svg>\n", f);
    og_report_params_free(params, n);
    return 0;
}
