/* The kernel families' table: one line per og_variant (og_family.h). */
#include <string.h>

#include "og_family.h"

static const og_family *const families[] = {
    [OG_VARIANT_TILE] = &og_family_tile,
    [OG_VARIANT_FEWROWS] = &og_family_fewrows,
    [OG_VARIANT_INT8_TILE] = &og_family_int8_tile,
    [OG_VARIANT_INT8_SKINNY] = &og_family_int8_skinny,
    [OG_VARIANT_COOPMAT] = &og_family_coopmat,
    [OG_VARIANT_INT8_COOPMAT] = &og_family_int8_coopmat,
    [OG_VARIANT_QDECODE] = &og_family_qdecode,
    [OG_VARIANT_DECODE] = &og_family_decode,
    [OG_VARIANT_COOPMAT2] = &og_family_coopmat2,
    [OG_VARIANT_DEPTHWISE] = &og_family_depthwise,
};

#define FAMILIES (sizeof families / sizeof families[0])

const og_family *og_family_find(og_variant variant)
{
    size_t v = (size_t)variant;
    return v < FAMILIES ? families[v] : NULL;
}

const og_family *og_family_of(const og_params *p)
{
    const og_family *f = og_family_find(p->variant);
    return f ? f : &og_family_tile;
}

int og_family_can(const og_params *p, unsigned what)
{
    return (og_family_of(p)->can & what) == what;
}

const og_family *og_family_named(const char *name)
{
    for (size_t i = 0; i < FAMILIES; i++)
        if (families[i] && strcmp(name, families[i]->name) == 0)
            return families[i];
    return NULL;
}
