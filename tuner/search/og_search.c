/* Search strategies of ogtune tune: which candidates of a space to measure,
 * in which order, within a budget. The strategies see the space and a
 * measuring callback only, so a recorded space (a table of measurements)
 * drives them in the tests exactly as the device does in a tuning run. */
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

const char *og_strategy_name(og_strategy s)
{
    static const char *const names[] = {"exhaustive", "random", "smart"};
    return (unsigned)s <= OG_STRATEGY_SMART ? names[s] : "?";
}

int og_strategy_parse(const char *text, og_strategy *out)
{
    for (int s = OG_STRATEGY_EXHAUSTIVE; s <= OG_STRATEGY_SMART; s++)
        if (strcmp(text, og_strategy_name((og_strategy)s)) == 0) {
            *out = (og_strategy)s;
            return 0;
        }
    return -1;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The parameters that tell candidates apart (wgx and wgy follow from the
 * tile and register tile), for the neighbourhood of the smart strategy. */
static int free_fields(const og_params *p, int out[20])
{
    const int f[20] = {p->variant, p->bm,  p->bn,  p->bk,  p->tm,       p->tn,   p->pad,
                       p->load,    p->acc, p->vec, p->src, p->split,    p->cols, p->slices,
                       p->rows,    p->dot, p->sgx, p->sgy, (int)p->mat, p->buf};
    memcpy(out, f, sizeof f);
    return 20;
}

/* How many free parameters differ between two candidates. */
static int distance(const og_params *a, const og_params *b)
{
    int fa[20], fb[20], d = 0;
    int n = free_fields(a, fa);
    free_fields(b, fb);
    for (int i = 0; i < n; i++)
        d += fa[i] != fb[i];
    return d;
}

/* The state of one search: what has been measured and the best so far. */
typedef struct search {
    const og_params *space;
    size_t n, budget, measured;
    unsigned char *done;
    double best_rate, last_rate;
    size_t best;
    og_measure_fn measure;
    void *user;
    int stopped;
} search;

/* Measures candidate i once; returns 0 to go on, 1 when the search ends
 * (budget spent, or the callback says stop). */
static int visit(search *s, size_t i)
{
    if (s->done[i])
        return 0;
    if (s->measured >= s->budget || s->stopped)
        return 1;
    double rate = 0;
    s->done[i] = 1;
    s->measured++;
    if (s->measure(s->user, i, &rate) != 0) {
        /* Stopped before i was measured (a time budget, an error). */
        s->done[i] = 0;
        s->measured--;
        s->stopped = 1;
        return 1;
    }
    s->last_rate = rate;
    if (rate > s->best_rate) {
        s->best_rate = rate;
        s->best = i;
    }
    return s->measured >= s->budget;
}

/* A random permutation of 1..n-1 (the default, 0, always comes first). */
static size_t *shuffled(size_t n, uint64_t *seed)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 1; i--) {
        size_t j = 1 + (size_t)(next_random(seed) % i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return order;
}

/* Adds candidate j's measured rate to every candidate's prediction: the
 * mean of the measured rates weighted by 4^-distance. */
static void learn(const search *s, size_t j, double rate, double *num, double *den)
{
    for (size_t i = 0; i < s->n; i++) {
        double w = 1.0;
        for (int d = distance(&s->space[j], &s->space[i]); d > 0; d--)
            w *= 0.25;
        num[i] += w * rate;
        den[i] += w;
    }
}

/* Smart: a model of the measured space proposes the next candidate. After
 * the default and a random sample of 5% of the space (at least 4), each
 * pick is the unmeasured candidate with the highest predicted rate (the
 * measured rates weighted by 4^-distance, distance being how many free
 * parameters differ), so candidates that resemble fast ones come first;
 * every fourth pick is the next random candidate instead, so regions the
 * sample missed still get a look. Performance over tile parameters is
 * smooth enough that a small share of the space finds a kernel close to the
 * best (tests/test_search.c, on a space recorded on lavapipe). */
static void smart(search *s, const size_t *order)
{
    size_t sample = s->n / 20 < 4 ? 4 : s->n / 20, next = 0;
    double *num = calloc(s->n, sizeof *num), *den = calloc(s->n, sizeof *den);
    if (num && den) {
        learn(s, 0, s->last_rate, num, den);
        for (size_t picks = 0;; picks++) {
            size_t pick = s->n;
            double best = -1;
            if (picks >= sample && picks % 4 != 3)
                for (size_t i = 0; i < s->n; i++)
                    if (!s->done[i] && num[i] / den[i] > best) {
                        best = num[i] / den[i];
                        pick = i;
                    }
            while (pick == s->n && next < s->n)
                if (!s->done[order[next++]])
                    pick = order[next - 1];
            if (pick == s->n)
                break;
            size_t before = s->measured;
            int end = visit(s, pick);
            if (s->measured > before)
                learn(s, pick, s->last_rate, num, den);
            if (end)
                break;
        }
    }
    free(num);
    free(den);
}

og_status og_search(og_strategy strategy, const og_params *space, size_t n, size_t budget,
                    uint64_t seed, og_measure_fn measure, void *user, size_t *measured)
{
    *measured = 0;
    if (n == 0)
        return OG_OK;
    search s = {.space = space,
                .n = n,
                .budget = budget == 0 || budget > n ? n : budget,
                .done = calloc(n, 1),
                .best_rate = -1,
                .measure = measure,
                .user = user};
    size_t *order = shuffled(n, &seed);
    if (!s.done || !order) {
        free(s.done);
        free(order);
        return OG_ERROR_OUT_OF_MEMORY;
    }
    /* The default comes first in every strategy: the baseline is always known. */
    if (!visit(&s, 0)) {
        if (strategy == OG_STRATEGY_SMART)
            smart(&s, order);
        else
            for (size_t i = 1; i < n && !visit(&s, strategy == OG_STRATEGY_RANDOM ? order[i] : i);
                 i++)
                ;
    }
    *measured = s.measured;
    free(s.done);
    free(order);
    return OG_OK;
}
