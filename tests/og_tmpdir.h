/* A temporary directory per test (Criterion suite .init/.fini), for tests
 * that write database or cache files. */
#ifndef OG_TMPDIR_H
#define OG_TMPDIR_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char og_tmpdir[256];

static inline void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(og_tmpdir, sizeof og_tmpdir, "%s/og_test_XXXXXX", base != NULL ? base : "/tmp");
    cr_assert_not_null(mkdtemp(og_tmpdir), "mkdtemp failed");
}

/* Removes path: a file, or a directory with everything under it (links are
 * removed, not followed). */
static inline void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    DIR *dir = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
    if (dir == NULL) {
        unlink(path);
        return;
    }
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, ent->d_name);
        remove_tree(sub);
    }
    closedir(dir);
    rmdir(path);
}

/* Removes the directory and everything the test left in it (databases,
 * -wal, -shm, cache directories). */
static inline void remove_tmpdir(void)
{
    remove_tree(og_tmpdir);
}

/* out = the temporary directory / name. */
static inline void tmp_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", og_tmpdir, name);
}

#endif /* OG_TMPDIR_H */
