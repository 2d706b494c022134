/* The context's descriptor sets, by the buffers they bind. A set is never
 * freed, reset or rewritten while a command buffer may still use it: it
 * leaves the table only when one of its buffers is destroyed (the caller
 * has then finished every command that used that buffer: Vulkan's rule for
 * vkDestroyBuffer) or when the caller releases them all
 * (og_context_release_bindings); it is kept as a spare of its layout and
 * rewritten for a later key. When the pools are full another, larger pool
 * is added. */
#include <inttypes.h>
#include <string.h>

#include "og_vk.h"

/* Sets of the first pool; each further pool holds twice the last, up to OG_POOL_MAX. */
#define OG_POOL_FIRST 64u
#define OG_POOL_MAX 4096u

/* The buffer's view with texels of `words` 32-bit words (1, 2 or 4:
 * R32_UINT, R32G32_UINT, R32G32B32A32_UINT), created on first use and
 * destroyed with the buffer. */
static og_status texel_view(og_buffer *buf, uint32_t words, VkBufferView *out)
{
    static const VkFormat formats[3] = {VK_FORMAT_R32_UINT, VK_FORMAT_R32G32_UINT,
                                        VK_FORMAT_R32G32B32A32_UINT};
    og_context *ctx = buf->ctx;
    int kind = words == 4 ? 2 : words == 2 ? 1 : 0;
    if (!buf->texels[kind]) {
        /* Whole texels from base, as many as maxTexelBufferElements allows:
         * og_params_for_call sends calls that reach further to storage-buffer
         * loads, and vector loads only read whole aligned groups inside the
         * operand. */
        uint64_t texel = 4 * (uint64_t)words;
        uint64_t count = buf->allocated / texel;
        if (count > ctx->limits.max_texel_elements)
            count = ctx->limits.max_texel_elements;
        if (count == 0)
            return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                           "buffer: %" PRIu64 " bytes hold no %" PRIu64 "-byte texel",
                           buf->allocated, texel);
        VkBufferViewCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                       .buffer = buf->buffer,
                                       .format = formats[kind],
                                       .offset = buf->base,
                                       .range = count * texel};
        VkResult r = ctx->vk.vkCreateBufferView(ctx->device, &info, NULL, &buf->texels[kind]);
        if (r != VK_SUCCESS)
            return og_vk_fail(ctx, r, "buffer: vkCreateBufferView");
    }
    *out = buf->texels[kind];
    return OG_OK;
}

static uint64_t key_hash(const og_set_key *k)
{
    return og_fnv1a(OG_FNV_OFFSET, k, sizeof *k);
}

static int key_equal(const og_set_key *a, const og_set_key *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* The slot of key, or the empty slot where it would go (never a full table:
 * the load is kept under three quarters). */
static og_set_entry *slot_of(const og_set_cache *c, const og_set_key *key)
{
    size_t mask = c->cap - 1, i = (size_t)key_hash(key) & mask;
    og_set_entry *grave = NULL;
    for (;; i = (i + 1) & mask) {
        og_set_entry *e = &c->table[i];
        if (e->set == VK_NULL_HANDLE && !e->removed)
            return grave ? grave : e;
        if (e->removed) {
            if (!grave)
                grave = e;
        } else if (key_equal(&e->key, key)) {
            return e;
        }
    }
}

static og_status grow_table(og_context *ctx)
{
    og_set_cache *c = &ctx->sets;
    size_t cap = c->cap ? 2 * c->cap : 256;
    if (c->cap && (c->used + 1) * 4 < c->cap * 3 / 2)
        cap = c->cap; /* mostly tombstones: rehash in place */
    og_set_entry *old = c->table;
    size_t old_cap = c->cap;
    og_set_entry *table = og_mem_alloc(&ctx->allocator, cap * sizeof *table);
    if (!table)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "descriptor sets: out of memory");
    c->table = table;
    c->cap = cap;
    c->removed = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].set != VK_NULL_HANDLE && !old[i].removed)
            *slot_of(c, &old[i].key) = old[i];
    og_mem_free(&ctx->allocator, old);
    return OG_OK;
}

static og_status push_spare(og_context *ctx, uint32_t src, VkDescriptorSet set)
{
    og_set_cache *c = &ctx->sets;
    if (c->n_spare[src] == c->cap_spare[src]) {
        size_t cap = c->cap_spare[src] ? 2 * c->cap_spare[src] : 64;
        VkDescriptorSet *grown =
            og_mem_realloc(&ctx->allocator, c->spare[src], cap * sizeof *grown);
        if (!grown)
            return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "descriptor sets: out of memory");
        c->spare[src] = grown;
        c->cap_spare[src] = cap;
    }
    c->spare[src][c->n_spare[src]++] = set;
    return OG_OK;
}

