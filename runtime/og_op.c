/* One path for every op object (og_internal.h, og_op): each public call is
 * checked once, its kernel chosen, planned and recorded into the
 * application's command buffer (encode), or into the context's own,
 * submitted and waited for (run), or timed; the op's table says what
 * differs. */
#include <string.h>

#include "og_internal.h"

og_status og_op_check(const og_op *op, void *obj, const void *args, og_checked *c)
{
    memset(c, 0, sizeof *c);
    return op->check(obj, args, c);
}

og_status og_op_call(const og_op *op, void *obj, og_op_way way, VkCommandBuffer cmd,
                     const void *args, const og_checked *c, const og_params *p)
{
    if (c->empty)
        return OG_OK;
    og_params chosen = {0};
    og_status st = OG_OK;
    if (!p && op->choose) {
        if ((st = op->choose(obj, args, c, &chosen)) != OG_OK)
            return st;
    }
    og_call call;
    if ((st = op->plan(obj, args, c, p ? p : &chosen, &call)) != OG_OK)
        return st;
    return way == OG_OP_RUN ? og_call_run(&call) : og_call_record(&call, cmd);
}

og_status og_op_encode(const og_op *op, void *obj, VkCommandBuffer cmd, const void *args,
                       const og_params *p)
{
    og_checked c;
    og_status st = og_op_check(op, obj, args, &c);
    return st != OG_OK ? st : og_op_call(op, obj, OG_OP_ENCODE, cmd, args, &c, p);
}

og_status og_op_run(const og_op *op, void *obj, const void *args, const og_params *p)
{
    og_checked c;
    og_status st = og_op_check(op, obj, args, &c);
    return st != OG_OK ? st : og_op_call(op, obj, OG_OP_RUN, VK_NULL_HANDLE, args, &c, p);
}

og_status og_op_time(const og_op *op, void *obj, const void *args, const og_params *p,
                     const og_timing_plan *plan, og_timing *out)
{
    og_checked c;
    og_call call;
    *out = (og_timing){0};
    og_status st = og_op_check(op, obj, args, &c);
    if (st == OG_OK && c.empty)
        st = og_fail(op->context(obj), OG_ERROR_INVALID_ARGUMENT, "%s: nothing to time", op->name);
    if (st == OG_OK)
        st = op->plan(obj, args, &c, p, &call);
    return st != OG_OK ? st : og_call_time(&call, plan, out);
}

og_status og_op_describe(const og_op *op, void *obj, const void *args, char *buf, size_t len)
{
    og_checked c;
    if (!op->describe_checks)
        return op->describe(obj, args, NULL, buf, len);
    og_status st = og_op_check(op, obj, args, &c);
    return st != OG_OK ? st : op->describe(obj, args, &c, buf, len);
}
