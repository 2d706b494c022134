/* Buffers on the device: where they live, uploads and downloads through the
 * staging buffer in chunks (sizes around the chunk exact, a write past the
 * end refused with nothing written), the zero-fill, and wrapping the
 * application's VkBuffer. Lavapipe's one memory type is device-local and
 * host-visible, so forced staging runs the copies of a discrete GPU. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

#define CHUNK 4096u

static og_context *staging_context(uint64_t chunk)
{
    og_context *ctx = NULL;
    og_context_desc d = {.tuning_db = "", .force_staging = 1, .staging_chunk_bytes = chunk};
    cr_assert_eq(og_context_create(&d, &ctx), OG_OK, "%s", og_last_error());
    return ctx;
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 9));
}

/* Writes n bytes at offset into a buffer of n + 2 * offset bytes, reads the
 * whole buffer back: the bytes written, zeros around them. */
static void round_trip(og_context *ctx, size_t n, size_t offset)
{
    size_t total = n + 2 * offset;
    unsigned char *src = malloc(n + 1), *got = malloc(total + 1);
    cr_assert(src && got);
    fill_pattern(src, n, (unsigned)n);
    og_buffer *buf = NULL;
    cr_assert_eq(og_buffer_create(ctx, total, &buf), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_write(buf, offset, src, n), OG_OK, "%zu bytes at %zu: %s", n, offset,
                 og_context_last_error(ctx));
    memset(got, 0xee, total);
    cr_assert_eq(og_buffer_read(buf, 0, got, total), OG_OK, "%s", og_context_last_error(ctx));
    for (size_t i = 0; i < offset; i++) {
        cr_assert_eq(got[i], 0, "%zu bytes at %zu: byte %zu before them is %u", n, offset, i, got[i]);
        cr_assert_eq(got[offset + n + i], 0, "%zu bytes at %zu: byte %zu after them is %u", n,
                     offset, i, got[offset + n + i]);
    }
    cr_assert(memcmp(got + offset, src, n) == 0, "%zu bytes at %zu differ", n, offset);
    /* A read of part of it, from an odd place, through the chunks. */
    if (n > 3) {
        memset(got, 0xee, n);
        cr_assert_eq(og_buffer_read(buf, offset + 3, got, n - 3), OG_OK);
        cr_assert(memcmp(got, src + 3, n - 3) == 0, "%zu bytes at %zu: partial read differs", n,
                  offset);
    }
    og_buffer_destroy(buf);
    free(src);
    free(got);
}

Test(memory, staged_sizes_around_the_chunk_are_exact)
{
    og_context *ctx = staging_context(CHUNK);
    cr_expect_str_eq(og_context_memory_placement(ctx), "device-local");
    const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        round_trip(ctx, sizes[i], 0);
        round_trip(ctx, sizes[i], 5);
    }
    close_context(ctx);
}

/* The default chunk (16 MiB): one byte either side of it, and three chunks
 * and 7 bytes. */
Test(memory, staged_sizes_around_the_default_chunk_are_exact, .timeout = 300)
{
    og_context *ctx = staging_context(0);
    const size_t chunk = 16u << 20;
    const size_t sizes[] = {chunk - 1, chunk + 1, 3 * chunk + 7};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        round_trip(ctx, sizes[i], 0);
    close_context(ctx);
}

/* Mapped on lavapipe unless forced: the same bytes either way. */
Test(memory, mapped_path_round_trips_too)
{
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = ""}, &ctx), OG_OK, "%s",
                 og_last_error());
    const char *env = getenv("OG_STAGING");
    if (!env || !*env || strcmp(env, "0") == 0)
        cr_expect_str_eq(og_context_memory_placement(ctx), "device-local-mapped");
    round_trip(ctx, 1000, 3);
    round_trip(ctx, 0, 1);
    close_context(ctx);
}

