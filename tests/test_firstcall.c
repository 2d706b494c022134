/* Fast first call: the driver's pipeline cache kept in the cache directory
 * (runtime/vk/og_pipeline_cache.c): written at og_context_destroy with a header
 * of this device, handed to the next context's driver, never when damaged,
 * truncated, of another device or not a file (and then replaced), off with
 * OG_SPIRV_CACHE=0 or without a home; and ogtune bench --first-call. Each
 * test has its own XDG_CACHE_HOME (og_tmpdir), the environment restored after. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_ogtune.h"
#include "og_test.h"
#include "og_tmpdir.h"

/* The variables the tests change, and their values before. */
static const char *const env_names[] = {"XDG_CACHE_HOME", "HOME", "OG_SPIRV_CACHE", "TMPDIR"};
#define ENV_COUNT (sizeof env_names / sizeof env_names[0])
static char *env_saved[ENV_COUNT];

static void setup(void)
{
    make_tmpdir();
    for (size_t i = 0; i < ENV_COUNT; i++) {
        const char *v = getenv(env_names[i]);
        env_saved[i] = v ? strdup(v) : NULL;
        cr_assert(!v || env_saved[i], "out of memory");
    }
    setenv("XDG_CACHE_HOME", og_tmpdir, 1);
    unsetenv("OG_SPIRV_CACHE");
}

static void teardown(void)
{
    for (size_t i = 0; i < ENV_COUNT; i++) {
        if (env_saved[i])
            setenv(env_names[i], env_saved[i], 1);
        else
            unsetenv(env_names[i]);
        free(env_saved[i]);
        env_saved[i] = NULL;
    }
    remove_tmpdir();
}

TestSuite(firstcall, .init = setup, .fini = teardown);

/* The file the runtime must use for a device: the cache directory, then
 * vendorID, deviceID and driverVersion (8 hex digits) and the UUID (32). */
static void expected_path(char *out, size_t len, const VkPhysicalDeviceProperties *p)
{
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
        snprintf(uuid + 2 * i, 3, "%02x", p->pipelineCacheUUID[i]);
    snprintf(out, len, "%s/onegpu/pipelines-%08x-%08x-%08x-%s.bin", og_tmpdir, p->vendorID,
             p->deviceID, p->driverVersion, uuid);
}

/* A VkPipelineCacheHeaderVersionOne for p, least significant byte first. */
static void make_header(unsigned char h[32], const VkPhysicalDeviceProperties *p)
{
    const uint32_t fields[4] = {32, VK_PIPELINE_CACHE_HEADER_VERSION_ONE, p->vendorID, p->deviceID};
    for (int f = 0; f < 4; f++)
        for (int b = 0; b < 4; b++)
            h[4 * f + b] = (unsigned char)(fields[f] >> (8 * b));
    memcpy(h + 16, p->pipelineCacheUUID, VK_UUID_SIZE);
}

/* Asserts that path is a file of driver data with the header of p followed
 * by its checksum; returns the bytes of driver data. */
static size_t check_cache_file(const char *path, const VkPhysicalDeviceProperties *p)
{
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0, "no pipeline cache file %s", path);
    cr_assert(S_ISREG(st.st_mode), "%s is not a regular file", path);
    cr_assert_geq(st.st_size, 32 + 8, "%s has %lld bytes: no room for a header and a checksum",
                  path, (long long)st.st_size);
    size_t n = (size_t)st.st_size;
    unsigned char *data = malloc(n);
    cr_assert_not_null(data);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(data, 1, n, f), n);
    fclose(f);
    n -= 8;
    unsigned char want[32];
    make_header(want, p);
    cr_expect(memcmp(data, want, sizeof want) == 0,
              "%s does not start with this device's VkPipelineCacheHeaderVersionOne", path);
    uint64_t sum;
    memcpy(&sum, data + n, sizeof sum);
    cr_expect_eq(sum, og_fnv1a(OG_FNV_OFFSET, data, n), "%s: wrong checksum", path);
    free(data);
    return n;
}

