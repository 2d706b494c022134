/* What the kernels need of a device beyond VkPhysicalDeviceLimits, and the
 * features and extensions og_context_create enables for them: packed
 * integer dot products (Int8Gemm's dot=1 kernels) and cooperative matrices
 * with what they depend on (the float16 matrix kernels: reference design,
 * "Which devices take the matrix kernel"). Nothing is guessed from the
 * vendor: every capability is read from the device. On a device the
 * application created, nothing is enabled: the kernels use what the
 * application enabled and the device supports. */
#include <string.h>

#include "og_vk.h"

/* Whether the device offers extension name (exts: its list, n long). */
static int listed(const VkExtensionProperties *exts, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(exts[i].extensionName, name) == 0)
            return 1;
    return 0;
}

static void add_extension(og_device_features *f, const char *name)
{
    if (f->n_extensions < sizeof f->extensions / sizeof f->extensions[0])
        f->extensions[f->n_extensions++] = name;
}

/* Prepends a feature structure to the chain og_context_create passes on. */
static void enable(og_device_features *f, void *feature)
{
    ((VkBaseOutStructure *)feature)->pNext = f->chain;
    f->chain = feature;
}

/* A listed shape: its dimensions (or granularities), component types and scope. */
static og_matrix_shape shape_of(uint32_t m, uint32_t n, uint32_t k, VkComponentTypeNV a,
                                VkComponentTypeNV b, VkComponentTypeNV c, VkComponentTypeNV result,
                                VkScopeNV scope)
{
    return (og_matrix_shape){.m = m,
                             .n = n,
                             .k = k,
                             .a = (int)a,
                             .b = (int)b,
                             .c = (int)c,
                             .result = (int)result,
                             .subgroup = scope == VK_SCOPE_SUBGROUP_NV};
}

/* The shapes VK_NV_cooperative_matrix lists, into caps. */
static void read_matrix_shapes(og_context *ctx, og_matrix_caps *caps)
{
    uint32_t n = 0;
    if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV ||
        vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(ctx->physical, &n, NULL) != VK_SUCCESS)
        return;
    VkCooperativeMatrixPropertiesNV props[OG_MATRIX_SHAPES_MAX];
    if (n > OG_MATRIX_SHAPES_MAX)
        n = OG_MATRIX_SHAPES_MAX;
    for (uint32_t i = 0; i < n; i++)
        props[i] = (VkCooperativeMatrixPropertiesNV){
            .sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV};
    VkResult r = vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(ctx->physical, &n, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const VkCooperativeMatrixPropertiesNV *p = &props[i];
        caps->shapes[i] = shape_of(p->MSize, p->NSize, p->KSize, p->AType, p->BType, p->CType,
                                   p->DType, p->scope);
    }
    caps->n_shapes = n;
}

/* The shapes and stages VK_KHR_cooperative_matrix lists, into caps: its
 * command is loaded by name (Debian 12's loader headers predate it). */
