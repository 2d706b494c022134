/* A fault planted in a copy of a built-in template, for the tests that show
 * a kernel's check catches it: the runtime reads templates from
 * OG_TEMPLATE_DIR where it is set. */
#ifndef OG_PLANT_H
#define OG_PLANT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "og_text.h"
#include "og_tmpdir.h"

/* Copies templates/NAME.tmpl (OG_TEMPLATES) into a fresh directory of the
 * test's with the one occurrence of `at` replaced by `put`, and points
 * OG_TEMPLATE_DIR at it; the test fails when `at` is not there exactly
 * once. A context opened afterwards compiles the planted template (its
 * pipelines are keyed without the template). */
static inline void plant_template(const char *name, const char *at, const char *put)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/%s.tmpl", OG_TEMPLATES, name);
    char *text = read_text(path);
    cr_assert_eq(count(text, at), 1, "%s.tmpl holds \"%s\" %zu times, not once", name, at,
                 count(text, at));
    text = replaced(text, at, put);
    tmp_path(dir, sizeof dir, "templates");
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/%s.tmpl", dir, name);
    write_text(path, text);
    free(text);
    cr_assert_eq(setenv("OG_TEMPLATE_DIR", dir, 1), 0);
}

/* A second fault in the copy plant_template made: the one occurrence of
 * `at` in OG_TEMPLATE_DIR/NAME.tmpl replaced by `put`. */
static inline void plant_again(const char *name, const char *at, const char *put)
{
    const char *dir = getenv("OG_TEMPLATE_DIR");
    cr_assert_not_null(dir, "plant_again before plant_template");
    char path[512];
    snprintf(path, sizeof path, "%s/%s.tmpl", dir, name);
    char *text = read_text(path);
    cr_assert_eq(count(text, at), 1, "the planted %s.tmpl holds \"%s\" %zu times, not once", name,
                 at, count(text, at));
    text = replaced(text, at, put);
    write_text(path, text);
    free(text);
}

#endif /* OG_PLANT_H */
