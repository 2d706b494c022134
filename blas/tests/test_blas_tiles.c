/*
 * Calls split into tiles (ogb_tiles.h, ogb_tiled.h). The plan on the host:
 * every tile's operands within the limit, the tiles covering the call once.
 * On the device with ONEGPU_BLAS_TILE_BYTES small (set here before the
 * first call), so ordinary sizes run as many tiles: every transpose,
 * ragged blocks, K summed over blocks on the device, beta = 0 over NaN,
 * leading dimensions above the minimum, under the validation layer with
 * synchronisation validation (OG_VALIDATION=sync: the two command buffers,
 * the copies between them); and operands past the device's binding
 * (lavapipe: 128 MiB) at their real size, checked on a sample of rows.
 * CTest runs it with ONEGPU_BLAS_FORCE=gpu.
 */
#include <stdint.h>
#include <unistd.h>

#include "ogb_test.h"
#include "ogb_tiles.h"

/* A trace file of this test's own, set before the drop-in's first call. */
static void trace_to(char *path, size_t len)
{
    snprintf(path, len, "/tmp/ogb_tiles_trace_%ld.txt", (long)getpid());
    unlink(path);
    setenv("ONEGPU_BLAS_TRACE", path, 1);
}

/* Plans random calls for random limits; each tile's A, B and C within the
 * limit, and the tiles' (i, j, l) ranges covering M x N x K exactly once
 * (counted per element of C and K step), with the caller's beta on the
 * first K block only. */
Test(plan, tiles_fit_and_cover_the_call)
{
    unsigned seed = 5;
    for (int r = 0; r < 300; r++) {
        ogb_call c = {.transa = "NT"[r & 1], .transb = "NT"[(r >> 1) & 1], .alpha = 1, .beta = 0.5f};
        c.m = 1 + (int)((next_value(&seed) + 1) * 40);
        c.n = 1 + (int)((next_value(&seed) + 1) * 40);
        c.k = 1 + (int)((next_value(&seed) + 1) * 40);
        c.lda = (int)ogb_a_rows(&c) + (r % 3) * 7;
        c.ldb = (int)ogb_b_rows(&c) + (r % 5) * 3;
        c.ldc = c.m;
        uint64_t limit = 1 + (uint64_t)((next_value(&seed) + 1) * 2000);
        c.a = (const float *)(uintptr_t)4096; /* addresses only: offsets are checked, nothing is read */
        c.b = (const float *)(uintptr_t)4096;
        c.c = (float *)(uintptr_t)4096;
        ogb_tiles t;
        ogb_tiles_plan(&c, limit, &t);
        int *seen = calloc((size_t)c.m * c.n * c.k, sizeof *seen);
        cr_assert(seen);
        for (long i = 0; i < ogb_tiles_count(&t); i++) {
            ogb_tile_pos pos;
            ogb_call s = ogb_tile_call(&c, &t, i, &pos);
            cr_assert_leq(ogb_span(ogb_a_rows(&s), ogb_a_cols(&s), s.lda), (long long)limit);
            cr_assert_leq(ogb_span(ogb_b_rows(&s), ogb_b_cols(&s), s.ldb), (long long)limit);
            cr_assert_leq((long long)s.m * s.n, (long long)limit);
            cr_assert_eq(s.beta, pos.first_k ? c.beta : 1.0f);
            /* The block's first element of C, A and B gives its first row, column and k. */
            long long i0 = s.c - c.c, row = pos.row0, col = pos.col0;
            cr_assert_eq(i0, row + col * c.ldc);
            long long a0 = s.a - c.a, l0 = c.transa == 'N' ? (a0 - row) / c.lda : a0 - row * c.lda;
            cr_assert_eq(s.b - c.b, c.transb == 'N' ? l0 + col * c.ldb : col + l0 * c.ldb);
            for (int jj = 0; jj < s.n; jj++)
                for (int ii = 0; ii < s.m; ii++)
                    for (int ll = 0; ll < s.k; ll++)
                        seen[((size_t)(col + jj) * c.m + (size_t)(row + ii)) * c.k + (size_t)(l0 + ll)]++;
        }
        for (size_t e = 0; e < (size_t)c.m * c.n * c.k; e++)
            cr_assert_eq(seen[e], 1, "call %d: element %zu covered %d times", r, e, seen[e]);
        free(seen);
    }
}

