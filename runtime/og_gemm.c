/* GEMM objects: kernel choice, descriptor sets, recording and synchronous runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h"

og_status og_gemm_init(og_context *ctx, og_gemm *g, og_dtype input, og_mode mode)
{
    g->ctx = ctx;
    g->dtype = input;
    g->b_type = input;
    g->mode = mode;
    g->scratch_bytes = OG_SCRATCH_BYTES;
    g->bindings = og_mem_alloc(&ctx->allocator, OG_BINDINGS_MAX * sizeof *g->bindings);
    if (!g->bindings)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
    /* A set holds A, B, C, the bias and the column scales as storage
     * buffers, or C and the bias as storage buffers and four texel views of
     * A and B. */
    VkDescriptorPoolSize sizes[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 5 * OG_BINDINGS_MAX},
        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 4 * OG_BINDINGS_MAX}};
    VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = OG_BINDINGS_MAX,
                                       .poolSizeCount = 2,
                                       .pPoolSizes = sizes};
    VkResult r = ctx->vk.vkCreateDescriptorPool(ctx->device, &info, NULL, &g->pool);
    if (r != VK_SUCCESS) {
        og_gemm_fini(g);
        return og_vk_fail(ctx, r, "gemm: vkCreateDescriptorPool");
    }
    return OG_OK;
}

void og_gemm_fini(og_gemm *g)
{
    g->ctx->vk.vkDestroyDescriptorPool(g->ctx->device, g->pool, NULL);
    og_buffer_destroy(g->scratch);
    og_buffer_destroy(g->exponents);
    og_mem_free(&g->ctx->allocator, g->bindings);
    og_mem_free(&g->ctx->allocator, g->choices);
}

/* The float GEMM's type pairs (og_gemm_desc): equal float types, or FP8
 * beside FP8 or float32. */
static int float_pair(og_dtype a, og_dtype b)
{
    int known_a = a == OG_F32 || a == OG_F16 || a == OG_BF16 || og_dtype_is_fp8(a);
    int known_b = b == OG_F32 || b == OG_F16 || b == OG_BF16 || og_dtype_is_fp8(b);
    if (!known_a || !known_b)
        return 0;
    if (og_dtype_is_fp8(a) || og_dtype_is_fp8(b))
        return (a == OG_F32 || og_dtype_is_fp8(a)) && (b == OG_F32 || og_dtype_is_fp8(b));
    return a == b;
}

og_status og_gemm_create_desc(og_context *ctx, const og_gemm_desc *desc, og_gemm **out)
{
    *out = NULL;
    og_gemm_desc d = desc ? *desc : (og_gemm_desc){0};
    if (!float_pair(d.a_type, d.b_type))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: input types A %d and B %d are not a float pair (float32, float16 or "
                       "bfloat16 on both, or FP8 with FP8 or float32; 8-bit integers take "
                       "og_int8gemm_create)",
                       (int)d.a_type, (int)d.b_type);
    if (d.mode != OG_MODE_FAST && d.mode != OG_MODE_DETERMINISTIC)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "gemm: mode %d is not Fast or Deterministic",
                       (int)d.mode);
    if (d.precision != OG_PRECISION_NATIVE && d.precision != OG_PRECISION_RECOVERED)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: precision %d is not native or recovered", (int)d.precision);
    int recovered = d.precision == OG_PRECISION_RECOVERED;
    if (recovered && (d.a_type != OG_F32 || d.b_type != OG_F32))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: recovered precision takes float32 A and B (A %s, B %s)",
                       og_dtype_name(d.a_type), og_dtype_name(d.b_type));
    int shift = d.residual_shift == 0 ? OG_RECOVER_SHIFT : d.residual_shift;
    if (recovered && (shift < 1 || shift > OG_RECOVER_SHIFT_MAX))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "gemm: residual shift %d is outside 1..%d",
                       d.residual_shift, OG_RECOVER_SHIFT_MAX);
    og_gemm *g = og_mem_alloc(&ctx->allocator, sizeof *g);
    if (!g)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
    og_status st = og_gemm_init(ctx, g, d.a_type, d.mode);
    if (st != OG_OK) {
        og_mem_free(&ctx->allocator, g);
        return st;
    }
    g->b_type = d.b_type;
    g->recover = recovered ? shift : 0;
    if (recovered)
        g->recovered = og_params_recovered(ctx, d.mode);
    g->scaled = recovered && d.range_scaling;
    *out = g;
    return OG_OK;
}

