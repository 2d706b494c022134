/* GEMM objects: kernel choice, descriptor sets, recording and synchronous runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h"

const char *og_dtype_name(og_dtype t)
{
    return t == OG_F16 ? "f16" : t == OG_BF16 ? "bf16" : "f32";
}

og_status og_gemm_create(og_context *ctx, og_dtype input, og_mode mode, og_gemm **out)
{
    *out = NULL;
    if (input != OG_F32 && input != OG_F16 && input != OG_BF16)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: input type %d is not float32, float16 or bfloat16", (int)input);
    if (mode != OG_MODE_FAST && mode != OG_MODE_DETERMINISTIC)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "gemm: mode %d is not Fast or Deterministic",
                       (int)mode);
    og_gemm *g = calloc(1, sizeof *g);
    og_binding *bindings = calloc(OG_BINDINGS_MAX, sizeof *bindings);
    if (!g || !bindings) {
        free(g);
        free(bindings);
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
    }
    g->ctx = ctx;
    g->dtype = input;
    g->mode = mode;
    g->bindings = bindings;
    VkDescriptorPoolSize sizes[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3 * OG_BINDINGS_MAX},
        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 4 * OG_BINDINGS_MAX}};
    VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = OG_BINDINGS_MAX,
                                       .poolSizeCount = 2,
                                       .pPoolSizes = sizes};
    VkResult r = ctx->vk.vkCreateDescriptorPool(ctx->device, &info, NULL, &g->pool);
    if (r != VK_SUCCESS) {
        og_gemm_destroy(g);
        return og_vk_fail(ctx, r, "gemm: vkCreateDescriptorPool");
    }
    *out = g;
    return OG_OK;
}

void og_gemm_destroy(og_gemm *g)
{
    if (!g)
        return;
    g->ctx->vk.vkDestroyDescriptorPool(g->ctx->device, g->pool, NULL);
    free(g->bindings);
    free(g->choices);
    free(g);
}

void og_gemm_release_bindings(og_gemm *g)
{
    g->ctx->vk.vkResetDescriptorPool(g->ctx->device, g->pool, 0);
    g->n_bindings = 0;
}

/* The descriptor set of an (A, B, C) triple bound as src, made on first
 * use. Once all OG_BINDINGS_MAX sets are taken, the pool is reset: a command
 * buffer recorded with an older set must have completed by then (documented
 * on og_gemm_release_bindings). Recording allocates nothing for a cached triple. */