/* Runs products of the given shapes with every transpose, leading
 * dimensions 0 and 3 above the minimum, beta 0 (C NaN) and 1.3; each
 * checked; returns how many. */
static int run_shapes(const int (*shapes)[3], int count)
{
    char msg[160];
    unsigned seed = 11;
    int calls = 0;
    for (int s = 0; s < count; s++)
        for (int t = 0; t < 4; t++)
            for (int v = 0; v < 4; v++) {
                product p = make_product("NT"[t >> 1], "NT"[t & 1], shapes[s][0], shapes[s][1], shapes[s][2],
                                         (v & 1) * 3, -0.7f, v & 2 ? 1.3f : 0.0f, seed++);
                run_fortran(&p);
                cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "pad %d beta %g: %s", (v & 1) * 3,
                             (double)p.beta, msg);
                free_product(&p);
                calls++;
            }
    return calls;
}

/* 1024 floats an operand: every call of run_shapes runs as several tiles;
 * the one with K = 3000 has a B column longer than a tile (one column a
 * block). Under synchronisation validation; staging: the copies as a
 * discrete GPU's, the host filling the drop-in's host buffers while the
 * previous tile computes and the copies recorded with the product (which
 * the layer checks), else host writes to mapped memory. */
static void many_tiles(int staging)
{
    static const int shapes[][3] = {{65, 70, 40}, {33, 17, 129}, {100, 3, 50}, {7, 90, 300}, {5, 6, 3000}};
    char trace[64];
    trace_to(trace, sizeof trace);
    setenv("ONEGPU_BLAS_TILE_BYTES", "4096", 1);
    setenv("OG_VALIDATION", "sync", 1);
    setenv("OG_STAGING", staging ? "1" : "0", 1);
    int calls = run_shapes(shapes, 5);
    cr_assert_eq(count_lines(trace, "-> gpu:"), calls, "every call on the GPU");
    cr_assert_eq(count_lines(trace, ", 1 tile\n"), 0, "every call in several tiles");
    cr_assert_eq(count_lines(trace, "; staged;"), staging ? calls : 0,
                 "the copies through the drop-in's host buffers exactly when onegpu's buffers are staged");
    cr_assert_eq(count_lines(trace, "validation errors"), 0, "the validation layer reported errors");
    unlink(trace);
}

Test(tiles, every_transpose_ragged_blocks_mapped)
{
    many_tiles(0);
}

Test(tiles, every_transpose_ragged_blocks_staging)
{
    many_tiles(1);
}

/* Real sizes past lavapipe's 128 MiB binding, no limit of the test's own:
 * A of 36000 x 1024 (147 MB) with a thin B, not transposed (its K split:
 * C summed over two K blocks on the device, beta != 0) and transposed (M
 * split); C of 6000 x 6000 (144 MB, N split, beta = 0). */
Test(large, operands_past_one_binding)
{
    char trace[64], msg[160];
    trace_to(trace, sizeof trace);
    product p = make_product('N', 'N', 36000, 64, 1024, 0, 0.5f, 0.25f, 3);
    run_fortran(&p);
    cr_assert_eq(check_rows(&p, 97, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);
    p = make_product('T', 'N', 36000, 64, 1024, 0, 0.5f, 0.25f, 4);
    run_fortran(&p);
    cr_assert_eq(check_rows(&p, 97, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);
    p = make_product('N', 'T', 6000, 6000, 8, 1, 1.0f, 0.0f, 5);
    run_fortran(&p);
    cr_assert_eq(check_rows(&p, 101, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);
    cr_assert_eq(count_lines(trace, "-> gpu:"), 3, "every call on the GPU");
    cr_assert_eq(count_lines(trace, ", 1 tile\n"), 0, "every call in several tiles");
    unlink(trace);
}