static void read_khr_shapes(og_context *ctx, og_matrix_caps *caps)
{
    og_coopmat_props_khr_fn get = (og_coopmat_props_khr_fn)vkGetInstanceProcAddr(
        ctx->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    uint32_t n = 0;
    if (!get || get(ctx->physical, &n, NULL) != VK_SUCCESS)
        return;
    og_coopmat_props_khr props[OG_MATRIX_SHAPES_MAX];
    if (n > OG_MATRIX_SHAPES_MAX)
        n = OG_MATRIX_SHAPES_MAX;
    for (uint32_t i = 0; i < n; i++)
        props[i] = (og_coopmat_props_khr){.sType = OG_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
    VkResult r = get(ctx->physical, &n, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const og_coopmat_props_khr *p = &props[i];
        caps->khr_shapes[i] = shape_of(p->MSize, p->NSize, p->KSize, p->AType, p->BType, p->CType,
                                       p->ResultType, p->scope);
    }
    caps->n_khr_shapes = n;
    og_coopmat_device_props_khr dp = {
        .sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &dp};
    vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
    caps->khr_compute = (dp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
}

/* VK_NV_cooperative_matrix2's flexible dimensions, into caps: the shapes'
 * granularities and the largest dimension (the command is loaded by name). */
static void read_flexible(og_context *ctx, og_matrix_caps *caps)
{
    og_coopmat_flex_props_fn get = (og_coopmat_flex_props_fn)vkGetInstanceProcAddr(
        ctx->instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
    uint32_t n = 0;
    if (!get || get(ctx->physical, &n, NULL) != VK_SUCCESS)
        return;
    og_coopmat_flex_props_nv props[OG_MATRIX_SHAPES_MAX];
    if (n > OG_MATRIX_SHAPES_MAX)
        n = OG_MATRIX_SHAPES_MAX;
    for (uint32_t i = 0; i < n; i++)
        props[i] = (og_coopmat_flex_props_nv){
            .sType = OG_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV};
    VkResult r = get(ctx->physical, &n, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const og_coopmat_flex_props_nv *p = &props[i];
        caps->flex_shapes[i] = shape_of(p->MGranularity, p->NGranularity, p->KGranularity, p->AType,
                                        p->BType, p->CType, p->ResultType, p->scope);
    }
    caps->n_flex_shapes = n;
    og_coopmat2_props_nv dp = {.sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &dp};
    vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
    caps->flex_max = dp.cooperativeMatrixFlexibleDimensionsMaxDimension;
    caps->flexible = 1;
}

/* Subgroup sizes a compute shader can be pinned to, once size control is on. */
static void read_size_control(og_context *ctx, og_matrix_caps *caps, int full_subgroups)
{
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &sp};
    vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
    caps->size_control = (sp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    if (caps->size_control) {
        caps->subgroup_min = sp.minSubgroupSize;
        caps->subgroup_max = sp.maxSubgroupSize;
    }
    caps->full_subgroups = full_subgroups;
}

/* Cooperative matrices (the device lists them, NV or KHR or both): their
 * shapes, the features and extensions, KHR matrices' flexible dimensions
 * (VK_NV_cooperative_matrix2; only that feature of it: the coopmat2
 * kernel's) and subgroup size control where the device has them. */
static void enable_matrix(og_context *ctx, og_device_features *f, int nv, int khr, int flexible,
                          int has_size_control)
{
    og_matrix_caps *caps = &ctx->limits.matrix;
    if (nv) {
        read_matrix_shapes(ctx, caps);
        f->matrix = (VkPhysicalDeviceCooperativeMatrixFeaturesNV){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
            .cooperativeMatrix = VK_TRUE};
        enable(f, &f->matrix);
        add_extension(f, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    if (khr) {
        read_khr_shapes(ctx, caps);
        f->matrix_khr = (og_coopmat_features_khr){
            .sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
            .cooperativeMatrix = VK_TRUE};
        enable(f, &f->matrix_khr);
        add_extension(f, OG_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    if (khr && flexible) {
        read_flexible(ctx, caps);
        f->matrix2 = (og_coopmat2_features_nv){
            .sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
            .cooperativeMatrixFlexibleDimensions = VK_TRUE};
        enable(f, &f->matrix2);
        add_extension(f, OG_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    }
    caps->subgroup_min = caps->subgroup_max = ctx->limits.subgroup_size;
    if (has_size_control && f->size_control.subgroupSizeControl) {
        read_size_control(ctx, caps, f->size_control.computeFullSubgroups == VK_TRUE);
        f->size_control = (VkPhysicalDeviceSubgroupSizeControlFeaturesEXT){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT,
            .subgroupSizeControl = VK_TRUE,
            .computeFullSubgroups = f->size_control.computeFullSubgroups};
        enable(f, &f->size_control);
        add_extension(f, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    }
}

void og_device_features_read(og_context *ctx, og_device_features *f)
{
    memset(f, 0, sizeof *f);
    og_limits *lim = &ctx->limits;
    memset(&lim->matrix, 0, sizeof lim->matrix);
    lim->integer_dot = 0;
    lim->buffer_address = 0;
    lim->address_off = OG_ADDRESS_UNSUPPORTED;
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(ctx->physical, NULL, &n, NULL) != VK_SUCCESS || !n)
        return;
    VkExtensionProperties *exts = og_mem_alloc(&ctx->allocator, n * sizeof *exts);
    if (!exts ||
        vkEnumerateDeviceExtensionProperties(ctx->physical, NULL, &n, exts) != VK_SUCCESS) {
        og_mem_free(&ctx->allocator, exts);
        return;
    }
    int has_dot = listed(exts, n, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    int has_matrix = listed(exts, n, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    int has_khr = listed(exts, n, OG_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    int has_matrix2 = listed(exts, n, OG_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    int has_size_control = listed(exts, n, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    int core12 = VK_API_VERSION_MINOR(ctx->props.apiVersion) >= 2 ||
                 VK_API_VERSION_MAJOR(ctx->props.apiVersion) > 1;
    og_mem_free(&ctx->allocator, exts);

    /* Read every feature structure the device knows in one query. */
    f->dot.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR;
    f->matrix.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    f->matrix_khr.sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    f->matrix2.sType = OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV;
    f->size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT;
    f->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    void *query = NULL;
    if (has_dot) {
        f->dot.pNext = query;
        query = &f->dot;
    }
    if (has_matrix) {
        f->matrix.pNext = query;
        query = &f->matrix;
    }
    if (has_khr) {
        f->matrix_khr.pNext = query;
        query = &f->matrix_khr;
    }
    if (has_matrix2) {
        f->matrix2.pNext = query;
        query = &f->matrix2;
    }
    if (has_size_control) {
        f->size_control.pNext = query;
        query = &f->size_control;
    }
    if (core12) {
        f->v11.pNext = query;
        f->v12.pNext = &f->v11;
        query = &f->v12;
    }
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = query};
    vkGetPhysicalDeviceFeatures2(ctx->physical, &f2);

    /* Then keep only what is enabled: the chain is rebuilt from scratch. */
    if (has_dot && f->dot.shaderIntegerDotProduct) {
        lim->integer_dot = 1;
        f->dot = (VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
            .shaderIntegerDotProduct = VK_TRUE};
        enable(f, &f->dot);
        add_extension(f, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    }
    int nv = has_matrix && f->matrix.cooperativeMatrix;
    int khr = has_khr && f->matrix_khr.cooperativeMatrix;
    int matrix = nv || khr;
    int flexible = has_matrix2 && f->matrix2.cooperativeMatrixFlexibleDimensions;
    if (matrix)
        enable_matrix(ctx, f, nv, khr, flexible, has_size_control);
    if (!core12)
        return;
    /* Device addresses read A and B past maxStorageBufferRange (og_rules.c). */
    VkBool32 address = f->v12.bufferDeviceAddress;
    lim->buffer_address = address == VK_TRUE;
    og_matrix_caps *caps = &lim->matrix;
    /* Float16, int8 and 16-bit storage wherever the device has them: the
     * matrix kernels' (int8: Int8Gemm's) and their emulation's (mat=emu,
     * which the tests run on devices without matrices); the memory model
     * for matrices only. */
    VkBool32 f16 = f->v12.shaderFloat16, i8 = f->v12.shaderInt8, model = 0,
             s16 = f->v11.storageBuffer16BitAccess;
    caps->float16 = f16 == VK_TRUE;
    caps->int8 = i8 == VK_TRUE;
    caps->storage16 = s16 == VK_TRUE;
    if (matrix) {
        caps->memory_model = f->v12.vulkanMemoryModel == VK_TRUE;
        model = f->v12.vulkanMemoryModel;
    }
    f->v12 = (VkPhysicalDeviceVulkan12Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .shaderFloat16 = f16,
        .shaderInt8 = i8,
        .vulkanMemoryModel = model,
        .bufferDeviceAddress = address};
    f->v11 = (VkPhysicalDeviceVulkan11Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .storageBuffer16BitAccess = s16};
    enable(f, &f->v12);
    enable(f, &f->v11);
}

/* Whether name is among the n extensions of list. */
static int enabled(const char *const *list, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i] && strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

/* Whether a Vulkan 1.2 device has bufferDeviceAddress, enabled or not. */
static int address_supported(og_context *ctx)
{
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &v12};
    vkGetPhysicalDeviceFeatures2(ctx->physical, &f2);
    return v12.bufferDeviceAddress == VK_TRUE;
}

void og_device_features_adopt(og_context *ctx, const VkDeviceCreateInfo *info)
{
    og_limits *lim = &ctx->limits;
    memset(&lim->matrix, 0, sizeof lim->matrix);
    lim->integer_dot = 0;
    lim->buffer_address = 0;
    lim->address_off = OG_ADDRESS_UNSUPPORTED;
    const char *const *ext = info->ppEnabledExtensionNames;
    uint32_t n_ext = info->enabledExtensionCount;
    int core13 = VK_API_VERSION_MINOR(ctx->props.apiVersion) >= 3 ||
                 VK_API_VERSION_MAJOR(ctx->props.apiVersion) > 1;
    int core12 = core13 || VK_API_VERSION_MINOR(ctx->props.apiVersion) >= 2;
    VkBool32 dot = 0, matrix = 0, matrix_khr = 0, flexible = 0, size_control = 0, full = 0,
             f16 = 0, i8 = 0, model = 0, s16 = 0, address = 0;
    /* The feature structures the application chained (a VkPhysicalDeviceFeatures2
     * among them, or not): a feature counts when any structure enables it. */
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        switch ((uint32_t)s->sType) { /* KHR matrices: a type the headers lack */
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
            s16 |= ((const VkPhysicalDeviceVulkan11Features *)s)->storageBuffer16BitAccess;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
            s16 |= ((const VkPhysicalDevice16BitStorageFeatures *)s)->storageBuffer16BitAccess;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
            const VkPhysicalDeviceVulkan12Features *v = (const void *)s;
            f16 |= v->shaderFloat16;
            i8 |= v->shaderInt8;
            model |= v->vulkanMemoryModel;
            address |= v->bufferDeviceAddress;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
            address |= ((const VkPhysicalDeviceBufferDeviceAddressFeatures *)s)->bufferDeviceAddress;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
            f16 |= ((const VkPhysicalDeviceShaderFloat16Int8Features *)s)->shaderFloat16;
            i8 |= ((const VkPhysicalDeviceShaderFloat16Int8Features *)s)->shaderInt8;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
            model |= ((const VkPhysicalDeviceVulkanMemoryModelFeatures *)s)->vulkanMemoryModel;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: {
            const VkPhysicalDeviceVulkan13Features *v = (const void *)s;
            dot |= v->shaderIntegerDotProduct;
            size_control |= v->subgroupSizeControl;
            full |= v->computeFullSubgroups;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR:
            dot |= ((const VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR *)s)
                       ->shaderIntegerDotProduct;
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT: {
            const VkPhysicalDeviceSubgroupSizeControlFeaturesEXT *v = (const void *)s;
            size_control |= v->subgroupSizeControl;
            full |= v->computeFullSubgroups;
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV:
            matrix |= ((const VkPhysicalDeviceCooperativeMatrixFeaturesNV *)s)->cooperativeMatrix;
            break;
        case OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR:
            matrix_khr |= ((const og_coopmat_features_khr *)s)->cooperativeMatrix;
            break;
        case OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV:
            flexible |=
                ((const og_coopmat2_features_nv *)s)->cooperativeMatrixFlexibleDimensions;
            break;
        default:
            break;
        }
    }
    lim->integer_dot =
        dot && (core13 || enabled(ext, n_ext, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME));
    /* The core vkGetBufferDeviceAddress: a Vulkan 1.2 device. */
    lim->buffer_address = address && core12 && ctx->vk.vkGetBufferDeviceAddress;
    if (!address && core12 && address_supported(ctx))
        lim->address_off = OG_ADDRESS_NOT_ENABLED;
    int nv = matrix && enabled(ext, n_ext, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    int khr = matrix_khr && enabled(ext, n_ext, OG_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (!nv && !khr)
        return; /* no shapes listed: the matrix kernels never qualify */
    og_matrix_caps *caps = &lim->matrix;
    if (nv)
        read_matrix_shapes(ctx, caps);
    if (khr)
        read_khr_shapes(ctx, caps);
    if (khr && flexible && enabled(ext, n_ext, OG_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME))
        read_flexible(ctx, caps);
    caps->subgroup_min = caps->subgroup_max = lim->subgroup_size;
    if (size_control &&
        (core13 || enabled(ext, n_ext, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)))
        read_size_control(ctx, caps, full == VK_TRUE);
    caps->float16 = f16 == VK_TRUE;
    caps->int8 = i8 == VK_TRUE;
    caps->memory_model = model == VK_TRUE;
    caps->storage16 = s16 == VK_TRUE;
}