og_status og_gemm_create(og_context *ctx, og_dtype input, og_mode mode, og_gemm **out)
{
    *out = NULL;
    if (input != OG_F32 && input != OG_F16 && input != OG_BF16)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: input type %d is not float32, float16 or bfloat16 (FP8 inputs take "
                       "og_gemm_create_desc, 8-bit integers og_int8gemm_create)",
                       (int)input);
    og_gemm_desc d = {.a_type = input, .b_type = input, .mode = mode};
    return og_gemm_create_desc(ctx, &d, out);
}

void og_gemm_destroy(og_gemm *g)
{
    if (!g)
        return;
    og_context *ctx = g->ctx;
    og_gemm_fini(g);
    og_mem_free(&ctx->allocator, g);
}

void og_gemm_release_bindings(og_gemm *g)
{
    g->ctx->vk.vkResetDescriptorPool(g->ctx->device, g->pool, 0);
    g->n_bindings = 0;
}

og_status og_binding_set(og_gemm *g, og_src src, int vec, og_buffer *a, og_buffer *b, og_buffer *c,
                         og_buffer *bias, og_buffer *scales, VkDescriptorSet *out)
{
    og_context *ctx = g->ctx;
    /* Texel kernels with vector loads read 4 elements a texel: 4 words of
     * float32 or 2 of halves. Bindings 3 and 4 hold those views. */
    if (src != OG_SRC_TEXEL)
        vec = 1;
    if (!bias)
        bias = ctx->placeholder;
    /* Texel layouts use binding 3 for A's vector view: no column scales. */
    if (!scales || src == OG_SRC_TEXEL)
        scales = ctx->placeholder;
    for (size_t i = 0; i < g->n_bindings; i++) {
        og_binding *e = &g->bindings[i];
        if (e->a == a->serial && e->b == b->serial && e->c == c->serial &&
            e->bias == bias->serial && e->scales == scales->serial && e->src == src &&
            e->vec == vec) {
            *out = e->set;
            return OG_OK;
        }
    }
    VkBufferView views[5] = {VK_NULL_HANDLE};
    uint32_t vec_words = vec == 1 ? 1 : g->dtype == OG_F32 ? 4 : 2;
    og_status st = OG_OK;
    if (src == OG_SRC_TEXEL) {
        og_buffer *ops[2] = {a, b};
        for (int i = 0; i < 2 && st == OG_OK; i++) {
            st = og_buffer_texels(ops[i], 1, &views[i]);
            if (st == OG_OK)
                st = og_buffer_texels(ops[i], vec_words, &views[3 + i]);
        }
    }
    if (st != OG_OK)
        return st;
    if (g->n_bindings == OG_BINDINGS_MAX)
        og_gemm_release_bindings(g);
    og_binding *e = &g->bindings[g->n_bindings];
    VkDescriptorSetAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                         .descriptorPool = g->pool,
                                         .descriptorSetCount = 1,
                                         .pSetLayouts = &ctx->set_layout[src]};
    VkResult r = ctx->vk.vkAllocateDescriptorSets(ctx->device, &alloc, &e->set);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "gemm: vkAllocateDescriptorSets");
    /* Bindings 0, 1, 2, 3 and 5 (A, B, C, column scales, bias); texel
     * layouts have A's and B's vector views at 3 and 4 instead. */
    og_buffer *bufs[6] = {a, b, c, scales, NULL, bias};
    const uint32_t storage_bindings[] = {0, 1, 2, 3, 5}, texel_bindings[] = {0, 1, 2, 3, 4, 5};
    const uint32_t *which = src == OG_SRC_TEXEL ? texel_bindings : storage_bindings;
    uint32_t n_writes = src == OG_SRC_TEXEL ? 6 : 5;
    VkDescriptorBufferInfo infos[6];
    VkWriteDescriptorSet writes[6];
    /* A binding covers the buffer up to maxStorageBufferRange; og_gemm_check
     * refuses calls that reach beyond it. */
    uint64_t max_range = ctx->limits.max_storage_range & ~(uint64_t)3;
    for (uint32_t w = 0; w < n_writes; w++) {
        uint32_t i = which[w];
        int texel = src == OG_SRC_TEXEL && i != 2 && i != 5;
        if (!texel)
            infos[i] = (VkDescriptorBufferInfo){bufs[i]->buffer, 0,
                                                bufs[i]->allocated < max_range ? bufs[i]->allocated
                                                                               : max_range};
        writes[w] =
            (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                   .dstSet = e->set,
                                   .dstBinding = i,
                                   .descriptorCount = 1,
                                   .descriptorType = texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                           : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                   .pBufferInfo = texel ? NULL : &infos[i],
                                   .pTexelBufferView = texel ? &views[i] : NULL};
    }
    ctx->vk.vkUpdateDescriptorSets(ctx->device, n_writes, writes, 0, NULL);
    e->a = a->serial;
    e->b = b->serial;
    e->c = c->serial;
    e->bias = bias->serial;
    e->scales = scales->serial;
    e->src = src;
    e->vec = vec;
    g->n_bindings++;
    *out = e->set;
    return OG_OK;
}

