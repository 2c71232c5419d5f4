/* A plugin as a third party wrote it against the released ABI 1.3 header
 * (compat/abi-1.3/axon/plugin_abi.h, kept as it was): plain C, no SDK
 * helpers, one host-memory device of type OLDTOY with Relu and Scale. The
 * host of today must load it and run its kernels, reading none of the
 * fields later minors appended (supports, get_extension, ...). */
#include <axon/plugin_abi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if AXON_ABI_MAJOR != 1 || AXON_ABI_MINOR != 3
#error "this plugin must be built against the ABI 1.3 header"
#endif

static void set_error(axon_error* err, const char* message) {
  if (err != NULL) snprintf(err->message, sizeof err->message, "%s", message);
}

static int64_t numel(const axon_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= t->dims[i];
  return n;
}

/* One float32 x and a y of its shape, with memory where they have elements. */
static int same_float_shape(const axon_kernel_call* call) {
  if (call->num_inputs != 1 || call->num_outputs != 1 || call->inputs == NULL || call->outputs == NULL) return 0;
  const axon_tensor* x = &call->inputs[0];
  const axon_tensor* y = &call->outputs[0];
  if (x->dtype != AXON_FLOAT32 || y->dtype != AXON_FLOAT32 || x->rank != y->rank || x->rank < 0 ||
      x->rank > AXON_MAX_RANK)
    return 0;
  for (int32_t i = 0; i < x->rank; ++i)
    if (x->dims[i] != y->dims[i] || x->dims[i] < 0) return 0;
  return numel(x) == 0 || (x->data != NULL && y->data != NULL);
}

static axon_status relu(void* ctx, const axon_kernel_call* call, axon_error* err) {
  (void)ctx;
  if (!same_float_shape(call))
    return set_error(err, "oldtoy Relu: one float32 x and a y of its shape"), AXON_INVALID_ARGUMENT;
  const float* x = (const float*)call->inputs[0].data;
  float* y = (float*)call->outputs[0].data;
  for (int64_t i = 0; i < numel(&call->inputs[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  return AXON_OK;
}

static axon_status scale(void* ctx, const axon_kernel_call* call, axon_error* err) {
  (void)ctx;
  const axon_scale_attrs* a = (const axon_scale_attrs*)call->attrs;
  if (!same_float_shape(call) || a == NULL || a->struct_size < AXON_STRUCT_SIZE(axon_scale_attrs, alpha))
    return set_error(err, "oldtoy Scale: one float32 x, a y of its shape and axon_scale_attrs"), AXON_INVALID_ARGUMENT;
  const float* x = (const float*)call->inputs[0].data;
  float* y = (float*)call->outputs[0].data;
  for (int64_t i = 0; i < numel(&call->inputs[0]); ++i) y[i] = a->alpha * x[i];
  return AXON_OK;
}

static axon_status allocate(void* ctx, size_t bytes, void** ptr, axon_error* err) {
  (void)ctx;
  size_t rounded = (bytes + AXON_ALLOCATION_ALIGNMENT - 1) / AXON_ALLOCATION_ALIGNMENT * AXON_ALLOCATION_ALIGNMENT;
  *ptr = aligned_alloc(AXON_ALLOCATION_ALIGNMENT, rounded == 0 ? AXON_ALLOCATION_ALIGNMENT : rounded);
  if (*ptr == NULL) return set_error(err, "oldtoy: out of host memory"), AXON_OUT_OF_MEMORY;
  return AXON_OK;
}

static void deallocate(void* ctx, void* ptr) {
  (void)ctx;
  free(ptr);
}

static axon_status copy(void* ctx, void* dst, const void* src, size_t bytes, axon_error* err) {
  (void)ctx;
  (void)err;
  if (bytes > 0) memmove(dst, src, bytes);
  return AXON_OK;
}

static axon_status synchronize(void* ctx, axon_error* err) {
  (void)ctx;
  (void)err;
  return AXON_OK;
}

static axon_kernel_fn get_kernel(void* ctx, const char* op, axon_dtype dtype) {
  (void)ctx;
  if (dtype != AXON_FLOAT32) return NULL;
  if (strcmp(op, "Relu") == 0) return relu;
  if (strcmp(op, "Scale") == 0) return scale;
  return NULL;
}

static const char* const kOps[] = {"Relu", "Scale", NULL};
static const char* const* list_ops(void* ctx) {
  (void)ctx;
  return kOps;
}

static int32_t device_count(void* ctx) {
  (void)ctx;
  return 1;
}

static axon_status get_device_props(void* ctx, int32_t id, axon_device_props* props, axon_error* err) {
  (void)ctx;
  if (id != 0) return set_error(err, "oldtoy: one device"), AXON_INVALID_ARGUMENT;
  memset(props, 0, sizeof *props);
  props->struct_size = AXON_STRUCT_SIZE(axon_device_props, description);
  snprintf(props->name, sizeof props->name, "ABI 1.3 test device");
  return AXON_OK;
}

static axon_status open_device(void* ctx, int32_t id, const axon_device_config* config, axon_device_api* out,
                               axon_error* err) {
  (void)ctx;
  (void)config;
  if (id != 0) return set_error(err, "oldtoy: one device"), AXON_INVALID_ARGUMENT;
  out->struct_size = AXON_STRUCT_SIZE(axon_device_api, close);
  out->device_ctx = NULL;
  out->allocate = allocate;
  out->deallocate = deallocate;
  out->copy_host_to_device = copy;
  out->copy_device_to_host = copy;
  out->copy_device_to_device = copy;
  out->synchronize = synchronize;
  out->get_kernel = get_kernel;
  out->list_ops = list_ops;
  out->memory_info = NULL;
  out->close = NULL;
  return AXON_OK;
}

AXON_PLUGIN_EXPORT axon_status axon_plugin_init(const axon_host_api* host, axon_plugin_api* out, axon_error* err) {
  (void)host;
  (void)err;
  out->struct_size = AXON_STRUCT_SIZE(axon_plugin_api, collectives);
  out->abi_major = AXON_ABI_MAJOR;
  out->abi_minor = AXON_ABI_MINOR;
  out->name = "oldtoy";
  out->version = "1.3.0";
  out->device_type = "OLDTOY";
  out->priority = 50;
  out->plugin_ctx = NULL;
  out->device_count = device_count;
  out->get_device_props = get_device_props;
  out->open_device = open_device;
  out->unavailable_reason = NULL;
  out->excluded_count = NULL;
  out->get_excluded = NULL;
  out->collectives = NULL;
  return AXON_OK;
}
