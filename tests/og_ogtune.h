/* Runs the ogtune binary built with the tests (OG_OGTUNE), for the tests
 * of its command line. */
#ifndef OG_OGTUNE_H
#define OG_OGTUNE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "og_tuner.h"

/* Runs ogtune with args (stderr not captured). Returns its exit status, -1
 * when a signal ended it; *out is its standard output, malloc'ed and
 * NUL-terminated. */
static inline int ogtune_status(const char *args, char **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s", OG_OGTUNE, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen %s", cmd);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (size_t got; (got = fread(buf + len, 1, cap - len - 1, p)) > 0;) {
        len += got;
        if (cap - len < 2) {
            buf = realloc(buf, cap *= 2);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = '\0';
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ogtune_status, failing the test when the command's status says the
 * validation layer reported errors in it or its workers
 * (OG_EXIT_VALIDATION), a sanitizer reported in it (OG_EXIT_SANITIZER; a
 * worker's report fails the tuning itself), or a signal ended it: whatever
 * else a test expects of the command, it never expects those. */
static inline int ogtune(const char *args, char **out)
{
    int rc = ogtune_status(args, out);
    cr_assert_neq(rc, OG_EXIT_VALIDATION, "ogtune %s: validation errors (on standard error)", args);
    cr_assert_neq(rc, OG_EXIT_SANITIZER, "ogtune %s: a sanitizer's report (on standard error)",
                  args);
    cr_assert_neq(rc, -1, "ogtune %s: ended by a signal", args);
    return rc;
}

#endif /* OG_OGTUNE_H */
