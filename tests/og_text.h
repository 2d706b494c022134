/* Reading and searching text in the tests: files the code under test wrote,
 * and command output. */
#ifndef OG_TEXT_H
#define OG_TEXT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, malloc'ed and NUL-terminated, or the test fails. */
static inline char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    char *text = malloc((size_t)len + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    return text;
}

/* How many times `what` occurs in text, without overlaps. */
static inline size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The JSON line of `ogtune tune --json` output for params, or NULL. */
static inline char *line_of(char *out, const char *params, char *line, size_t len)
{
    char key[512];
    snprintf(key, sizeof key, "\"params\":\"%s\"", params);
    char *at = strstr(out, key);
    if (!at)
        return NULL;
    char *start = at, *end = strchr(at, '\n');
    while (start > out && start[-1] != '\n')
        start--;
    size_t n = end ? (size_t)(end - start) : strlen(start);
    snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), start);
    return line;
}

#endif /* OG_TEXT_H */
