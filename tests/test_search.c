/* ogtune's search strategies on a recorded space: every candidate of the
 * standard Int8Gemm space at 1x768x768 measured on lavapipe (tests/data/,
 * made by bench/record_space.sh), replayed as the measuring callback, so the
 * test is deterministic and takes no device time. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

/* The recorded space: parameters and GOP/s (0 for rejected candidates). */
typedef struct recorded {
    og_params *space;
    double *rate;
    size_t n;
    unsigned char *seen; /* how often each candidate was measured */
    size_t calls;
} recorded;

static void load(recorded *r)
{
    FILE *f = fopen(OG_TEST_DATA "/space-llvmpipe-int8-1x768x768.tsv", "r");
    cr_assert_not_null(f, "no recorded space in " OG_TEST_DATA);
    size_t cap = 2048;
    r->space = malloc(cap * sizeof *r->space);
    r->rate = malloc(cap * sizeof *r->rate);
    r->n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        cr_assert_not_null(tab, "line %zu: %s", r->n, line);
        *tab = '\0';
        char why[128];
        cr_assert_lt(r->n, cap);
        cr_assert_eq(og_params_parse(line, &r->space[r->n], why, sizeof why), 0, "%s: %s", line,
                     why);
        r->rate[r->n++] = strtod(tab + 1, NULL);
    }
    fclose(f);
    cr_assert_gt(r->n, 50, "the recorded space is too small to mean anything");
    r->seen = calloc(r->n, 1);
}

static void unload(recorded *r)
{
    free(r->space);
    free(r->rate);
    free(r->seen);
}

static int replay(void *user, size_t i, double *rate)
{
    recorded *r = user;
    cr_assert_lt(i, r->n);
    r->seen[i]++;
    r->calls++;
    *rate = r->rate[i];
    return 0;
}

static double best_seen(const recorded *r)
{
    double best = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->seen[i] && r->rate[i] > best)
            best = r->rate[i];
    return best;
}

static void reset(recorded *r)
{
    memset(r->seen, 0, r->n);
    r->calls = 0;
}

/* Within 5% of the exhaustive best, measuring at most 20% of the space, for
 * every one of ten seeds; never a candidate twice; the default first. */
Test(search, smart_finds_near_best_in_a_fifth)
{
    recorded r;
    load(&r);
    size_t measured;
    cr_assert_eq(og_search(OG_STRATEGY_EXHAUSTIVE, r.space, r.n, 0, 1, replay, &r, &measured),
                 OG_OK);
    cr_assert_eq(measured, r.n);
    double best = best_seen(&r);
    size_t budget = r.n / 5, random_hits = 0;
    /* A random sample of the same size, for comparison. */
    for (uint64_t seed = 1; seed <= 10; seed++) {
        reset(&r);
        cr_assert_eq(
            og_search(OG_STRATEGY_RANDOM, r.space, r.n, budget, seed, replay, &r, &measured),
            OG_OK);
        random_hits += best_seen(&r) >= 0.95 * best;
    }
    cr_log_info("random: within 5%% for %zu of 10 seeds", random_hits);
    cr_expect_lt(random_hits, 10, "the space is too easy to tell the strategies apart");
    for (uint64_t seed = 1; seed <= 10; seed++) {
        reset(&r);
        cr_assert_eq(
            og_search(OG_STRATEGY_SMART, r.space, r.n, budget, seed, replay, &r, &measured), OG_OK);
        cr_expect_leq(measured, budget);
        cr_expect_eq(r.calls, measured);
        cr_expect_eq(r.seen[0], 1, "the default is always measured");
        for (size_t i = 0; i < r.n; i++)
            cr_assert_leq(r.seen[i], 1, "candidate %zu measured twice", i);
        cr_expect_geq(best_seen(&r), 0.95 * best, "seed %llu: %.3f GOP/s of the best %.3f",
                      (unsigned long long)seed, best_seen(&r), best);
        cr_log_info("seed %llu: %.3f of %.3f GOP/s in %zu of %zu", (unsigned long long)seed,
                    best_seen(&r), best, measured, r.n);
    }
    unload(&r);
}

/* Random: the budget's count of distinct candidates, the default first, the
 * same order for the same seed. */
Test(search, random_is_a_seeded_sample)
{
    recorded r;
    load(&r);
    size_t measured, budget = 30;
    cr_assert_eq(og_search(OG_STRATEGY_RANDOM, r.space, r.n, budget, 7, replay, &r, &measured),
                 OG_OK);
    cr_expect_eq(measured, budget);
    cr_expect_eq(r.seen[0], 1);
    unsigned char *first = malloc(r.n);
    memcpy(first, r.seen, r.n);
    size_t first_half = 0;
    for (size_t i = 0; i < r.n / 2; i++)
        first_half += first[i];
    cr_expect_lt(first_half, budget, "a sample, not the space's first candidates");
    reset(&r);
    cr_assert_eq(og_search(OG_STRATEGY_RANDOM, r.space, r.n, budget, 7, replay, &r, &measured),
                 OG_OK);
    cr_expect(memcmp(first, r.seen, r.n) == 0, "the same seed takes the same candidates");
    free(first);
    /* Exhaustive with a budget: the space's first candidates, in order. */
    reset(&r);
    cr_assert_eq(og_search(OG_STRATEGY_EXHAUSTIVE, r.space, r.n, 5, 7, replay, &r, &measured),
                 OG_OK);
    for (size_t i = 0; i < r.n; i++)
        cr_expect_eq(r.seen[i], i < 5, "candidate %zu", i);
    unload(&r);
}

static int stop_at_three(void *user, size_t i, double *rate)
{
    size_t *calls = user;
    (void)i;
    *rate = 1;
    return ++*calls >= 3;
}

/* The callback ends a search (a time budget), and names parse. */
Test(search, callback_stops_and_names)
{
    recorded r;
    load(&r);
    size_t calls = 0, measured;
    cr_assert_eq(og_search(OG_STRATEGY_SMART, r.space, r.n, 0, 1, stop_at_three, &calls, &measured),
                 OG_OK);
    cr_expect_eq(calls, 3);
    cr_expect_eq(measured, 2, "the stopping call measured nothing");
    og_strategy s;
    cr_expect(og_strategy_parse("smart", &s) == 0 && s == OG_STRATEGY_SMART);
    cr_expect(og_strategy_parse("random", &s) == 0 && s == OG_STRATEGY_RANDOM);
    cr_expect(og_strategy_parse("exhaustive", &s) == 0 && s == OG_STRATEGY_EXHAUSTIVE);
    cr_expect_eq(og_strategy_parse("genetic", &s), -1);
    unload(&r);
}

/* The terminal's progress line: done of total, best so far, time left from
 * the mean time per candidate, capped by a time budget. */
Test(search, progress_line)
{
    char line[160];
    og_progress_text(line, sizeof line, 10, 40, 20.0, -1, 12.345, "GFLOP/s");
    cr_expect_str_eq(line, "[10/40] best 12.35 GFLOP/s, about 60 s left");
    og_progress_text(line, sizeof line, 10, 40, 20.0, 15.0, 3.0, "GOP/s");
    cr_expect_str_eq(line, "[10/40] best 3.00 GOP/s, about 15 s left");
}
