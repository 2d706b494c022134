/* Where the pre-tuned databases lie: found from the file that holds the
 * library's code, so an install to any prefix finds its own share/onegpu,
 * and the build tree's programs the databases the build made. */
#define _GNU_SOURCE /* dladdr1, RTLD_DL_LINKMAP */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_plan.h"

/* The path of the file holding this function, resolved (links followed):
 * libonegpu.so, or the program (or another shared object) libonegpu.a was
 * linked into. *in_program is set when it is the program. 0 on success. */
static int code_file(char *buf, size_t len, int *in_program)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((const void *)code_file, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return -1;
    char path[PATH_MAX];
    /* The program's link map has no name: /proc names its file. */
    *in_program = map->l_name[0] == '\0';
    if (*in_program) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return -1;
        path[n] = '\0';
    } else if (!realpath(map->l_name, path)) {
        return -1;
    }
    return snprintf(buf, len, "%s", path) < (int)len ? 0 : -1;
}

/* Whether path names a directory. */
static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether the file lies in the build tree this code was compiled in
 * (OG_BUILD_TREE, resolved at configure time): the build's libonegpu.so, or
 * a program of the build tree linked with libonegpu.a (ogtune, the tests). */
static int in_build_tree(const char *file)
{
    size_t n = strlen(OG_BUILD_TREE);
    return n > 1 && strncmp(file, OG_BUILD_TREE, n) == 0 && file[n] == '/';
}

/* OG_PRETUNED_DIR when set; else, for a library or program in the build
 * tree, the build tree's own databases (OG_BUILD_PRETUNED) when they were
 * made; else share/onegpu of the prefix the library's file lies in, when that
 * directory exists: the library's directory plus OG_LIB_TO_PRETUNED
 * (libonegpu.so, or another shared object libonegpu.a went into), or the
 * program's plus OG_BIN_TO_PRETUNED (linked statically: a program installed
 * in the prefix's bin/); else the prefix configured at build time,
 * OG_PRETUNED_DIR. An installed copy lies outside the build tree, so it
 * never depends on the build tree existing. */
void og_pretuned_dir(char *buf, size_t len)
{
    const char *env = getenv("OG_PRETUNED_DIR");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return;
    }
    char file[PATH_MAX];
    int in_program;
    if (code_file(file, sizeof file, &in_program) == 0) {
        if (in_build_tree(file) && is_dir(OG_BUILD_PRETUNED)) {
            snprintf(buf, len, "%s", OG_BUILD_PRETUNED);
            return;
        }
        char *slash = strrchr(file, '/');
        if (slash) {
            *slash = '\0';
            int n = snprintf(buf, len, "%s/%s", file,
                             in_program ? OG_BIN_TO_PRETUNED : OG_LIB_TO_PRETUNED);
            if (n > 0 && (size_t)n < len && is_dir(buf))
                return;
        }
    }
    snprintf(buf, len, "%s", OG_PRETUNED_DIR);
}
