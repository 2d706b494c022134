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
static int free_fields(const og_params *p, int out[18])
{
    const int f[18] = {p->variant, p->bm,     p->bn,   p->bk,  p->tm,  p->tn,
                       p->pad,     p->load,   p->acc,  p->vec, p->src, p->split,
                       p->cols,    p->slices, p->rows, p->dot, p->sgx, p->sgy};
    memcpy(out, f, sizeof f);
    return 18;
}

/* How many free parameters differ between two candidates. */
static int distance(const og_params *a, const og_params *b)
{
    int fa[18], fb[18], d = 0;
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
    double best_rate;
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
        s->stopped = 1;
        return 1;
    }
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

/* Smart: hill climbing over the neighbourhood of the best candidate, with
 * random restarts. After the default and a random sample of 5% of the
 * space (at least 4), it measures the unmeasured candidates at distance 1
 * from the best one (one free parameter changed), moving whenever one is
 * faster; when the best has no unmeasured neighbour left, distance 2; when
 * none are left either, the next random candidate. Performance over tile
 * parameters is smooth enough that the best lies near a good one, so a small
 * share of the space finds it (tests/test_search.c, on a space recorded on
 * lavapipe). */
static void smart(search *s, const size_t *order)
{
    size_t sample = s->n / 20 < 4 ? 4 : s->n / 20, next = 0;
    for (; next < s->n && sample > 0; next++) {
        if (visit(s, order[next]))
            return;
        sample--;
    }
    for (;;) {
        size_t centre = s->best;
        int moved = 0;
        for (int d = 1; d <= 2 && !moved; d++) {
            int any = 0;
            for (size_t i = 0; i < s->n && !moved; i++) {
                if (s->done[i] || distance(&s->space[centre], &s->space[i]) != d)
                    continue;
                any = 1;
                if (visit(s, i))
                    return;
                moved = s->best != centre;
            }
            if (any)
                break;
        }
        if (moved)
            continue;
        /* The neighbourhood is exhausted: a random restart. */
        while (next < s->n && s->done[order[next]])
            next++;
        if (next == s->n || visit(s, order[next]))
            return;
    }
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