static og_status binding_set(og_gemm *g, const og_tile_params *p, og_buffer *a, og_buffer *b,
                             og_buffer *c, VkDescriptorSet *out)
{
    og_context *ctx = g->ctx;
    og_src src = p->src;
    /* Texel kernels with vector loads read 4 elements a texel: 4 words of
     * float32 or 2 of halves. Bindings 3 and 4 hold those views. */
    int vec = src == OG_SRC_TEXEL ? p->vec : 1;
    for (size_t i = 0; i < g->n_bindings; i++) {
        og_binding *e = &g->bindings[i];
        if (e->a == a->serial && e->b == b->serial && e->c == c->serial && e->src == src &&
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
    og_buffer *bufs[3] = {a, b, c};
    VkDescriptorBufferInfo infos[3];
    VkWriteDescriptorSet writes[5];
    uint32_t n_writes = src == OG_SRC_TEXEL ? 5 : 3;
    /* A binding covers the buffer up to maxStorageBufferRange; og_gemm_check
     * refuses calls that reach beyond it. */
    uint64_t max_range = ctx->limits.max_storage_range & ~(uint64_t)3;
    for (uint32_t i = 0; i < n_writes; i++) {
        int texel = i != 2 && src == OG_SRC_TEXEL;
        if (i < 3)
            infos[i] = (VkDescriptorBufferInfo){bufs[i]->buffer, 0,
                                                bufs[i]->allocated < max_range ? bufs[i]->allocated
                                                                               : max_range};
        writes[i] =
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
    e->src = src;
    e->vec = vec;
    g->n_bindings++;
    *out = e->set;
    return OG_OK;
}

og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_tile_params *p)
{
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    for (size_t i = 0; i < g->n_choices; i++) {
        const og_shape_choice *c = &g->choices[i];
        if (c->trans_a == !!args->trans_a && c->trans_b == !!args->trans_b && c->m == args->m &&
            c->n == args->n && c->k == args->k && c->batch == batch) {
            *p = c->params;
            return OG_OK;
        }
    }
    og_choice choice;
    og_status st = og_select(g->ctx, g->dtype, g->mode, !!args->trans_a, !!args->trans_b, args->m,
                             args->n, args->k, batch, &choice);
    if (st != OG_OK)
        return st;
    if (g->n_choices == g->cap_choices) {
        size_t cap = g->cap_choices ? 2 * g->cap_choices : 8;
        og_shape_choice *grown = realloc(g->choices, cap * sizeof *grown);
        if (!grown)
            return og_fail(g->ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
        g->choices = grown;
        g->cap_choices = cap;
    }
    g->choices[g->n_choices++] = (og_shape_choice){
        !!args->trans_a, !!args->trans_b, args->m, args->n, args->k, batch, choice.params};
    *p = choice.params;
    return OG_OK;
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

/* One past the last 32-bit word of an operand that a call reads. */
static uint64_t operand_words(og_dtype t, int64_t off, int64_t batch, int64_t stride, int64_t rows,
                              int64_t ld, int64_t cols)
{
    uint64_t end = (uint64_t)(off + (batch - 1) * stride + (rows - 1) * ld + cols);
    return t == OG_F32 ? end : (end + 1) / 2;
}

og_tile_params og_params_for_call(const og_context *ctx, og_dtype dtype, const og_gemm_args *g,
                                  const og_tile_params *p)
{
    og_tile_params q = *p;
    if (q.vec != 1 && !og_params_vec_aligned(g))
        q.vec = 1;
    if (q.src == OG_SRC_TEXEL && g->k > 0 && g->m > 0 && g->n > 0) {
        /* Only called on checked arguments, so the extents cannot overflow. */
        int64_t batch = g->batch ? g->batch : 1;
        uint64_t a = operand_words(dtype, g->a_offset, batch, g->stride_a, g->trans_a ? g->k : g->m,
                                   g->lda, g->trans_a ? g->m : g->k);
        uint64_t b = operand_words(dtype, g->b_offset, batch, g->stride_b, g->trans_b ? g->n : g->k,
                                   g->ldb, g->trans_b ? g->k : g->n);
        if (a > ctx->limits.max_texel_elements || b > ctx->limits.max_texel_elements)
            q.src = OG_SRC_STORAGE;
        /* A vector texel view needs at least one whole texel. */
        uint64_t texel = dtype == OG_F32 ? 16 : 8;
        if (g->a->allocated < texel || g->b->allocated < texel)
            q.vec = 1;
    }
    return q;
}

og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_tile_params *p)
{
    og_context *ctx = g->ctx;
    og_push push;
    uint32_t grid[3];
    og_status st = og_gemm_check(ctx, g->dtype, args, p, &push, grid);
    if (st != OG_OK)
        return st;
    /* Nothing to compute: M or N is 0, or K is 0 with beta = 1 (C stays bit for bit). */
    if (grid[0] == 0 || (args->k == 0 && args->beta == 1.0f))
        return OG_OK;
    /* With K = 0 the kernel never reads A or B, which may be absent. */
    og_buffer *a = args->k == 0 ? ctx->placeholder : args->a;
    og_buffer *b = args->k == 0 ? ctx->placeholder : args->b;
    og_kernel_key key = {.p = og_params_for_call(ctx, g->dtype, args, p),
                         .dtype = g->dtype,
                         .trans_a = !!args->trans_a,
                         .trans_b = !!args->trans_b,
                         .dialect = ctx->dialect};
    VkDescriptorSet set = VK_NULL_HANDLE;
    if ((st = binding_set(g, &key.p, a, b, args->c, &set)) != OG_OK)
        return st;
    return og_record_dispatch(ctx, cmd, &key, set, &push, grid);
}

og_status og_gemm_encode(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args)
{
    og_tile_params p;
    og_status st = og_gemm_choose(g, args, &p);
    return st != OG_OK ? st : og_gemm_encode_params(g, cmd, args, &p);
}

og_status og_gemm_run(og_gemm *g, const og_gemm_args *args)
{
    og_context *ctx = g->ctx;
    og_tile_params p;
    og_push push;
    uint32_t grid[3];
    /* Check first so a bad call submits nothing at all. */
    og_status st = og_gemm_choose(g, args, &p);
    if (st == OG_OK)
        st = og_gemm_check(ctx, g->dtype, args, &p, &push, grid);
    if (st != OG_OK)
        return st;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "gemm: vkBeginCommandBuffer");
    st = og_gemm_encode_params(g, ctx->cmd, args, &p);
    r = ctx->vk.vkEndCommandBuffer(ctx->cmd);
    if (st != OG_OK)
        return st;
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "gemm: vkEndCommandBuffer");
    return og_submit_wait(ctx, ctx->cmd);
}

og_status og_gemm_describe(og_gemm *g, const og_gemm_args *args, char *buf, size_t len)
{
    og_choice c;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    og_status st = og_select(g->ctx, g->dtype, g->mode, !!args->trans_a, !!args->trans_b, args->m,
                             args->n, args->k, batch, &c);
    if (st != OG_OK)
        return st;
    char params[OG_PARAMS_MAX];
    og_params_format(&c.params, params, sizeof params);
    snprintf(buf, len, "%s %s (%s)", OG_TEMPLATE_TILE, params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape");
    return OG_OK;
}
