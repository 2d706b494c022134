/* The second driver lane's device (scripts/mesa26.sh run, CTest label
 * mesa26), for the tests that run only there (test_matrix_lane,
 * test_conv_lane, and test_qgemm_prefill's matrix prefill in the lane). */
#ifndef OG_LANE_H
#define OG_LANE_H

#include "og_test.h"

/* A context on a device with KHR float16 matrices, or the test fails
 * saying how to run it; *khr is the default KHR variant (its fragment and
 * subgroup size). */
static inline og_context *lane_matrix_context(og_params *khr)
{
    og_context *ctx = open_context();
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    og_matrix_choose(&ctx->limits, OG_F16, OG_MODE_FAST, notes);
    cr_assert(notes[2].params.mat == OG_MATRIX_KHR && notes[2].why[0] == '\0',
              "%s has no KHR matrix kernel (%s): run this test on Mesa 26 "
              "(scripts/mesa26.sh run, CTest label mesa26)",
              ctx->props.deviceName, notes[2].why);
    *khr = notes[2].params;
    return ctx;
}

#endif /* OG_LANE_H */
