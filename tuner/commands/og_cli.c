/* Small helpers of the ogtune command line. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

int og_parse_shapes(const char *text, og_shape **shapes, size_t *n)
{
    size_t cap = 1;
    for (const char *s = text; *s; s++)
        cap += *s == ',';
    og_shape *list = calloc(cap, sizeof *list);
    if (!list)
        return -1;
    size_t count = 0;
    const char *s = text;
    while (*s) {
        int64_t v[4] = {0, 0, 0, 1};
        int parts = 0;
        char *end;
        while (parts < 4) {
            errno = 0;
            long long x = strtoll(s, &end, 10);
            if (end == s || errno || x < 0 || x > UINT32_MAX)
                break;
            v[parts++] = x;
            s = end;
            if (*s != 'x')
                break;
            s++;
        }
        if (parts < 3 || (*s && *s != ',')) {
            free(list);
            return -1;
        }
        list[count++] = (og_shape){v[0], v[1], v[2], v[3] ? v[3] : 1};
        s += *s == ',';
    }
    if (count == 0) {
        free(list);
        return -1;
    }
    *shapes = list;
    *n = count;
    return 0;
}

void og_default_db_path(char *buf, size_t len)
{
    const char *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (cache && *cache)
        snprintf(buf, len, "%s/onegpu/tuning.db", cache);
    else
        snprintf(buf, len, "%s/.cache/onegpu/tuning.db", home ? home : ".");
    /* Every missing directory: a fresh account may have no ~/.cache yet. */
    og_make_dirs(buf);
}

/* The first failure's first line, for --json. */
static char failure[512];

void og_cli_fail(const char *fmt, ...)
{
    char text[sizeof failure];
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (failure[0])
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    text[strcspn(text, "\n")] = '\0';
    memcpy(failure, text, sizeof failure);
}

const char *og_cli_failure(void)
{
    return failure[0] ? failure : NULL;
}
