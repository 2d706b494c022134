/* Compiled kernels kept on disk, so a new process does not wait for the
 * shader compiler again: <cache dir>/spirv/<hash>.spv (og_cache_dir:
 * $XDG_CACHE_HOME/onegpu or ~/.cache/onegpu), keyed by everything that
 * shapes a module: the template text (og_template_hash), the engine and the
 * generator (og_generator_hash), the whole kernel key and the compiler
 * (og_compiler_hash); the words followed by their checksum (og_cache_write). OG_SPIRV_CACHE=0 turns it off. A file
 * that cannot be read or written, or whose checksum is wrong, is simply
 * compiled again: the cache never fails a call. */
#include <stdio.h>
#include <string.h>

#include "og_vk.h"

/* Bump when the compile options or the layout of og_kernel_key change, or
 * when the KHR rewrite (gen/og_spirv_khr.c) changes the words it writes:
 * KHR modules are cached after the rewrite, and its source is not part of
 * og_generator_hash. */
#define OG_SPIRV_CACHE_SALT "onegpu-spirv-6"

/* Larger files are not ours: a module of this project is tens of KiB. */
#define OG_SPIRV_CACHE_MAX (64u << 20)

/* The cache file of a (normalized) key; 0 when the cache is off or has no home. */
static int cache_path(const og_kernel_key *key, char *path, size_t len)
{
    char dir[900];
    if (!og_cache_dir(dir, sizeof dir))
        return 0;
    uint64_t h = og_fnv1a(OG_FNV_OFFSET, OG_SPIRV_CACHE_SALT, strlen(OG_SPIRV_CACHE_SALT));
    const uint64_t parts[3] = {og_template_hash(og_kernel_template(key)), og_generator_hash(),
                               og_compiler_hash()};
    h = og_fnv1a(h, parts, sizeof parts);
    h = og_fnv1a(h, key, sizeof *key);
    int n = snprintf(path, len, "%s/spirv/%016llx.spv", dir, (unsigned long long)h);
    return n > 0 && (size_t)n < len;
}

int og_spirv_cache_load(const og_kernel_key *key, uint32_t **words, size_t *count)
{
    char path[1024];
    void *data;
    size_t bytes;
    *words = NULL;
    *count = 0;
    /* At least a SPIR-V header: 5 words, the first the magic number. */
    if (!cache_path(key, path, sizeof path) ||
        !og_cache_read(NULL, path, 20, OG_SPIRV_CACHE_MAX, &data, &bytes))
        return 0;
    uint32_t *w = data;
    if (bytes % 4 != 0 || w[0] != 0x07230203u) {
        og_mem_free(NULL, data);
        return 0;
    }
    *words = w;
    *count = bytes / 4;
    return 1;
}

void og_spirv_cache_store(const og_kernel_key *key, const uint32_t *words, size_t count)
{
    char path[1024];
    if (cache_path(key, path, sizeof path))
        og_cache_write(path, words, count * 4);
}
