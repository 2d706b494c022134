/* Faults a test plants in a tuner worker through OG_TUNE_FAULT=KIND:PARAMS,
 * to show what reaches the tuner and the tests when a candidate's
 * measurement goes wrong in that way. */
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

static const struct {
    og_plant kind;
    const char *name;
} kinds[] = {
    {OG_PLANT_DEVICE_LOST, "device-lost"},
    {OG_PLANT_VALIDATION, "validation"},
};

og_plant og_plant_for(const og_params *p)
{
    const char *fault = getenv("OG_TUNE_FAULT");
    const char *colon = fault ? strchr(fault, ':') : NULL;
    if (!colon)
        return OG_PLANT_NONE;
    char text[256];
    og_params_format(p, text, sizeof text);
    if (strcmp(colon + 1, text) != 0)
        return OG_PLANT_NONE;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == (size_t)(colon - fault) &&
            strncmp(fault, kinds[i].name, (size_t)(colon - fault)) == 0)
            return kinds[i].kind;
    return OG_PLANT_NONE;
}

/* A buffer of size 0 breaks VUID-VkBufferCreateInfo-size-00912. Only where
 * the layer is on: a driver need not take one. */
static void break_a_rule(og_context *ctx)
{
    if (!ctx->messenger)
        return;
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = 0,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf = VK_NULL_HANDLE;
    if (ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf) == VK_SUCCESS)
        ctx->vk.vkDestroyBuffer(ctx->device, buf, NULL);
}

void og_plant_fault(og_plant kind, og_context *ctx)
{
    switch (kind) {
    case OG_PLANT_VALIDATION:
        break_a_rule(ctx);
        break;
    case OG_PLANT_NONE:
    case OG_PLANT_DEVICE_LOST:
        break;
    }
}
