/*
 * The drop-in's netlib semantics through its own entry points (linked, not
 * preloaded): every transpose and both CBLAS layouts against a product in
 * double, only the M x N block of C written, alpha = 0 reading neither A
 * nor B, beta = 0 never reading C, and bad arguments reported through the
 * program's own xerbla_ and cblas_xerbla with C untouched. CTest runs it
 * with ONEGPU_BLAS_FORCE=gpu, so the products run on the device.
 */
#include "ogb_test.h"

/* The program's own error handlers, as netlib's test programs have (the
 * drop-in finds them with dlsym; the executable exports them). */
void xerbla_(const char *srname, const int *info, size_t len);
void cblas_xerbla(int info, const char *rout, const char *form, ...);
static int last_info, last_cblas_info;
static char last_name[16];

void xerbla_(const char *srname, const int *info, size_t len)
{
    snprintf(last_name, sizeof last_name, "%.*s", (int)len, srname);
    last_info = *info;
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)form;
    snprintf(last_name, sizeof last_name, "%s", rout);
    last_cblas_info = info;
}

static const char letters[] = "NTC";

Test(semantics, every_transpose_fortran_and_both_cblas_layouts)
{
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {65, 16, 40}, {4, 70, 5}};
    char msg[160];
    unsigned seed = 1;
    for (int s = 0; s < 5; s++)
        for (int t = 0; t < 9; t++)
            for (int v = 0; v < 3; v++) {
                char ta = letters[t / 3], tb = letters[t % 3];
                float beta = v == 0 ? 0.0f : 1.3f;
                product p = make_product(ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], v == 2 ? 3 : 0,
                                         0.7f, beta, seed++);
                if (v == 0)
                    run_fortran(&p);
                else if (v == 1) /* column-major CBLAS: the same call */
                    cblas_sgemm(COL_MAJOR, ta == 'N' ? NO_TRANS : TRANS, tb == 'N' ? NO_TRANS : TRANS, p.m,
                                p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc);
                else /* row-major CBLAS of the transposed product: C^T = op(B)^T op(A)^T */
                    cblas_sgemm(ROW_MAJOR, tb == 'N' ? NO_TRANS : TRANS, ta == 'N' ? NO_TRANS : TRANS, p.n,
                                p.m, p.k, p.alpha, p.b, p.ldb, p.a, p.lda, p.beta, p.c, p.ldc);
                cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "variant %d: %s", v, msg);
                free_product(&p);
            }
}

Test(semantics, alpha_zero_reads_neither_a_nor_b)
{
    product p = make_product('N', 'N', 5, 4, 3, 2, 0.0f, 2.0f, 7);
    sgemm_("N", "N", &p.m, &p.n, &p.k, &p.alpha, NULL, &p.lda, NULL, &p.ldb, &p.beta, p.c, &p.ldc);
    for (int j = 0; j < p.n; j++)
        for (int i = 0; i < p.ldc; i++) {
            size_t at = (size_t)i + (size_t)j * p.ldc;
            cr_assert_eq(p.c[at], i < p.m ? 2.0f * p.c0[at] : p.c0[at]);
        }
    free_product(&p);
    product z = make_product('T', 'N', 5, 4, 3, 2, 0.0f, 0.0f, 8); /* C is NaN */
    sgemm_("T", "N", &z.m, &z.n, &z.k, &z.alpha, NULL, &z.lda, NULL, &z.ldb, &z.beta, z.c, &z.ldc);
    for (int j = 0; j < z.n; j++)
        for (int i = 0; i < z.m; i++)
            cr_assert_eq(z.c[(size_t)i + (size_t)j * z.ldc], 0.0f);
    free_product(&z);
}

Test(semantics, beta_zero_never_reads_c)
{
    char msg[160];
    product p = make_product('T', 'T', 100, 90, 80, 5, -1.5f, 0.0f, 9); /* C is NaN */
    run_fortran(&p);
    cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);
}

