/* spirv-val on a module, for the tests that generate kernels. */
#ifndef OG_SPIRV_VAL_H
#define OG_SPIRV_VAL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes words to a file under a fresh temporary directory and runs
 * spirv-val on it; returns its exit status. */
static inline int spirv_val(const uint32_t *words, size_t count)
{
    char dir[] = "/tmp/og_gen_test_XXXXXX", path[64], cmd[256];
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    snprintf(path, sizeof path, "%s/kernel.spv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(words, sizeof *words, count, f), count, "short write to %s", path);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --target-env vulkan1.1 '%s'", OG_SPIRV_VAL, path);
    int rc = system(cmd);
    unlink(path);
    rmdir(dir);
    return rc;
}

#endif /* OG_SPIRV_VAL_H */
