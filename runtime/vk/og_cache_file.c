/* The files of the on-disk caches (compiled kernels, og_spirv_cache.c; the
 * driver's pipeline cache, og_pipeline_cache.c): where they live, and their
 * format, the data followed by its 64-bit FNV-1a checksum in host byte
 * order, written aside and renamed into place so a reader sees a whole file
 * or none. Nothing here reports an error: a cache that cannot be read or
 * written is simply not used. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_vk.h"

int og_cache_dir(char *dir, size_t len)
{
    const char *off = getenv("OG_SPIRV_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (off && strcmp(off, "0") == 0)
        return 0;
    int n = xdg && *xdg     ? snprintf(dir, len, "%s/onegpu", xdg)
            : home && *home ? snprintf(dir, len, "%s/.cache/onegpu", home)
                            : -1;
    return n > 0 && (size_t)n < len;
}

/* read() and write() of exactly n bytes, through short transfers and
 * signals; 1 when all of them moved. */
static int read_all(int fd, void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t got = read(fd, (char *)buf + done, n - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        done += (size_t)got;
    }
    return 1;
}

static int write_all(int fd, const void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t put = write(fd, (const char *)buf + done, n - done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return 0;
        done += (size_t)put;
    }
    return 1;
}

int og_cache_read(const og_allocator *a, const char *path, size_t min_bytes, size_t max_bytes,
                  void **data, size_t *bytes)
{
    *data = NULL;
    *bytes = 0;
    /* Non-blocking, so a FIFO put in the file's place cannot stall the call;
     * anything but a regular file is ignored. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    uint64_t sum;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             (uint64_t)st.st_size >= (uint64_t)min_bytes + sizeof sum &&
             (uint64_t)st.st_size - sizeof sum <= max_bytes;
    size_t n = ok ? (size_t)st.st_size - sizeof sum : 0;
    unsigned char *buf = ok ? og_mem_alloc(a, n + sizeof sum) : NULL;
    ok = buf && read_all(fd, buf, n + sizeof sum);
    close(fd);
    if (ok) {
        memcpy(&sum, buf + n, sizeof sum);
        ok = sum == og_fnv1a(OG_FNV_OFFSET, buf, n);
    }
    if (!ok) {
        og_mem_free(a, buf);
        return 0;
    }
    *data = buf;
    *bytes = n;
    return 1;
}

void og_make_dirs(char *path)
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

int og_cache_write(const char *path, const void *data, size_t bytes)
{
    char tmp[1100];
    int n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -1;
    og_make_dirs(tmp);
    /* A name of its own (O_EXCL): concurrent writers, in this process or
     * others, never share a temporary file, and a link there is not followed. */
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    uint64_t sum = og_fnv1a(OG_FNV_OFFSET, data, bytes);
    int ok = write_all(fd, data, bytes) && write_all(fd, &sum, sizeof sum);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