/* A set of layout src: a spare one, else a new one from the pools. */
static og_status new_set(og_context *ctx, uint32_t src, VkDescriptorSet *out)
{
    og_set_cache *c = &ctx->sets;
    if (c->n_spare[src]) {
        *out = c->spare[src][--c->n_spare[src]];
        return OG_OK;
    }
    if (c->room == 0) {
        uint32_t sets = OG_POOL_FIRST << (c->n_pools < 6 ? c->n_pools : 6);
        if (sets > OG_POOL_MAX)
            sets = OG_POOL_MAX;
        VkDescriptorPool *grown =
            og_mem_realloc(&ctx->allocator, c->pools, (c->n_pools + 1) * sizeof *grown);
        if (!grown)
            return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "descriptor sets: out of memory");
        c->pools = grown;
        /* A set holds five storage buffers, or three and four texel views. */
        VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 5 * sets},
                                         {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 4 * sets}};
        VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                           .maxSets = sets,
                                           .poolSizeCount = 2,
                                           .pPoolSizes = sizes};
        VkResult r = ctx->vk.vkCreateDescriptorPool(ctx->device, &info, NULL, &c->pools[c->n_pools]);
        if (r != VK_SUCCESS)
            return og_vk_fail(ctx, r, "descriptor sets: vkCreateDescriptorPool");
        c->n_pools++;
        c->room = sets;
    }
    VkDescriptorSetAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                         .descriptorPool = c->pools[c->n_pools - 1],
                                         .descriptorSetCount = 1,
                                         .pSetLayouts = &ctx->set_layout[src]};
    VkResult r = ctx->vk.vkAllocateDescriptorSets(ctx->device, &alloc, out);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "descriptor sets: vkAllocateDescriptorSets");
    c->room--;
    return OG_OK;
}

static void write_set(og_context *ctx, const og_set_key *key, og_buffer *const bufs[5],
                      const VkBufferView views[5], VkDescriptorSet set)
{
    /* Bindings 0, 1, 2, 3 and 5 (A, B, C, column scales, bias); texel
     * layouts have A's and B's vector views at 3 and 4 and the column
     * scales at 6. */
    static const uint32_t storage_bindings[] = {0, 1, 2, 3, 5},
                          texel_bindings[] = {0, 1, 2, 3, 4, 5, 6};
    int texel_layout = key->src == OG_SRC_TEXEL;
    const uint32_t *which = texel_layout ? texel_bindings : storage_bindings;
    uint32_t n_writes = texel_layout ? 7 : 5;
    /* A binding covers the buffer from its offset up to maxStorageBufferRange;
     * the checks refuse calls that reach beyond it. */
    uint64_t max_range = ctx->limits.max_storage_range & ~(uint64_t)3;
    VkDescriptorBufferInfo infos[7];
    VkWriteDescriptorSet writes[7];
    for (uint32_t w = 0; w < n_writes; w++) {
        uint32_t binding = which[w];
        int texel = texel_layout && binding != 2 && binding < 5;
        /* bufs[] holds bindings 0, 1, 2, 3, 5; texel bindings 3 and 4 are
         * views of A and B, and 6 is what storage layouts bind at 3. */
        uint32_t slot = binding == 5 ? 4 : binding == 6 ? 3 : binding;
        const og_buffer *b = bufs[slot];
        uint64_t offset = key->offset[slot], left = b->allocated - offset;
        if (!texel)
            infos[w] = (VkDescriptorBufferInfo){b->buffer, b->base + offset,
                                                left < max_range ? left : max_range};
        writes[w] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = binding,
            .descriptorCount = 1,
            .descriptorType =
                texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = texel ? NULL : &infos[w],
            .pTexelBufferView = texel ? &views[binding] : NULL};
    }
    ctx->vk.vkUpdateDescriptorSets(ctx->device, n_writes, writes, 0, NULL);
}

/* The table's entry of the set r names, or NULL where that set has left
 * the table. */
static og_set_entry *live_entry(const og_set_cache *c, const og_set_ref *r)
{
    if (!c->cap)
        return NULL;
    og_set_entry *e = slot_of(c, &r->key);
    return e->set != VK_NULL_HANDLE && !e->removed && e->made == r->made ? e : NULL;
}

/* Room for one more set in buf's list: when it is full, the sets that have
 * left the table are dropped first, and it grows only if more than half of
 * it is still live (so each entry is looked at a bounded number of times
 * on average). */
