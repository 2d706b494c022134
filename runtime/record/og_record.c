/* Plans into commands: descriptor sets, pipelines, push constants,
 * dispatches and the barriers of the synchronisation contract (og_record.h). */
#include "og_record.h"

/* The push-constant element offset of A or B in step s, and the bytes of
 * its elements. */
static uint32_t *operand_offset(og_push *push, const og_step *s, og_operand op, uint64_t *elem)
{
    if (op == OG_OPERAND_A) {
        *elem = og_dtype_bytes(s->key.dtype);
        return &push->off_a;
    }
    /* A low-bit weight image's offset counts 32-bit words. */
    *elem = s->key.qformat ? 4 : og_dtype_bytes(og_kernel_b_type(&s->key));
    return &push->off_b;
}

/* Step s's descriptor set key and buffers, and its push constants: each
 * storage binding starts where the plan says (pl->start, near the
 * operand's first element; the push offsets count from there). A and B
 * read by device address take their addresses from the same place; texel
 * views start at the buffer's base, so their offsets count from there. */
static void step_bindings(og_context *ctx, const og_plan *pl, const og_step *s,
                          og_buffer *const operands[OG_OPERANDS], og_set_key *key,
                          og_buffer *bufs[5], og_push *push)
{
    *key = (og_set_key){.src = s->src, .vec_words = s->src == OG_SRC_TEXEL ? s->vec_words : 1};
    *push = s->push;
    int reads_operands = s->key.kernel == OG_KERNEL_GEMM || s->key.kernel == OG_KERNEL_PLANES;
    int by_address = reads_operands && s->key.p.src == OG_SRC_ADDR;
    for (int i = 0; i < 5; i++) {
        og_operand op = s->bind[i];
        og_buffer *b = op == OG_OPERAND_NONE ? NULL : operands[op];
        bufs[i] = b ? b : ctx->placeholder;
        key->serial[i] = bufs[i]->serial;
        if (!b)
            continue;
        uint64_t start = pl->start[op], elem;
        if (op != OG_OPERAND_A && op != OG_OPERAND_B) {
            key->offset[i] = start;
        } else if (by_address) {
            uint64_t address = b->address + start;
            uint32_t *addr = op == OG_OPERAND_A ? push->addr_a : push->addr_b;
            addr[0] = (uint32_t)address;
            addr[1] = (uint32_t)(address >> 32);
        } else if (s->src == OG_SRC_TEXEL) {
            uint32_t *off = operand_offset(push, s, op, &elem);
            *off += (uint32_t)(start / elem);
        } else {
            key->offset[i] = start;
        }
    }
}

/* Before the first dispatch: earlier compute and transfer writes reach its
 * reads and writes, and earlier reads in those stages are done first. */
static void barrier_before(og_context *ctx, VkCommandBuffer cmd)
{
    og_cmd_barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

/* After each dispatch: its writes reach the next dispatch's, copy's or the
 * host's reads, and the next dispatch's and copy's writes (onegpu.h,
 * og_gemm_encode's synchronisation); its reads are done before either writes. */
static void barrier_after(og_context *ctx, VkCommandBuffer cmd)
{
    og_cmd_barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                       VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                       VK_ACCESS_HOST_READ_BIT);
}

/* Every piece has the steps of piece 0 with other push constants and
 * grids: the same kernels, layouts and bindings (og_plan_piece). So the
 * pipelines and descriptor sets of piece 0's steps serve every piece. */
typedef struct made_steps {
    VkPipeline pipeline[OG_PIECE_STEPS];
    VkDescriptorSet set[OG_PIECE_STEPS];
} made_steps;

/* Makes the pipeline and descriptor set of each step of piece 0 (p0),
 * touching no command buffer. */
static og_status make_steps(og_context *ctx, const og_plan *pl, const og_piece *p0,
                            og_buffer *const operands[OG_OPERANDS], made_steps *out)
{
    og_status st = OG_OK;
    for (int j = 0; j < p0->n_steps && st == OG_OK; j++) {
        og_set_key key;
        og_buffer *bufs[5];
        og_push push;
        step_bindings(ctx, pl, &p0->step[j], operands, &key, bufs, &push);
        if ((st = og_pipeline_get(ctx, &p0->step[j].key, &out->pipeline[j])) == OG_OK)
            st = og_set_get(ctx, &key, bufs, &out->set[j]);
    }
    return st;
}

/* Records step s with its pipeline and set. */
static void record_step(og_context *ctx, VkCommandBuffer cmd, const og_plan *pl,
                        const og_step *s, og_buffer *const operands[OG_OPERANDS],
                        VkPipeline pipeline, VkDescriptorSet set)
{
    og_set_key key;
    og_buffer *bufs[5];
    og_push push;
    step_bindings(ctx, pl, s, operands, &key, bufs, &push);
    VkPipelineLayout layout = ctx->pipeline_layout[s->src];
    ctx->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    ctx->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                                    NULL);
    ctx->vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    ctx->vk.vkCmdDispatch(cmd, s->grid[0], s->grid[1], s->grid[2]);
    barrier_after(ctx, cmd);
}

og_status og_record_plan(og_context *ctx, VkCommandBuffer cmd, const og_plan *pl,
                         og_buffer *const operands[OG_OPERANDS])
{
    if (pl->pieces == 0)
        return OG_OK;
    og_piece piece;
    og_plan_piece(pl, 0, &piece);
    made_steps made;
    og_status st = make_steps(ctx, pl, &piece, operands, &made);
    if (st != OG_OK)
        return st;
    barrier_before(ctx, cmd);
    for (uint64_t i = 0; i < pl->pieces; i++) {
        if (i > 0)
            og_plan_piece(pl, i, &piece);
        for (int j = 0; j < piece.n_steps; j++)
            record_step(ctx, cmd, pl, &piece.step[j], operands, made.pipeline[j], made.set[j]);
    }
    return OG_OK;
}

og_status og_call_record(void *user, VkCommandBuffer cmd)
{
    og_call *c = user;
    return og_record_plan(c->ctx, cmd, &c->plan, c->operands);
}

og_status og_call_run(og_call *c)
{
    return c->plan.pieces == 0 ? OG_OK : og_run_recorded(c->ctx, og_call_record, c);
}

og_status og_call_time(og_call *c, const og_timing_plan *plan, og_timing *out)
{
    return og_time_encoder(c->ctx, og_call_record, c, plan, out);
}
