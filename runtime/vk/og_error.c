/* Errors: a status and a message naming the operation and the dimension,
 * kept on the context, or per thread for og_context_create. */
#include <stdio.h>

#include "og_vk.h"

static _Thread_local char create_error[OG_ERROR_MAX];

void og_last_error_clear(void)
{
    create_error[0] = '\0';
}

const char *og_last_error(void)
{
    return create_error;
}

og_status og_failf(char *err, og_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, OG_ERROR_MAX, fmt, ap);
    va_end(ap);
    return st;
}

og_status og_fail(og_context *ctx, og_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx ? ctx->error : create_error, OG_ERROR_MAX, fmt, ap);
    va_end(ap);
    return st;
}

og_status og_vk_fail(og_context *ctx, VkResult r, const char *what)
{
    og_status st = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                       ? OG_ERROR_OUT_OF_MEMORY
                   : r == VK_ERROR_DEVICE_LOST ? OG_ERROR_DEVICE_LOST
                                               : OG_ERROR_VULKAN;
    return og_fail(ctx, st, "%s failed (VkResult %d)", what, (int)r);
}

const char *og_context_last_error(const og_context *ctx)
{
    return ctx ? ctx->error : create_error;
}