/* C = A * B for 8 x 8 matrices of small integers on ctx, compared exactly. */
static void check_gemm(og_context *ctx)
{
    enum { n = 8 };
    float a[n * n], b[n * n], c[n * n] = {0}, want[n * n] = {0};
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)(i % 5 - 2);
        b[i] = (float)((3 * i) % 7 - 3);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int p = 0; p < n; p++)
                want[i * n + j] += a[i * n + p] * b[p * n + j];
    og_gemm_args args = {.m = n, .n = n, .k = n, .alpha = 1, .lda = n, .ldb = n, .ldc = n};
    args.a = make_buffer(ctx, a, sizeof a);
    args.b = make_buffer(ctx, b, sizeof b);
    args.c = make_buffer(ctx, c, sizeof c);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, c, sizeof c), OG_OK);
    for (int i = 0; i < n * n; i++)
        cr_expect_eq(c[i], want[i], "C[%d] is %g, not %g", i, (double)c[i], (double)want[i]);
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
}

/* A context that ran a GEMM, destroyed; fills its device's properties. */
static void run_one(VkPhysicalDeviceProperties *props)
{
    og_context *ctx = open_context();
    *props = ctx->props;
    check_gemm(ctx);
    close_context(ctx);
}

Test(firstcall, written_at_destroy_with_this_devices_header)
{
    og_context *ctx = open_context();
    char path[1024];
    expected_path(path, sizeof path, &ctx->props);
    cr_expect_str_eq(ctx->pipeline_cache_path, path);
    cr_expect_neq(ctx->pipeline_cache, VK_NULL_HANDLE);
    cr_expect_eq(ctx->pipeline_cache_loaded, 0, "an empty cache directory gave %zu bytes",
                 ctx->pipeline_cache_loaded);
    close_context(ctx); /* no pipeline: nothing to keep */
    cr_expect_neq(access(path, F_OK), 0, "a context without pipelines wrote %s", path);

    ctx = open_context();
    VkPhysicalDeviceProperties props = ctx->props;
    check_gemm(ctx);
    cr_expect_neq(access(path, F_OK), 0, "written before og_context_destroy");
    close_context(ctx);
    check_cache_file(path, &props);
}

Test(firstcall, next_context_hands_it_to_the_driver)
{
    VkPhysicalDeviceProperties props;
    char path[1024];
    run_one(&props);
    expected_path(path, sizeof path, &props);
    size_t bytes = check_cache_file(path, &props);
    og_context *ctx = open_context();
    cr_expect_eq(ctx->pipeline_cache_loaded, bytes, "the driver got %zu of the file's %zu bytes",
                 ctx->pipeline_cache_loaded, bytes);
    check_gemm(ctx);
    close_context(ctx);
    cr_expect_geq(check_cache_file(path, &props), bytes, "the rewritten cache lost data");
}

/* How a bad file is made: raw bytes (no checksum), or through og_cache_write
 * (a checksum that holds), then cut short. */
typedef enum { BAD_RAW, BAD_CHECKSUMMED, BAD_CUT, BAD_FIFO } bad_kind;

