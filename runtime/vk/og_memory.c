/* Which memory types onegpu uses, from a device's memory properties alone
 * (the rules are on og_memory_choose in og_vk.h). */
#include "og_vk.h"

const char *og_placement_name(og_placement p)
{
    switch (p) {
    case OG_PLACEMENT_DEVICE_LOCAL:
        return "device-local";
    case OG_PLACEMENT_DEVICE_MAPPED:
        return "device-local-mapped";
    case OG_PLACEMENT_HOST_VISIBLE:
        return "host-visible";
    }
    return "unknown";
}

static int has(const VkMemoryType *t, VkMemoryPropertyFlags want)
{
    return (t->propertyFlags & want) == want;
}

/* The first type of bits with every flag of want and none of avoid, or -1. */
static int find(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want,
                VkMemoryPropertyFlags avoid)
{
    for (uint32_t i = 0; i < mp->memoryTypeCount && i < 32; i++)
        if ((bits >> i & 1u) && has(&mp->memoryTypes[i], want) &&
            !(mp->memoryTypes[i].propertyFlags & avoid))
            return (int)i;
    return -1;
}

void og_memory_choose(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, int force_staging,
                      og_memory_choice *out)
{
    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    /* Lazily allocated and protected memory cannot back a storage buffer the host reads. */
    const VkMemoryPropertyFlags never =
        VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT;
    *out = (og_memory_choice){.operand_type = -1, .staging_type = -1};

    VkDeviceSize largest_local = 0;
    for (uint32_t h = 0; h < mp->memoryHeapCount; h++)
        if (mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT &&
            mp->memoryHeaps[h].size > largest_local)
            largest_local = mp->memoryHeaps[h].size;

    /* A device-local, host-visible type in a heap about as large as the
     * device's memory: meant for operands (UMA, resizable BAR). */
    int mappable = -1;
    for (uint32_t i = 0; i < mp->memoryTypeCount && i < 32; i++) {
        const VkMemoryType *t = &mp->memoryTypes[i];
        if ((bits >> i & 1u) && has(t, local | visible) && !(t->propertyFlags & never) &&
            t->heapIndex < mp->memoryHeapCount &&
            mp->memoryHeaps[t->heapIndex].size >= largest_local / 2 &&
            (mappable < 0 || (has(t, cached) && !has(&mp->memoryTypes[mappable], cached))))
            mappable = (int)i; /* the first, or the first cached one (fast reads) */
    }
    out->staging_type = find(mp, bits, visible | cached, local | never);
    if (out->staging_type < 0)
        out->staging_type = find(mp, bits, visible, local | never);
    if (out->staging_type < 0)
        out->staging_type = find(mp, bits, visible, never);

    if (mappable >= 0 && !force_staging) {
        out->operand_type = mappable;
        out->map_writes = 1;
        out->map_reads = has(&mp->memoryTypes[mappable], cached) || out->staging_type < 0;
        out->placement = OG_PLACEMENT_DEVICE_MAPPED;
        return;
    }
    out->operand_type = find(mp, bits, local, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | never);
    if (out->operand_type < 0)
        out->operand_type = find(mp, bits, local, never);
    if (out->operand_type >= 0) {
        out->placement = OG_PLACEMENT_DEVICE_LOCAL;
        if (out->staging_type < 0 && has(&mp->memoryTypes[out->operand_type], visible)) {
            /* No other host-visible type: the operands' own mapping it is. */
            out->map_writes = out->map_reads = 1;
            out->placement = OG_PLACEMENT_DEVICE_MAPPED;
        }
        return;
    }
    /* No device-local memory at all: host memory, mapped. */
    out->operand_type = find(mp, bits, visible, never);
    out->map_writes = out->map_reads = out->operand_type >= 0;
    out->placement = OG_PLACEMENT_HOST_VISIBLE;
}