/* Nothing is written when the range reaches past the end, either way. */
Test(memory, write_past_the_end_is_refused_with_nothing_written)
{
    for (int forced = 0; forced < 2; forced++) {
        og_context *ctx = forced ? staging_context(CHUNK) : open_context();
        const size_t n = 2 * CHUNK + 10;
        unsigned char *src = malloc(n + 8), *got = malloc(n);
        cr_assert(src && got);
        fill_pattern(src, n + 8, 3);
        og_buffer *buf = make_buffer(ctx, src, n);
        unsigned char other[CHUNK + 8];
        memset(other, 0x5a, sizeof other);
        og_status st = og_buffer_write(buf, n - CHUNK, other, CHUNK + 1);
        cr_expect_eq(st, OG_ERROR_INVALID_ARGUMENT);
        cr_expect(strstr(og_context_last_error(ctx), "outside the buffer") != NULL, "%s",
                  og_context_last_error(ctx));
        cr_expect_eq(og_buffer_write(buf, n + 1, other, 0), OG_ERROR_INVALID_ARGUMENT);
        cr_expect_eq(og_buffer_read(buf, 1, got, n), OG_ERROR_INVALID_ARGUMENT);
        cr_assert_eq(og_buffer_read(buf, 0, got, n), OG_OK);
        cr_expect(memcmp(got, src, n) == 0, "forced %d: the refused write changed the buffer",
                  forced);
        og_buffer_destroy(buf);
        free(src);
        free(got);
        close_context(ctx);
    }
}

/* A new buffer reads as zeros (filled on the device), with the odd tail. */
Test(memory, new_buffers_are_zero)
{
    og_context *ctx = staging_context(CHUNK);
    const size_t n = 3 * CHUNK + 3;
    unsigned char *got = malloc(n);
    cr_assert(got);
    memset(got, 0xee, n);
    og_buffer *buf = NULL;
    cr_assert_eq(og_buffer_create(ctx, n, &buf), OG_OK);
    cr_assert_eq(og_buffer_read(buf, 0, got, n), OG_OK);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], 0, "byte %zu is %u", i, got[i]);
    og_buffer_destroy(buf);
    free(got);
    close_context(ctx);
}

/* New buffers in mapped memory (lavapipe's), small ones zeroed by the host
 * and a large one on the device, read as zeros although each round leaves
 * its memory full of 0xee for the allocator to hand out again. */
Test(memory, new_mapped_buffers_are_zero)
{
    og_context *ctx = open_context();
    static const size_t sizes[] = {3, 4096 + 1, 256 * 1024, 256 * 1024 + 4, 1u << 20};
    for (int round = 0; round < 3; round++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            unsigned char *got = malloc(n);
            cr_assert(got);
            og_buffer *buf = NULL;
            cr_assert_eq(og_buffer_create(ctx, n, &buf), OG_OK);
            cr_assert_eq(og_buffer_read(buf, 0, got, n), OG_OK);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(got[i], 0, "round %d, %zu bytes: byte %zu is %u", round, n, i,
                             got[i]);
            memset(got, 0xee, n);
            cr_assert_eq(og_buffer_write(buf, 0, got, n), OG_OK);
            og_buffer_destroy(buf);
            free(got);
        }
    close_context(ctx);
}

/* Wrapping: the arguments are checked, and a wrapped buffer is read and
 * written through the staging copies at its offset. The VkBuffer belongs to
 * an og_buffer of the same context here, so the test needs no memory of its own. */