Test(firstcall, bad_files_are_ignored_and_replaced)
{
    /* Each written as the header of this device (unless garbage), one byte
     * changed by flip, then random bytes up to `bytes`. */
    static const struct {
        const char *what;
        bad_kind kind;
        int garbage;   /* no header at all */
        int at, flip;  /* header byte at ^= flip (flip 0: none) */
        size_t bytes;  /* written before the checksum */
        size_t loaded; /* what the driver must get */
    } cases[] = {
        {"a valid header (control)", BAD_CHECKSUMMED, 0, 0, 0, 32, 32},
        {"an empty file", BAD_RAW, 0, 0, 0, 0, 0},
        {"garbage", BAD_RAW, 1, 0, 0, 4096, 0},
        {"garbage with a valid checksum", BAD_CHECKSUMMED, 1, 0, 0, 4096, 0},
        {"a header cut to 20 bytes", BAD_CHECKSUMMED, 0, 0, 0, 20, 0},
        {"a file cut by 4 bytes", BAD_CUT, 0, 0, 0, 64, 0},
        {"header size 16", BAD_CHECKSUMMED, 0, 0, 32 ^ 16, 32, 0},
        {"header version 2", BAD_CHECKSUMMED, 0, 4, 1 ^ 2, 32, 0},
        {"another vendor", BAD_CHECKSUMMED, 0, 8, 1, 32, 0},
        {"another device", BAD_CHECKSUMMED, 0, 12, 1, 32, 0},
        {"another pipelineCacheUUID", BAD_CHECKSUMMED, 0, 31, 0x80, 32, 0},
        {"a FIFO", BAD_FIFO, 0, 0, 0, 0, 0},
    };
    og_context *probe = open_context();
    VkPhysicalDeviceProperties props = probe->props;
    close_context(probe);
    char path[1024];
    expected_path(path, sizeof path, &props);
    unsigned char data[4096];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t seed = 7 + c;
        for (size_t i = 0; i < sizeof data; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            data[i] = (unsigned char)(seed >> 56);
        }
        if (!cases[c].garbage)
            make_header(data, &props);
        data[cases[c].at] ^= (unsigned char)cases[c].flip;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/onegpu", og_tmpdir);
        mkdir(dir, 0700);
        unlink(path);
        if (cases[c].kind == BAD_FIFO) {
            cr_assert_eq(mkfifo(path, 0600), 0);
        } else if (cases[c].kind == BAD_RAW) {
            FILE *f = fopen(path, "wb");
            cr_assert_not_null(f);
            cr_assert_eq(fwrite(data, 1, cases[c].bytes, f), cases[c].bytes);
            fclose(f);
        } else {
            cr_assert_eq(og_cache_write(path, data, cases[c].bytes), 0);
            if (cases[c].kind == BAD_CUT)
                cr_assert_eq(truncate(path, (off_t)(cases[c].bytes + 8 - 4)), 0);
        }
        og_context *ctx = open_context();
        cr_expect_eq(ctx->pipeline_cache_loaded, cases[c].loaded,
                     "%s: the driver got %zu bytes, not %zu", cases[c].what,
                     ctx->pipeline_cache_loaded, cases[c].loaded);
        check_gemm(ctx);
        close_context(ctx);
        check_cache_file(path, &props); /* replaced by the driver's data */
    }
}

Test(firstcall, off_without_a_cache_directory)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/onegpu", og_tmpdir);
    setenv("OG_SPIRV_CACHE", "0", 1);
    VkPhysicalDeviceProperties props;
    run_one(&props);
    cr_expect_neq(access(dir, F_OK), 0, "OG_SPIRV_CACHE=0 wrote %s", dir);
    og_context *ctx = open_context();
    cr_expect_str_eq(ctx->pipeline_cache_path, "");
    close_context(ctx);

    unsetenv("OG_SPIRV_CACHE");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    ctx = open_context();
    cr_expect_str_eq(ctx->pipeline_cache_path, "", "no home, yet a cache file");
    cr_expect_eq(ctx->pipeline_cache_loaded, 0);
    check_gemm(ctx);
    close_context(ctx);
}

/* The number after key in a JSON text, or -1. */
static double json_number(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    return at ? strtod(at + strlen(key), NULL) : -1;
}

Test(firstcall, ogtune_bench_first_call, .timeout = 300)
{
    char tmp[512], *out;
    tmp_path(tmp, sizeof tmp, "tmp");
    cr_assert_eq(mkdir(tmp, 0700), 0);
    setenv("TMPDIR", tmp, 1);
    cr_assert_eq(ogtune("bench --first-call --json", &out), 0, "ogtune failed:\n%s", out);
    double cold = json_number(out, "\"cold_ms\":"), warm = json_number(out, "\"warm_ms\":");
    cr_expect_gt(cold, 0, "cold first call: %g ms in\n%s", cold, out);
    cr_expect_gt(warm, 0, "warm first call: %g ms in\n%s", warm, out);
    /* What makes the warm call cheap, counted rather than timed: the cold
     * process compiled the kernel, the warm one read it from the disk. */
    cr_expect_geq(json_number(out, "\"cold_compiled\":"), 1, "the cold call compiled nothing:\n%s",
                  out);
    cr_expect_eq(json_number(out, "\"warm_compiled\":"), 0,
                 "the warm call compiled again (the SPIR-V cache missed):\n%s", out);
    cr_expect_gt(json_number(out, "\"warm_pipeline_cache_bytes\":"), 0,
                 "the warm context was handed no pipeline cache:\n%s", out);
    free(out);
    /* It measured in a directory of its own, removed after; the user's cache
     * directory is untouched. */
    cr_expect_eq(rmdir(tmp), 0, "ogtune left files in %s", tmp);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/onegpu", og_tmpdir);
    cr_expect_neq(access(dir, F_OK), 0, "ogtune wrote into XDG_CACHE_HOME");
}
