/* ogtune devices: every Vulkan device, its limits, its queue and memory,
 * and which memory types onegpu uses for what (og_context_facts). */
#include <stdio.h>

#include "og_commands.h"

static const struct {
    VkMemoryPropertyFlags bit;
    const char *name;
} memory_flags[] = {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "device-local"},
                    {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "host-visible"},
                    {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "host-coherent"},
                    {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "host-cached"},
                    {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "lazily-allocated"},
                    {VK_MEMORY_PROPERTY_PROTECTED_BIT, "protected"}};

/* What onegpu uses type t for ("" for nothing). */
static const char *type_use(const og_context_facts *mc, int t)
{
    if (t == mc->operand_type && t == mc->staging_type && !mc->map_writes)
        return "operands and scratch; staging";
    if (t == mc->operand_type)
        return mc->map_writes ? "operands and scratch, mapped" : "operands and scratch";
    return t == mc->staging_type && !(mc->map_writes && mc->map_reads) ? "staging" : "";
}

static void print_memory_json(const og_context *ctx)
{
    og_context_facts facts;
    og_context_facts_of(ctx, &facts);
    const VkPhysicalDeviceMemoryProperties *mp = &facts.memory_props;
    const og_context_facts *mc = &facts;
    printf(",\"memory_placement\":\"%s\",\"operand_type\":%d,\"staging_type\":%d,"
           "\"map_writes\":%s,\"map_reads\":%s,\"heaps\":[",
           og_context_memory_placement(ctx), mc->operand_type, mc->staging_type,
           mc->map_writes ? "true" : "false", mc->map_reads ? "true" : "false");
    for (uint32_t h = 0; h < mp->memoryHeapCount; h++)
        printf("%s{\"size\":%llu,\"device_local\":%s}", h ? "," : "",
               (unsigned long long)mp->memoryHeaps[h].size,
               mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? "true" : "false");
    printf("],\"types\":[");
    for (uint32_t t = 0; t < mp->memoryTypeCount; t++) {
        printf("%s{\"heap\":%u,\"flags\":[", t ? "," : "", mp->memoryTypes[t].heapIndex);
        int first = 1;
        for (size_t f = 0; f < sizeof memory_flags / sizeof memory_flags[0]; f++)
            if (mp->memoryTypes[t].propertyFlags & memory_flags[f].bit) {
                printf("%s\"%s\"", first ? "" : ",", memory_flags[f].name);
                first = 0;
            }
        printf("],\"use\":\"%s\"}", type_use(mc, (int)t));
    }
    printf("]");
}

static void print_memory_text(const og_context *ctx)
{
    og_context_facts facts;
    og_context_facts_of(ctx, &facts);
    const VkPhysicalDeviceMemoryProperties *mp = &facts.memory_props;
    const og_context_facts *mc = &facts;
    for (uint32_t h = 0; h < mp->memoryHeapCount; h++)
        printf("   heap %u: %.1f GiB%s\n", h, (double)mp->memoryHeaps[h].size / (1u << 30),
               mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? ", device-local" : "");
    for (uint32_t t = 0; t < mp->memoryTypeCount; t++) {
        printf("   type %u: heap %u,", t, mp->memoryTypes[t].heapIndex);
        for (size_t f = 0; f < sizeof memory_flags / sizeof memory_flags[0]; f++)
            if (mp->memoryTypes[t].propertyFlags & memory_flags[f].bit)
                printf(" %s", memory_flags[f].name);
        const char *use = type_use(mc, (int)t);
        printf("%s%s\n", *use ? "  <- onegpu: " : "", use);
    }
    printf("   memory: %s (writes %s, reads %s)\n", og_context_memory_placement(ctx),
           mc->map_writes ? "mapped" : "staged", mc->map_reads ? "mapped" : "staged");
}

int og_cmd_devices(const og_cli *o)
{
    if (o->json)
        printf("[");
    for (int i = 0;; i++) {
        char index[16];
        snprintf(index, sizeof index, "%d", i);
        og_context_desc desc = {.device = index};
        og_context *ctx;
        og_status st = og_context_create(&desc, &ctx);
        if (st == OG_ERROR_NOT_FOUND && i > 0)
            break;
        if (st != OG_OK) {
            og_cli_fail("ogtune: %s\n", og_last_error());
            return 1;
        }
        const og_device_info *d = og_context_device_info(ctx);
        const og_limits *l = og_context_limits(ctx);
        og_context_facts f;
        og_context_facts_of(ctx, &f);
        if (o->json) {
            printf("%s{\"index\":%d,\"name\":", i ? "," : "", i);
            og_json_string(stdout, d->name);
            printf(",\"driver\":");
            og_json_string(stdout, d->driver_name);
            printf(",\"driver_info\":");
            og_json_string(stdout, d->driver_info);
            printf(",\"pipeline_cache_uuid\":\"%s\"", d->pipeline_cache_uuid);
            printf(",\"vendor_id\":%u,\"device_id\":%u,\"driver_id\":%u,\"driver_version\":%u,"
                   "\"subgroup_size\":%u,\"max_invocations\":%u,\"max_shared_bytes\":%u,"
                   "\"max_storage_range\":%llu,\"queue_family\":%u,\"timestamp_bits\":%u,"
                   "\"timestamps\":%s",
                   d->vendor_id, d->device_id, d->driver_id, d->driver_version, l->subgroup_size,
                   l->max_invocations, l->max_shared_bytes,
                   (unsigned long long)l->max_storage_range, f.queue_family, f.timestamp_bits,
                   f.timestamp_bits ? "true" : "false");
            print_memory_json(ctx);
            printf("}");
        } else {
            printf("%d: %s (%s %s)\n   vendor 0x%04x device 0x%04x driver id %u version %u\n"
                   "   pipeline cache UUID %s\n"
                   "   subgroup %u, %u invocations, %u bytes shared, storage range %llu\n"
                   "   queue family %u, timestamps %s (%u valid bits)\n",
                   i, d->name, d->driver_name, d->driver_info, d->vendor_id, d->device_id,
                   d->driver_id, d->driver_version, d->pipeline_cache_uuid, l->subgroup_size,
                   l->max_invocations, l->max_shared_bytes,
                   (unsigned long long)l->max_storage_range, f.queue_family,
                   f.timestamp_bits ? "yes" : "no", f.timestamp_bits);
            print_memory_text(ctx);
        }
        og_context_destroy(ctx);
    }
    if (o->json)
        printf("]\n");
    return 0;
}
