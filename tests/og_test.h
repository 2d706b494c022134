/* Helpers shared by the Criterion tests that run GEMMs on a Vulkan device. */
#ifndef OG_TEST_H
#define OG_TEST_H

#include <criterion/criterion.h>
#include <inttypes.h>

#include "og_tuner.h"

/* A context on the default device (OG_DEVICE), or the test fails. */
static inline og_context *open_context(void)
{
    og_context *ctx = NULL;
    og_status st = og_context_create(NULL, &ctx);
    cr_assert_eq(st, OG_OK, "og_context_create: %d: %s", st, og_last_error());
    return ctx;
}

/* Destroys the context and fails the test if the validation layer (on
 * with OG_VALIDATION=1) reported any error during it. */
static inline void close_context(og_context *ctx)
{
    uint32_t errors = og_context_validation_errors(ctx);
    og_context_destroy(ctx);
    cr_assert_eq(errors, 0, "%" PRIu32 " Vulkan validation errors", errors);
}

#endif /* OG_TEST_H */
