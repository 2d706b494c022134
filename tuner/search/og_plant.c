/* Faults a test plants in a tuner worker through OG_TUNE_FAULT=KIND:PARAMS,
 * to show what reaches the tuner and the tests when a candidate's
 * measurement goes wrong in that way. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

static const struct {
    og_plant kind;
    const char *name;
} kinds[] = {
    {OG_PLANT_DEVICE_LOST, "device-lost"},
    {OG_PLANT_VALIDATION, "validation"},
    {OG_PLANT_CRASH, "crash"},
    {OG_PLANT_LEAK, "leak"},
    {OG_PLANT_POISON, "poison"},
};

/* AddressSanitizer's own calls, where it is linked in (weak: absent, they
 * are NULL). */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));

og_plant og_plant_for(const og_params *p)
{
    const char *fault = getenv("OG_TUNE_FAULT");
    const char *colon = fault ? strchr(fault, ':') : NULL;
    if (!colon)
        return OG_PLANT_NONE;
    char text[OG_PARAMS_MAX];
    og_params_format(p, text, sizeof text);
    if (strcmp(colon + 1, text) != 0)
        return OG_PLANT_NONE;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == (size_t)(colon - fault) &&
            strncmp(fault, kinds[i].name, (size_t)(colon - fault)) == 0)
            return kinds[i].kind;
    return OG_PLANT_NONE;
}

/* A block whose only pointer is dropped (volatile: the compiler keeps the
 * allocation and the store that forgets it). */
static void leak(void)
{
    void *volatile block = malloc(64);
    block = NULL;
    (void)block;
}

/* A block marked off limits, then read: a legal read in C, an error to
 * AddressSanitizer, which reports it and ends the process (so the block is
 * freed only without it). */
static void read_poisoned(void)
{
    volatile unsigned char *block = malloc(64);
    if (!block || !__asan_poison_memory_region)
        goto done;
    block[0] = 1;
    __asan_poison_memory_region((const volatile void *)block, 64);
    (void)block[0];
    __asan_unpoison_memory_region((const volatile void *)block, 64);
done:
    free((void *)block);
}

void og_plant_fault(og_plant kind, og_context *ctx)
{
    switch (kind) {
    case OG_PLANT_VALIDATION:
        og_validation_provoke(ctx);
        break;
    case OG_PLANT_CRASH:
        raise(SIGKILL);
        break;
    case OG_PLANT_LEAK:
        leak();
        break;
    case OG_PLANT_POISON:
        read_poisoned();
        break;
    case OG_PLANT_NONE:
    case OG_PLANT_DEVICE_LOST:
        break;
    }
}