int og_choice_cached(const og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     int64_t batch, og_params *p)
{
    for (size_t i = 0; i < g->n_choices; i++) {
        const og_shape_choice *c = &g->choices[i];
        if (c->trans_a == !!trans_a && c->trans_b == !!trans_b && c->m == m && c->n == n &&
            c->k == k && c->batch == batch) {
            *p = c->params;
            return 1;
        }
    }
    return 0;
}

og_status og_choice_cache(og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch, const og_params *p)
{
    if (g->n_choices == g->cap_choices) {
        size_t cap = g->cap_choices ? 2 * g->cap_choices : 8;
        og_shape_choice *grown =
            og_mem_realloc(&g->ctx->allocator, g->choices, cap * sizeof *grown);
        if (!grown)
            return og_fail(g->ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
        g->choices = grown;
        g->cap_choices = cap;
    }
    g->choices[g->n_choices++] = (og_shape_choice){!!trans_a, !!trans_b, m, n, k, batch, *p};
    return OG_OK;
}

og_params og_params_recovered(const og_context *ctx, og_mode mode)
{
    static const int subgroups[OG_MATRIX_VARIANTS] = {8, 4};
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    if (ctx->dialect == OG_GLSL && og_matrix_choose(&ctx->limits, OG_F16, mode, notes) >= 0) {
        for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
            og_kernel_key key = {.p = og_params_coopmat(subgroups[i]),
                                 .dtype = OG_F32,
                                 .dialect = OG_GLSL,
                                 .recover = OG_RECOVER_SHIFT};
            char why[256];
            if (og_kernel_check(&key, &ctx->limits, why, sizeof why) == 0)
                return key.p;
        }
    }
    og_params p = og_params_default();
    p.split = 1;
    return p;
}

og_dtype og_gemm_select_type(const og_gemm *g)
{
    return og_dtype_is_fp8(g->dtype) || og_dtype_is_fp8(g->b_type) ? OG_F32 : g->dtype;
}

og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_params *p)
{
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (g->recover) {
        *p = g->recovered;
        return OG_OK;
    }
    if (og_choice_cached(g, args->trans_a, args->trans_b, args->m, args->n, args->k, batch, p))
        return OG_OK;
    og_choice choice;
    og_status st = og_select(g->ctx, og_gemm_select_type(g), g->mode, !!args->trans_a,
                             !!args->trans_b, args->m, args->n, args->k, batch, &choice);
    if (st == OG_OK)
        st = og_choice_cache(g, args->trans_a, args->trans_b, args->m, args->n, args->k, batch,
                             &choice.params);
    if (st == OG_OK)
        *p = choice.params;
    return st;
}

og_status og_record_dispatch(og_context *ctx, VkCommandBuffer cmd, const og_kernel_key *key,
                             VkDescriptorSet set, const og_push *push, const uint32_t grid[3])
{
    VkPipeline pipeline;
    og_status st = og_pipeline_get(ctx, key, &pipeline);
    if (st != OG_OK)
        return st;
    ctx->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    VkPipelineLayout layout = ctx->pipeline_layout[key->p.src];
    ctx->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                                    NULL);
    ctx->vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof *push, push);
    ctx->vk.vkCmdDispatch(cmd, grid[0], grid[1], grid[2]);
    /* C is visible to later compute work, copies and the host. */
    VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                               .dstAccessMask =
                                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
    ctx->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                                     VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                                 0, 1, &barrier, 0, NULL, 0, NULL);
    return OG_OK;
}