static og_status reserve_ref(og_context *ctx, og_buffer *buf)
{
    if (buf->n_sets < buf->cap_sets)
        return OG_OK;
    size_t n = 0;
    for (size_t i = 0; i < buf->n_sets; i++)
        if (live_entry(&ctx->sets, &buf->sets[i]))
            buf->sets[n++] = buf->sets[i];
    buf->n_sets = n;
    if (buf->cap_sets && n * 2 <= buf->cap_sets)
        return OG_OK;
    size_t cap = buf->cap_sets ? 2 * buf->cap_sets : 4;
    og_set_ref *grown = og_mem_realloc(&ctx->allocator, buf->sets, cap * sizeof *grown);
    if (!grown)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "descriptor sets: out of memory");
    buf->sets = grown;
    buf->cap_sets = cap;
    return OG_OK;
}

/* Whether bufs[i] already appeared at an earlier binding. */
static int seen_before(og_buffer *const bufs[5], int i)
{
    for (int j = 0; j < i; j++)
        if (bufs[j] == bufs[i])
            return 1;
    return 0;
}

og_status og_set_get(og_context *ctx, const og_set_key *key, og_buffer *const bufs[5],
                     VkDescriptorSet *out)
{
    og_set_cache *c = &ctx->sets;
    og_status st;
    if (c->cap) {
        og_set_entry *e = slot_of(c, key);
        if (e->set != VK_NULL_HANDLE && !e->removed) {
            *out = e->set;
            return OG_OK;
        }
    }
    VkBufferView views[5] = {VK_NULL_HANDLE};
    if (key->src == OG_SRC_TEXEL) {
        /* Scalar views at 0 and 1, vector views at 3 and 4. */
        for (int i = 0; i < 2; i++) {
            if ((st = texel_view(bufs[i], 1, &views[i])) != OG_OK ||
                (st = texel_view(bufs[i], key->vec_words, &views[3 + i])) != OG_OK)
                return st;
        }
    }
    if ((c->used + c->removed + 1) * 4 > c->cap * 3 && (st = grow_table(ctx)) != OG_OK)
        return st;
    for (int i = 0; i < 5; i++)
        if (!seen_before(bufs, i) && (st = reserve_ref(ctx, bufs[i])) != OG_OK)
            return st;
    VkDescriptorSet set;
    if ((st = new_set(ctx, key->src, &set)) != OG_OK)
        return st;
    write_set(ctx, key, bufs, views, set);
    og_set_entry *e = slot_of(c, key);
    if (e->removed)
        c->removed--;
    *e = (og_set_entry){.key = *key, .made = ++c->made, .set = set};
    c->used++;
    for (int i = 0; i < 5; i++)
        if (!seen_before(bufs, i))
            bufs[i]->sets[bufs[i]->n_sets++] = (og_set_ref){*key, e->made};
    *out = set;
    return OG_OK;
}

/* Moves entry e's set to the spares (on failure to grow the spare list the
 * set simply stays allocated in its pool until the context goes). */
static void retire(og_context *ctx, og_set_entry *e)
{
    og_set_cache *c = &ctx->sets;
    push_spare(ctx, e->key.src, e->set);
    e->set = VK_NULL_HANDLE;
    e->removed = 1;
    c->used--;
    c->removed++;
}

void og_sets_forget(og_buffer *buf)
{
    og_context *ctx = buf->ctx;
    for (size_t i = 0; i < buf->n_sets; i++) {
        og_set_entry *e = live_entry(&ctx->sets, &buf->sets[i]);
        if (e)
            retire(ctx, e);
    }
    ctx->sets.forget_visits += buf->n_sets;
    og_mem_free(&ctx->allocator, buf->sets);
    buf->sets = NULL;
    buf->n_sets = buf->cap_sets = 0;
}

void og_sets_forget_all(og_context *ctx)
{
    og_set_cache *c = &ctx->sets;
    for (size_t i = 0; i < c->cap && c->used; i++)
        if (c->table[i].set != VK_NULL_HANDLE)
            retire(ctx, &c->table[i]);
}

void og_context_release_bindings(og_context *ctx)
{
    og_sets_forget_all(ctx);
}

void og_sets_destroy(og_context *ctx)
{
    og_set_cache *c = &ctx->sets;
    for (size_t i = 0; i < c->n_pools; i++)
        ctx->vk.vkDestroyDescriptorPool(ctx->device, c->pools[i], NULL);
    og_mem_free(&ctx->allocator, c->pools);
    og_mem_free(&ctx->allocator, c->table);
    for (int s = 0; s < 2; s++)
        og_mem_free(&ctx->allocator, c->spare[s]);
    memset(c, 0, sizeof *c);
}
