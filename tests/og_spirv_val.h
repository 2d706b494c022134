/* spirv-val on a module, for the tests that generate kernels. */
#ifndef OG_SPIRV_VAL_H
#define OG_SPIRV_VAL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes words to a file under a fresh temporary directory and runs the
 * spirv-val at tool on it for target env; returns its exit status. */
static inline int spirv_val_with(const char *tool, const char *env, const uint32_t *words,
                                 size_t count)
{
    char dir[] = "/tmp/og_gen_test_XXXXXX", path[64], cmd[1024];
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    snprintf(path, sizeof path, "%s/kernel.spv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(words, sizeof *words, count, f), count, "short write to %s", path);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --target-env %s '%s'", tool, env, path);
    int rc = system(cmd);
    unlink(path);
    rmdir(dir);
    return rc;
}

/* Debian 12's spirv-val (2023.1) on a Vulkan 1.1 module. */
static inline int spirv_val(const uint32_t *words, size_t count)
{
    return spirv_val_with(OG_SPIRV_VAL, "vulkan1.1", words, count);
}

/* The second driver lane's current spirv-val (scripts/mesa26.sh, which sets
 * OG_MESA26_ROOT), which knows SPV_KHR_cooperative_matrix, on a Vulkan 1.3
 * module; -1 outside the lane. */
static inline int lane_spirv_val(const uint32_t *words, size_t count)
{
    const char *root = getenv("OG_MESA26_ROOT");
    if (!root)
        return -1;
    char tool[512];
    snprintf(tool, sizeof tool, "%s/bin/spirv-val", root);
    return spirv_val_with(tool, "vulkan1.3", words, count);
}

#endif /* OG_SPIRV_VAL_H */
