/* Compute pipelines, compiled on first use and cached by kernel key. */
#include <stdlib.h>
#include <string.h>

#include "og_vk.h"

static og_status create_pipeline(og_context *ctx, const og_kernel_key *key, VkPipeline *out)
{
    uint32_t *words = NULL;
    size_t count = 0;
    og_reflection refl;
    char err[1024];
    /* The device's limits are checked before the disk cache is read. */
    if (og_kernel_check(key, &ctx->limits, err, sizeof err) != 0)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED, "%s", err);
    if (!og_spirv_cache_load(key, &words, &count)) {
        og_status st = og_build_kernel(key, &ctx->limits, &words, &count, &refl, err, sizeof err);
        if (st != OG_OK)
            return og_fail(ctx, st, "%s", err);
        ctx->kernels_compiled++;
        /* At most A, B, C, the column scales and the bias; texel layouts have A
         * and B twice more and the scales at binding 6. */
        uint32_t bindings = key->p.src == OG_SRC_TEXEL ? 7 : 5;
        if (refl.bindings > bindings || refl.push_bytes > sizeof(og_push)) {
            free(words);
            return og_fail(ctx, OG_ERROR_COMPILE,
                           "pipeline: kernel has %u bindings and %u push bytes", refl.bindings,
                           refl.push_bytes);
        }
        og_spirv_cache_store(key, words, count);
    } else if (og_limits_lack(&ctx->limits, og_spirv_needs(words, count), err, sizeof err) != 0) {
        free(words); /* a cached module asks what og_build_kernel would have refused */
        return og_fail(ctx, OG_ERROR_UNSUPPORTED, "%s", err);
    }
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = count * 4,
                                   .pCode = words};
    VkShaderModule module;
    VkResult r = ctx->vk.vkCreateShaderModule(ctx->device, &mi, NULL, &module);
    free(words);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "pipeline: vkCreateShaderModule");
    VkComputePipelineCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        /* Kernels reading A and B by address bind the rest as storage. */
        .layout = ctx->pipeline_layout[key->p.src == OG_SRC_TEXEL ? OG_SRC_TEXEL : OG_SRC_STORAGE]};
    /* The cooperative-matrix kernels are written for full subgroups of
     * p.sub (32 or 64): og_kernel_check has made sure the device runs or can
     * pin that size. Their emulation (a test's) runs on any subgroups. */
    const og_matrix_caps *m = &ctx->limits.matrix;
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT size = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT,
        .requiredSubgroupSize = (uint32_t)key->p.sub};
    if (og_params_matrix(&key->p) && key->p.mat != OG_MATRIX_EMU) {
        if (m->full_subgroups)
            pi.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT;
        if (m->size_control && m->subgroup_min != m->subgroup_max)
            pi.stage.pNext = &size;
    }
    r = ctx->vk.vkCreateComputePipelines(ctx->device, ctx->pipeline_cache, 1, &pi, NULL, out);
    ctx->vk.vkDestroyShaderModule(ctx->device, module, NULL);
    return r == VK_SUCCESS ? OG_OK : og_vk_fail(ctx, r, "pipeline: vkCreateComputePipelines");
}

og_status og_pipeline_get(og_context *ctx, const og_kernel_key *key, VkPipeline *out)
{
    og_kernel_key k;
    memset(&k, 0, sizeof k); /* padding too, so keys compare with memcmp */
    k.kernel = key->kernel;
    k.p = key->p;
    k.dtype = key->dtype;
    k.dtype_b = key->dtype_b;
    k.trans_a = !!key->trans_a;
    k.trans_b = !!key->trans_b;
    k.dialect = key->dialect;
    k.recover = key->recover;
    k.scaled = key->scaled;
    k.conv = key->conv;
    k.qformat = key->qformat;
    k.part = key->part;
    for (size_t i = 0; i < ctx->n_pipelines; i++)
        if (memcmp(&ctx->pipelines[i].key, &k, sizeof k) == 0) {
            *out = ctx->pipelines[i].pipeline;
            return OG_OK;
        }
    if (ctx->n_pipelines == ctx->cap_pipelines) {
        size_t cap = ctx->cap_pipelines ? 2 * ctx->cap_pipelines : 16;
        og_pipeline *grown = og_mem_realloc(&ctx->allocator, ctx->pipelines, cap * sizeof *grown);
        if (!grown)
            return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "pipeline: out of memory");
        ctx->pipelines = grown;
        ctx->cap_pipelines = cap;
    }
    og_status st = create_pipeline(ctx, &k, out);
    if (st != OG_OK)
        return st;
    ctx->pipelines[ctx->n_pipelines].key = k;
    ctx->pipelines[ctx->n_pipelines++].pipeline = *out;
    return OG_OK;
}

void og_pipelines_destroy(og_context *ctx)
{
    for (size_t i = 0; i < ctx->n_pipelines; i++)
        ctx->vk.vkDestroyPipeline(ctx->device, ctx->pipelines[i].pipeline, NULL);
    og_mem_free(&ctx->allocator, ctx->pipelines);
    ctx->pipelines = NULL;
    ctx->n_pipelines = ctx->cap_pipelines = 0;
}
