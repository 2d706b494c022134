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

/* text with the first `anchor` replaced by `with`, malloc'ed; text is freed.
 * Fails the test when text has no anchor. */
static inline char *replaced(char *text, const char *anchor, const char *with)
{
    const char *at = strstr(text, anchor);
    cr_assert_not_null(at, "the template has no \"%s\" to plant at", anchor);
    size_t head = (size_t)(at - text), len = strlen(text) - strlen(anchor) + strlen(with);
    char *out = malloc(len + 1);
    cr_assert_not_null(out);
    memcpy(out, text, head);
    strcpy(out + head, with);
    strcat(out, at + strlen(anchor));
    free(text);
    return out;
}

/* Writes text to path, or the test fails. */
static inline void write_text(const char *path, const char *text)
{
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out, "cannot create %s", path);
    cr_assert_neq(fputs(text, out), EOF);
    cr_assert_eq(fclose(out), 0);
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