Test(memory, wrapped_buffers_check_and_copy_at_their_offset)
{
    og_context *ctx = open_context();
    const size_t n = 256;
    unsigned char data[256];
    fill_pattern(data, n, 9);
    og_buffer *owner = make_buffer(ctx, data, n);
    VkBuffer vk = og_buffer_vk_buffer(owner);
    VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    og_buffer *w = NULL;
    cr_expect_eq(og_buffer_wrap(ctx, VK_NULL_HANDLE, 0, 16, storage, &w),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect_eq(og_buffer_wrap(ctx, vk, 0, 16, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &w),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "STORAGE_BUFFER") != NULL, "%s",
              og_context_last_error(ctx));
    cr_expect_eq(og_buffer_wrap(ctx, vk, 2, 16, storage, &w), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_eq(og_buffer_wrap(ctx, vk, 4, 15, storage, &w), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(w);

    /* Storage only: no copies. */
    cr_assert_eq(og_buffer_wrap(ctx, vk, 20, 64, storage, &w), OG_OK, "%s",
                 og_context_last_error(ctx));
    unsigned char got[64];
    cr_expect_eq(og_buffer_read(w, 0, got, 4), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "TRANSFER_SRC") != NULL, "%s",
              og_context_last_error(ctx));
    og_buffer_destroy(w);

    VkBufferUsageFlags all = storage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    cr_assert_eq(og_buffer_wrap(ctx, vk, 20, 64, all, &w), OG_OK);
    cr_expect_eq(og_buffer_size(w), 64);
    cr_expect_eq(og_buffer_vk_offset(w), 20);
    cr_assert_eq(og_buffer_read(w, 0, got, 64), OG_OK, "%s", og_context_last_error(ctx));
    cr_expect(memcmp(got, data + 20, 64) == 0, "the wrapped bytes are the owner's 20..83");
    unsigned char ones[8];
    memset(ones, 1, sizeof ones);
    cr_assert_eq(og_buffer_write(w, 60, ones, 4), OG_OK);
    cr_expect_eq(og_buffer_write(w, 62, ones, 4), OG_ERROR_INVALID_ARGUMENT);
    og_buffer_destroy(w); /* leaves the VkBuffer to its owner */
    unsigned char after[256];
    cr_assert_eq(og_buffer_read(owner, 0, after, n), OG_OK);
    cr_expect(memcmp(after, data, 80) == 0 && memcmp(after + 84, data + 84, n - 84) == 0);
    cr_expect(memcmp(after + 80, ones, 4) == 0, "the write landed at 20 + 60");
    og_buffer_destroy(owner);
    close_context(ctx);
}

/* og_buffer_create_host: mapped for the host whatever the placement (its
 * writes and og_buffer_read agree), while a staged device buffer has no
 * host pointer; kernels refuse it as an operand, naming it, with C
 * untouched. */
Test(memory, host_buffers_are_mapped_and_kernels_refuse_them)
{
    og_context *ctx = staging_context(CHUNK);
    const size_t n = 1001;
    unsigned char data[1001], got[1001];
    fill_pattern(data, n, 4);
    og_buffer *host = NULL;
    cr_assert_eq(og_buffer_create_host(ctx, n, &host), OG_OK, "%s", og_context_last_error(ctx));
    unsigned char *p = og_buffer_host_pointer(host);
    cr_assert_not_null(p, "a host buffer is mapped");
    memcpy(p, data, n);
    cr_assert_eq(og_buffer_read(host, 0, got, n), OG_OK, "%s", og_context_last_error(ctx));
    cr_expect(memcmp(got, data, n) == 0, "og_buffer_read sees the host's writes");
    cr_assert_eq(og_buffer_write(host, 7, data, 100), OG_OK);
    cr_expect(memcmp(p + 7, data, 100) == 0, "og_buffer_write lands in the mapping");

    float c0[16];
    for (int i = 0; i < 16; i++)
        c0[i] = (float)i;
    og_buffer *dev = make_buffer(ctx, c0, sizeof c0);
    cr_expect_null(og_buffer_host_pointer(dev), "a staged buffer has no host pointer");
    og_gemm *g = NULL;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_gemm_args args = {.m = 4, .n = 4, .k = 4, .batch = 1, .alpha = 1, .beta = 0,
                         .a = host, .b = dev, .c = dev, .lda = 4, .ldb = 4, .ldc = 4};
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "A is a host buffer") != NULL, "%s", og_context_last_error(ctx));
    args.a = dev;
    args.c = host;
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "C is a host buffer") != NULL, "%s", og_context_last_error(ctx));
    float c1[16];
    cr_assert_eq(og_buffer_read(dev, 0, c1, sizeof c1), OG_OK);
    cr_expect(memcmp(c0, c1, sizeof c0) == 0, "nothing written");
    cr_assert_eq(og_buffer_read(host, 0, got, n), OG_OK);
    cr_expect(memcmp(got + 7, data, 100) == 0, "nothing written to the host buffer");
    og_gemm_destroy(g);
    og_buffer_destroy(dev);
    og_buffer_destroy(host);
    close_context(ctx);
}
