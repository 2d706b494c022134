/*
 * gemm: a float32 product with an installed libonegpu.
 *
 * Creates a context on the default Vulkan device (OG_DEVICE picks another),
 * computes C = A * B for a 64 x 40 A and a 40 x 48 B, compares C with a host
 * loop and prints one line, with the kernel the runtime chose and where it
 * came from: the built-in default, or a tuning database (the user's, or the
 * pre-tuned ones installed with the library). The elements are multiples of
 * 1/8 below 1, so every product and sum is exact in float32 and C must match
 * bit for bit, whatever kernel and summation order the runtime picks. Exits
 * 1 when a call fails or C differs.
 *
 * Build with CMake (examples/CMakeLists.txt, CMAKE_PREFIX_PATH=<prefix>) or
 *     cc gemm.c $(pkg-config --cflags --libs onegpu)
 */
#include <stdio.h>
#include <stdlib.h>

#include <onegpu.h>

enum { M = 64, N = 48, K = 40 };

/* A deterministic value in {-5/8, ..., 5/8}. */
static float element(int i, int j)
{
    return (float)((i * 7 + j * 3) % 11 - 5) / 8.0f;
}

/* Runs the product on the device, reads it into c and describes its kernel
 * into kernel (len bytes). */
static og_status device_gemm(og_context *ctx, const float *a, const float *b, float *c,
                             char *kernel, size_t len)
{
    og_buffer *da = NULL, *db = NULL, *dc = NULL;
    og_gemm *gemm = NULL;
    og_status st = og_buffer_create(ctx, sizeof(float) * M * K, &da);
    if (st == OG_OK)
        st = og_buffer_create(ctx, sizeof(float) * K * N, &db);
    if (st == OG_OK)
        st = og_buffer_create(ctx, sizeof(float) * M * N, &dc);
    if (st == OG_OK)
        st = og_buffer_write(da, 0, a, sizeof(float) * M * K);
    if (st == OG_OK)
        st = og_buffer_write(db, 0, b, sizeof(float) * K * N);
    if (st == OG_OK)
        st = og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &gemm);
    if (st == OG_OK) {
        og_gemm_args args = {.m = M,
                             .n = N,
                             .k = K,
                             .alpha = 1,
                             .beta = 0,
                             .a = da,
                             .b = db,
                             .c = dc,
                             .lda = K,
                             .ldb = N,
                             .ldc = N};
        st = og_gemm_describe(gemm, &args, kernel, len);
        if (st == OG_OK)
            st = og_gemm_run(gemm, &args);
    }
    if (st == OG_OK)
        st = og_buffer_read(dc, 0, c, sizeof(float) * M * N);
    if (st != OG_OK)
        fprintf(stderr, "gemm: %s\n", og_context_last_error(ctx));
    og_gemm_destroy(gemm);
    og_buffer_destroy(dc);
    og_buffer_destroy(db);
    og_buffer_destroy(da);
    return st;
}

int main(void)
{
    static float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            a[i * K + k] = element(i, k);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            b[k * N + j] = element(j, k + 1);

    og_context *ctx;
    if (og_context_create(NULL, &ctx) != OG_OK) {
        fprintf(stderr, "gemm: %s\n", og_last_error());
        return 1;
    }
    char kernel[512];
    int failed = device_gemm(ctx, a, b, c, kernel, sizeof kernel) != OG_OK;
    for (int i = 0; i < M && !failed; i++) {
        for (int j = 0; j < N && !failed; j++) {
            float want = 0;
            for (int k = 0; k < K; k++)
                want += a[i * K + k] * b[k * N + j];
            if (c[i * N + j] != want) {
                fprintf(stderr, "gemm: C(%d, %d) = %g, the host loop gives %g\n", i, j,
                        c[i * N + j], want);
                failed = 1;
            }
        }
    }
    if (!failed)
        printf("gemm: %dx%dx%d float32 on %s matches the host loop; kernel %s\n", M, N, K,
               og_context_device_name(ctx), kernel);
    og_context_destroy(ctx);
    return failed ? 1 : 0;
}