Test(semantics, quick_return_touches_nothing)
{
    float one = 1.0f, c = NAN;
    int m = 1, n = 1, k = 1, ld = 1;
    sgemm_("N", "N", &m, &n, &k, &(float){0.0f}, NULL, &ld, NULL, &ld, &one, &c, &ld);
    cr_assert(isnan(c));
    int zero = 0;
    sgemm_("N", "N", &m, &zero, &k, &one, NULL, &ld, NULL, &ld, &one, NULL, &ld);
}

/* Calls sgemm_ with one bad argument and checks the report and C. */
static void expect_fortran_error(const char *ta, const char *tb, int m, int n, int k, int lda, int ldb, int ldc,
                                 int info)
{
    float a[64] = {0}, b[64] = {0}, c[64], alpha = 1, beta = 0;
    for (int i = 0; i < 64; i++)
        c[i] = (float)i;
    last_info = 0;
    sgemm_(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    cr_assert_eq(last_info, info, "xerbla_ got %d, want %d", last_info, info);
    cr_assert_str_eq(last_name, "SGEMM ");
    for (int i = 0; i < 64; i++)
        cr_assert_eq(c[i], (float)i, "C changed on error");
}

Test(errors, fortran_in_netlib_order)
{
    expect_fortran_error("X", "Y", -1, 2, 2, 2, 2, 2, 1);
    expect_fortran_error("n", "Y", -1, 2, 2, 2, 2, 2, 2);
    expect_fortran_error("N", "c", -1, -1, 2, 2, 2, 2, 3);
    expect_fortran_error("N", "N", 2, -1, -1, 2, 2, 2, 4);
    expect_fortran_error("N", "N", 2, 2, -1, 0, 2, 2, 5);
    expect_fortran_error("N", "N", 4, 2, 2, 3, 1, 1, 8);
    expect_fortran_error("T", "N", 4, 2, 3, 2, 2, 4, 8);
    expect_fortran_error("N", "N", 2, 2, 3, 2, 2, 2, 10);
    expect_fortran_error("N", "T", 2, 5, 3, 2, 4, 2, 10);
    expect_fortran_error("N", "N", 3, 2, 2, 3, 2, 2, 13);
}

/* Calls cblas_sgemm with one bad argument and checks the report and C. */
static void expect_cblas_error(int layout, int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc, int info)
{
    float a[64] = {0}, b[64] = {0}, c[64];
    for (int i = 0; i < 64; i++)
        c[i] = (float)i;
    last_cblas_info = 0;
    cblas_sgemm(layout, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    cr_assert_eq(last_cblas_info, info, "cblas_xerbla got %d, want %d", last_cblas_info, info);
    cr_assert_str_eq(last_name, "cblas_sgemm");
    for (int i = 0; i < 64; i++)
        cr_assert_eq(c[i], (float)i, "C changed on error");
}

/* Without a RowMajorStrg in the program the drop-in passes cblas_sgemm's
 * own positions (ogb_xerbla.h). */
Test(errors, cblas_positions_in_both_layouts)
{
    expect_cblas_error(7, NO_TRANS, NO_TRANS, 2, 2, 2, 2, 2, 2, 1);
    expect_cblas_error(COL_MAJOR, 7, NO_TRANS, 2, 2, 2, 2, 2, 2, 2);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, 7, 2, 2, 2, 2, 2, 2, 3);
    expect_cblas_error(COL_MAJOR, NO_TRANS, NO_TRANS, -1, 2, 2, 2, 2, 2, 4);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, -1, 2, 2, 2, 2, 2, 4);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, -1, 2, 2, 2, 2, 5);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, 2, -1, 2, 2, 2, 6);
    expect_cblas_error(COL_MAJOR, NO_TRANS, NO_TRANS, 3, 2, 2, 2, 2, 3, 9);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, 2, 3, 2, 2, 2, 9);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, 3, 2, 2, 2, 3, 11);
    expect_cblas_error(ROW_MAJOR, NO_TRANS, NO_TRANS, 2, 3, 2, 2, 3, 2, 14);
}
