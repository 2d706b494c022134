/* ogtune report: parameter sensitivity, the best GFLOP/s a group reaches at
 * each value of each parameter. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "og_report.h"

/* Whether text is a whole number (strtod), and its value. */
static int number(const char *text, double *x)
{
    char *end;
    *x = strtod(text, &end);
    return *text && end != text && *end == '\0';
}

/* Numbers first, ascending, then text in byte order ("split": 1 .. 16, rule). */
static int value_cmp(const void *pa, const void *pb)
{
    const og_report_value *a = pa, *b = pb;
    double x, y;
    int na = number(a->text, &x), nb = number(b->text, &y);
    if (na != nb)
        return nb - na;
    if (na && x != y)
        return (x > y) - (x < y);
    return strcmp(a->text, b->text);
}

/* items, or a bigger copy when n has reached *cap (NULL: out of memory,
 * items unchanged). */
static void *grow(void *items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return items;
    size_t bigger = *cap ? 2 * *cap : 8;
    void *grown = realloc(items, bigger * size);
    if (grown)
        *cap = bigger;
    return grown;
}

/* Records rate for name=value. */
static int note(og_report_param **params, size_t *n, size_t *cap, const char *name,
                const char *value, double rate)
{
    size_t i = 0;
    while (i < *n && strcmp((*params)[i].name, name) != 0)
        i++;
    if (i == *n) {
        og_report_param *grown = grow(*params, cap, *n, sizeof **params);
        if (!grown)
            return -1;
        *params = grown;
        memset(&(*params)[i], 0, sizeof **params);
        snprintf((*params)[i].name, sizeof(*params)[i].name, "%s", name);
        (*n)++;
    }
    og_report_param *p = &(*params)[i];
    size_t j = 0;
    while (j < p->n && strcmp(p->values[j].text, value) != 0)
        j++;
    if (j == p->n) {
        og_report_value *grown = grow(p->values, &p->cap, p->n, sizeof *p->values);
        if (!grown)
            return -1;
        p->values = grown;
        snprintf(p->values[j].text, sizeof p->values[j].text, "%s", value);
        p->values[j].best = rate;
        p->n++;
    } else if (rate > p->values[j].best) {
        p->values[j].best = rate;
    }
    return 0;
}

/* Notes every "name=value" item of one record's params ("name" alone: an
 * empty value). */
static int note_record(og_report_param **params, size_t *n, size_t *cap, const og_record *r)
{
    char text[sizeof r->params];
    snprintf(text, sizeof text, "%s", r->params);
    char *save = NULL;
    for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (eq)
            *eq = '\0';
        if (note(params, n, cap, item, eq ? eq + 1 : "", r->gflops) != 0)
            return -1;
    }
    return 0;
}

int og_report_params(const og_report_group *g, og_report_param **out, size_t *n)
{
    og_report_param *params = NULL;
    size_t count = 0, cap = 0;
    for (size_t i = 0; i < g->bars; i++) {
        if (g->recs[i]->stale)
            continue;
        if (note_record(&params, &count, &cap, &g->recs[i]->r) != 0) {
            og_report_params_free(params, count);
            errno = ENOMEM;
            return -1;
        }
    }
    /* A parameter with one value says nothing about sensitivity. */
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (params[i].n < 2) {
            free(params[i].values);
            continue;
        }
        qsort(params[i].values, params[i].n, sizeof *params[i].values, value_cmp);
        params[kept++] = params[i];
    }
    *out = params;
    *n = kept;
    return 0;
}

void og_report_params_free(og_report_param *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].values);
    free(p);
}
