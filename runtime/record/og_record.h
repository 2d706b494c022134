/* The runtime's recording layer (not installed): a plan (../plan) becomes
 * commands in a command buffer, through the Vulkan objects of ../vk. */
#ifndef OG_RECORD_H
#define OG_RECORD_H

#include "../plan/og_plan.h"

/* Records every piece of pl into cmd, with operands[OG_OPERAND_x] bound
 * where the steps name them (OG_OPERAND_NONE: the context's placeholder).
 *
 * Synchronisation, the contract of og_gemm_encode and og_int8gemm_encode:
 * first one global memory barrier from the compute-shader and transfer
 * stages (shader and transfer writes) to the compute-shader stage (shader
 * reads and writes), so earlier dispatches and copies that wrote A, B, C,
 * the bias or the scales are visible, and earlier reads of C are done
 * before it is written; then, after every dispatch, one from the
 * compute-shader stage (shader writes) to the compute-shader, transfer and
 * host stages (shader reads and writes, transfer reads, host reads).
 *
 * Every pipeline and descriptor set is made before the first command, so on
 * error nothing has been recorded. Recording a plan whose kernels and sets
 * are cached allocates nothing. */
og_status og_record_plan(og_context *ctx, VkCommandBuffer cmd, const og_plan *pl,
                         og_buffer *const operands[OG_OPERANDS]);

/* A planned call and the buffers its steps bind (operands[OG_OPERAND_x]). */
typedef struct og_call {
    og_context *ctx;
    og_plan plan;
    og_buffer *operands[OG_OPERANDS];
} og_call;

/* Records the call into cmd (an og_encoder: user is the og_call). */
og_status og_call_record(void *user, VkCommandBuffer cmd);
/* Records the call into the context's command buffer, submits and waits. */
og_status og_call_run(og_call *c);
/* Times the call (og_time_encoder). */
og_status og_call_time(og_call *c, const og_timing_plan *plan, og_timing *out);

#endif /* OG_RECORD_H */
