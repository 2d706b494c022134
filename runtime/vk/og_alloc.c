/* The runtime's host memory, through the caller's og_allocator when given. */
#include <stdlib.h>
#include <string.h>

#include "og_vk.h"

static int custom(const og_allocator *a)
{
    return a && a->alloc && a->realloc && a->free;
}

void *og_mem_alloc(const og_allocator *a, size_t bytes)
{
    void *p = custom(a) ? a->alloc(a->user, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
    if (p)
        memset(p, 0, bytes ? bytes : 1);
    return p;
}

void *og_mem_realloc(const og_allocator *a, void *ptr, size_t bytes)
{
    return custom(a) ? a->realloc(a->user, ptr, bytes) : realloc(ptr, bytes);
}

void og_mem_free(const og_allocator *a, void *ptr)
{
    if (!ptr)
        return;
    if (custom(a))
        a->free(a->user, ptr);
    else
        free(ptr);
}

char *og_mem_strdup(const og_allocator *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = og_mem_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}
