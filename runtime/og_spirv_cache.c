/* Compiled kernels kept on disk, so a new process does not wait for the
 * shader compiler again: $XDG_CACHE_HOME/onegpu/spirv/<hash>.spv (or
 * ~/.cache/...), keyed by the template text, the whole kernel key and the
 * compiler's version, the words followed by their 64-bit FNV-1a checksum.
 * OG_SPIRV_CACHE=0 turns it off. A file that cannot be read or written, or
 * whose checksum is wrong, is simply compiled again: the cache never fails a call. */
#include <errno.h>
#include <shaderc/shaderc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_internal.h"

/* Bump when the compile options or the layout of og_kernel_key change. */
#define OG_SPIRV_CACHE_SALT "onegpu-spirv-3"

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The cache file of a (normalized) key; 0 when the cache is off or has no home. */
static int cache_path(const og_kernel_key *key, char *path, size_t len)
{
    const char *off = getenv("OG_SPIRV_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if ((off && strcmp(off, "0") == 0) || (!(xdg && *xdg) && !(home && *home)))
        return 0;
    unsigned version = 0, revision = 0;
    shaderc_get_spv_version(&version, &revision);
    uint64_t h = fnv1a(1469598103934665603ull, OG_SPIRV_CACHE_SALT, strlen(OG_SPIRV_CACHE_SALT));
    uint64_t template_hash = og_template_hash(og_kernel_template(key));
    h = fnv1a(h, &template_hash, sizeof template_hash);
    h = fnv1a(h, key, sizeof *key);
    h = fnv1a(h, &version, sizeof version);
    h = fnv1a(h, &revision, sizeof revision);
    int n = xdg && *xdg
                ? snprintf(path, len, "%s/onegpu/spirv/%016llx.spv", xdg, (unsigned long long)h)
                : snprintf(path, len, "%s/.cache/onegpu/spirv/%016llx.spv", home,
                           (unsigned long long)h);
    return n > 0 && (size_t)n < len;
}

int og_spirv_cache_load(const og_kernel_key *key, uint32_t **words, size_t *count)
{
    char path[1024];
    *words = NULL;
    *count = 0;
    if (!cache_path(key, path, sizeof path))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    long bytes = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        bytes = ftell(f);
    rewind(f);
    /* At least a SPIR-V header (5 words) and the checksum. */
    size_t n = bytes >= 28 && bytes % 4 == 0 ? (size_t)bytes / 4 - 2 : 0;
    uint32_t *w = n ? malloc((size_t)bytes) : NULL;
    uint64_t sum;
    int ok = w && fread(w, 1, (size_t)bytes, f) == (size_t)bytes && w[0] == 0x07230203u;
    fclose(f);
    if (ok) {
        memcpy(&sum, w + n, sizeof sum);
        ok = sum == fnv1a(1469598103934665603ull, w, n * 4);
    }
    if (!ok) {
        free(w);
        return 0;
    }
    *words = w;
    *count = n;
    return 1;
}

/* mkdir -p of the directory part of path. */
static void make_dirs(char *path)
{
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            *s = '/';
            return;
        }
        *s = '/';
    }
}

void og_spirv_cache_store(const og_kernel_key *key, const uint32_t *words, size_t count)
{
    char path[1024], tmp[1100];
    if (!cache_path(key, path, sizeof path))
        return;
    make_dirs(path);
    /* Written aside and renamed: a reader sees the whole file or none. */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    uint64_t sum = fnv1a(1469598103934665603ull, words, count * 4);
    int ok = fwrite(words, 4, count, f) == count && fwrite(&sum, sizeof sum, 1, f) == 1;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}
