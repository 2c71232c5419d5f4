/* axon plugin ABI: the only contract between the axon runtime (the host) and a
 * device backend (a plugin). Plain C so that any compiler, any C++ standard
 * library and any language with a C FFI can implement a backend.
 *
 * Rules (see docs/plugin-guide.md):
 *  - Every struct begins with `size_t struct_size`, set by whoever fills the
 *    struct to AXON_STRUCT_SIZE(type, last_field_it_knows). A reader treats any
 *    field that lies beyond struct_size as absent (zero / NULL). Fields are only
 *    ever appended; that is how minor versions stay compatible.
 *  - A different AXON_ABI_MAJOR is a hard reject, in both directions.
 *  - Errors cross the boundary as an axon_status code plus a message written
 *    into the caller's axon_error. C++ exceptions never cross it.
 *  - The host loads a plugin once and never unloads it.
 *  - A plugin exports exactly one symbol, AXON_PLUGIN_ENTRY_SYMBOL.
 */
#ifndef AXON_PLUGIN_ABI_H
#define AXON_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AXON_ABI_MAJOR 1
#define AXON_ABI_MINOR 3

/* Size of a struct up to and including `field`: what struct_size is set to. */
#define AXON_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

#define AXON_PLUGIN_ENTRY_SYMBOL "axon_plugin_init"

#if defined(_WIN32)
#define AXON_PLUGIN_EXPORT __declspec(dllexport)
#else
#define AXON_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ status */

typedef enum axon_status {
  AXON_OK = 0,
  AXON_INVALID_ARGUMENT = 1, /* bad shapes, attrs, pointers */
  AXON_OUT_OF_MEMORY = 2,    /* message says requested, limit, in use, largest free */
  AXON_UNIMPLEMENTED = 3,    /* no such kernel / feature */
  AXON_UNAVAILABLE = 4,      /* driver, library or device missing */
  AXON_INTERNAL = 5,         /* a library call failed; message names it */
  AXON_DEADLINE_EXCEEDED = 6 /* a collective timed out */
} axon_status;

/* "AXON_INVALID_ARGUMENT", ...: how hosts and tools print a status. */
static inline const char* axon_status_name(axon_status s) {
  switch (s) {
    case AXON_OK: return "AXON_OK";
    case AXON_INVALID_ARGUMENT: return "AXON_INVALID_ARGUMENT";
    case AXON_OUT_OF_MEMORY: return "AXON_OUT_OF_MEMORY";
    case AXON_UNIMPLEMENTED: return "AXON_UNIMPLEMENTED";
    case AXON_UNAVAILABLE: return "AXON_UNAVAILABLE";
    case AXON_INTERNAL: return "AXON_INTERNAL";
    case AXON_DEADLINE_EXCEEDED: return "AXON_DEADLINE_EXCEEDED";
  }
  return "an unknown status";
}

#define AXON_ERROR_MESSAGE_CAPACITY 1024

/* Filled by the callee when it returns a status other than AXON_OK. */
typedef struct axon_error {
  size_t struct_size;
  char message[AXON_ERROR_MESSAGE_CAPACITY]; /* NUL-terminated */
} axon_error;

/* ------------------------------------------------------------------ host */

typedef enum axon_log_level {
  AXON_LOG_DEBUG = 0,
  AXON_LOG_INFO = 1,
  AXON_LOG_WARNING = 2,
  AXON_LOG_ERROR = 3
} axon_log_level;

/* What the host offers a plugin. Valid for the life of the process. */
typedef struct axon_host_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  void* host_ctx;
  /* Logs one line through the host's logger (respects AXON_LOG_LEVEL). */
  void (*log)(void* host_ctx, axon_log_level level, const char* plugin_name, const char* message);
  /* Returns the value of a configuration key, or NULL when unset. Keys are the
   * long flag names without dashes: "cpu-devices", "threads",
   * "gpu-memory-growth", "gpu-memory-limit", "allow-tf32", ... The returned
   * string stays valid for the life of the process. */
  const char* (*get_config)(void* host_ctx, const char* key);
} axon_host_api;

/* ------------------------------------------------------------------ tensors */

typedef enum axon_dtype {
  AXON_FLOAT32 = 0,
  AXON_INT32 = 1,
  AXON_UINT8 = 2,
  AXON_INT64 = 3
} axon_dtype;

#define AXON_MAX_RANK 8

/* A view of device memory. Layout is dense row-major; images are NHWC,
 * convolution filters HWIO (TensorFlow's layouts). */
typedef struct axon_tensor {
  void* data; /* device pointer from this device's allocate(), or NULL if numel == 0 */
  axon_dtype dtype;
  int32_t rank;
  int64_t dims[AXON_MAX_RANK];
} axon_tensor;

/* ------------------------------------------------------------------ op attributes
 * Each op with attributes takes one of these structs through
 * axon_kernel_call.attrs; the kernel checks struct_size before reading. */

typedef enum axon_padding { AXON_PADDING_VALID = 0, AXON_PADDING_SAME = 1 } axon_padding;

/* Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter. */
typedef struct axon_conv2d_attrs {
  size_t struct_size;
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  axon_padding padding;
} axon_conv2d_attrs;

/* MaxPool, MaxPoolGrad. */
typedef struct axon_pool_attrs {
  size_t struct_size;
  int32_t window_h, window_w;
  int32_t stride_h, stride_w;
  axon_padding padding;
} axon_pool_attrs;

/* MatMul. */
typedef struct axon_matmul_attrs {
  size_t struct_size;
  int32_t transpose_a, transpose_b;
} axon_matmul_attrs;

/* ApplyAdam (Keras form: epsilon is added to sqrt(v_hat) after bias correction
 * folded into the learning rate). `step` is 1 for the first update. */
typedef struct axon_adam_attrs {
  size_t struct_size;
  float learning_rate;
  float beta_1, beta_2;
  float epsilon;
  int64_t step;
} axon_adam_attrs;

/* Fill. */
typedef struct axon_fill_attrs {
  size_t struct_size;
  float value;
} axon_fill_attrs;

/* Scale (y = alpha * x, in place allowed). */
typedef struct axon_scale_attrs {
  size_t struct_size;
  float alpha;
} axon_scale_attrs;

/* _FusedConv2D (ABI 1.1): y = activation(Conv2D(x, filter) + bias). */
typedef struct axon_fused_conv2d_attrs {
  size_t struct_size;
  axon_conv2d_attrs conv;
  int32_t activation; /* 0 none, 1 relu */
} axon_fused_conv2d_attrs;

/* _FusedMatMul (ABI 1.1): c = activation(MatMul(a, b) + bias). */
typedef struct axon_fused_matmul_attrs {
  size_t struct_size;
  axon_matmul_attrs matmul;
  int32_t activation; /* 0 none, 1 relu */
} axon_fused_matmul_attrs;

/* _FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad (ABI 1.2): a convolution layer
 * and the max pooling after it. pool.window_h * pool.window_w must be <= 255. */
typedef struct axon_fused_conv2d_max_pool_attrs {
  size_t struct_size;
  axon_conv2d_attrs conv;
  int32_t activation; /* 0 none, 1 relu */
  axon_pool_attrs pool;
} axon_fused_conv2d_max_pool_attrs;

/* The argmax of _FusedConv2DMaxPool: the tap of the pool window (row-major,
 * counted from the window's unclipped top-left corner) holding the window's
 * first maximum, or this value where no gradient flows back (activation relu
 * and the maximum <= 0). */
#define AXON_ARGMAX_NONE 255

#define AXON_ACTIVATION_NONE 0
#define AXON_ACTIVATION_RELU 1

/* ------------------------------------------------------------------ kernels
 * The op set, by TensorFlow name, is described once, in axon/op_table.hpp:
 * each op's inputs and outputs with their dtypes, its attribute struct, the
 * inputs it updates in place and the ABI minor that added it; its shape rules
 * are in axon/op_validate.hpp, and docs/ops.md lists them. Shapes: images
 * NHWC, filters HWIO. Fused ops (names starting with '_') are optional: a
 * host uses them only where the device has a kernel, else the ops they
 * decompose into, and their results equal the composition within rounding.
 *
 * A device "supports" an op exactly when get_kernel returns a function for it.
 * Kernels are enqueued on the device's stream and may return before the work
 * is done; errors that surface later are reported by synchronize() (and by a
 * copy that waits on the stream). */

typedef struct axon_kernel_call {
  size_t struct_size;
  const char* op;
  int32_t num_inputs;
  const axon_tensor* inputs;
  int32_t num_outputs;
  axon_tensor* outputs;
  const void* attrs; /* one of the *_attrs structs above, or NULL */
} axon_kernel_call;

typedef axon_status (*axon_kernel_fn)(void* device_ctx, const axon_kernel_call* call, axon_error* err);

/* ------------------------------------------------------------------ devices */

typedef enum axon_memory_mode {
  AXON_MEMORY_RESERVE = 0, /* take most of the free memory up front (TensorFlow's default) */
  AXON_MEMORY_GROWTH = 1,  /* grow on demand */
  AXON_MEMORY_LIMIT = 2    /* grow on demand, never above limit_bytes */
} axon_memory_mode;

#define AXON_ALLOCATION_ALIGNMENT 64

/* Static facts about one physical device. Filled by the plugin. */
typedef struct axon_device_props {
  size_t struct_size;
  char name[128];             /* "NVIDIA H200", "Intel Xeon (2 threads)" */
  int32_t physical_id;        /* the plugin's own index, before host filtering */
  uint64_t memory_total;      /* bytes, 0 if unknown */
  uint64_t memory_free;       /* bytes, 0 if unknown */
  int32_t compute_major;      /* compute capability, 0 when not applicable */
  int32_t compute_minor;
  char pci_bus_id[32];        /* "0000:3b:00.0" or "" */
  char uuid[64];              /* "GPU-..." or "" */
  int32_t threads;            /* host threads the device uses, 0 if n/a */
  char description[256];      /* free-form "key=value, ..." extras */
} axon_device_props;

/* A device the plugin found but will not offer, and why. */
typedef struct axon_excluded_device {
  size_t struct_size;
  char name[128];
  int32_t physical_id;
  char reason[512];
} axon_excluded_device;

/* Host -> plugin when a device is opened. */
typedef struct axon_device_config {
  size_t struct_size;
  int32_t logical_index;     /* the N in /device:TYPE:N */
  axon_memory_mode memory_mode;
  uint64_t memory_limit_bytes; /* for AXON_MEMORY_LIMIT */
  int32_t threads;           /* 0 = plugin decides */
} axon_device_config;

typedef struct axon_memory_info {
  size_t struct_size;
  uint64_t in_use;      /* bytes handed out and not yet freed */
  uint64_t peak_in_use;
  uint64_t reserved;    /* bytes held from the system (>= in_use) */
  uint64_t limit;       /* 0 = none */
  uint64_t total;       /* device capacity, 0 if unknown */
  uint64_t largest_free_block;
} axon_memory_info;

/* One opened device. All functions take device_ctx. */
typedef struct axon_device_api {
  size_t struct_size;
  void* device_ctx;

  /* memory (required). allocate returns memory aligned to at least
   * AXON_ALLOCATION_ALIGNMENT bytes (axon makes views into one allocation at
   * multiples of 256 bytes and relies on that start). The host never asks for
   * 0 bytes; a plugin may answer them as it likes, without crashing. */
  axon_status (*allocate)(void* device_ctx, size_t bytes, void** ptr, axon_error* err);
  void (*deallocate)(void* device_ctx, void* ptr);
  /* Copies are ordered with the device's stream. host_to_device returns once
   * `src` may be reused; device_to_host returns once `dst` holds the data. */
  axon_status (*copy_host_to_device)(void* device_ctx, void* dst, const void* src, size_t bytes, axon_error* err);
  axon_status (*copy_device_to_host)(void* device_ctx, void* dst, const void* src, size_t bytes, axon_error* err);
  axon_status (*copy_device_to_device)(void* device_ctx, void* dst, const void* src, size_t bytes, axon_error* err);
  /* Waits for all queued work; reports errors of asynchronous work. */
  axon_status (*synchronize)(void* device_ctx, axon_error* err);

  /* kernels (required): NULL when the device has no kernel for (op, dtype).
   * dtype is the dtype of the first input, or of the first output when the op
   * has no inputs. */
  axon_kernel_fn (*get_kernel)(void* device_ctx, const char* op, axon_dtype dtype);
  /* Names of all ops with a kernel, NULL-terminated; for listings. */
  const char* const* (*list_ops)(void* device_ctx);

  /* optional */
  axon_status (*memory_info)(void* device_ctx, axon_memory_info* info, axon_error* err);
  void (*close)(void* device_ctx);
} axon_device_api;

/* ------------------------------------------------------------------ collectives */

typedef enum axon_reduce_op { AXON_REDUCE_SUM = 0, AXON_REDUCE_MEAN = 1 } axon_reduce_op;

#define AXON_COMM_ID_CAPACITY 256

typedef struct axon_collective_api {
  size_t struct_size;
  /* In-process: all-reduce buffers[i] (on the device whose ctx is
   * device_ctxs[i]) in place across n devices of this plugin. */
  axon_status (*all_reduce)(void* plugin_ctx, int32_t n, void* const* device_ctxs, void* const* buffers, int64_t count,
                            axon_dtype dtype, axon_reduce_op op, axon_error* err);
  /* Cross-process: rank 0 calls comm_get_id and ships the bytes to the other
   * ranks out of band (MPI); each rank then calls comm_create. */
  axon_status (*comm_get_id)(void* plugin_ctx, void* id, size_t* id_size, axon_error* err);
  axon_status (*comm_create)(void* device_ctx, const void* id, size_t id_size, int32_t rank, int32_t world_size,
                             void** comm, axon_error* err);
  /* Fails with AXON_DEADLINE_EXCEEDED after timeout_ms (0 = none). */
  axon_status (*comm_all_reduce)(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op,
                                 int32_t timeout_ms, axon_error* err);
  void (*comm_destroy)(void* comm);
} axon_collective_api;

/* ------------------------------------------------------------------ plugin */

/* Filled by the plugin in its entry point. */
typedef struct axon_plugin_api {
  size_t struct_size;
  uint32_t abi_major; /* must be AXON_ABI_MAJOR */
  uint32_t abi_minor;
  const char* name;        /* "cpu", "cuda", "reference": also the plugin's log tag */
  const char* version;     /* the plugin's own version string */
  const char* device_type; /* "CPU", "GPU", "REF": the TYPE in /device:TYPE:N */
  int32_t priority;        /* placement preference: higher wins (GPU 200, CPU 100) */
  void* plugin_ctx;

  /* required. Never fails: no driver / no hardware means 0. */
  int32_t (*device_count)(void* plugin_ctx);
  /* required */
  axon_status (*get_device_props)(void* plugin_ctx, int32_t physical_id, axon_device_props* props, axon_error* err);
  /* required: opens a device; fills `out`. Called at most once per device. */
  axon_status (*open_device)(void* plugin_ctx, int32_t physical_id, const axon_device_config* config,
                             axon_device_api* out, axon_error* err);

  /* optional: why device_count() is 0 ("no CUDA driver: ..."), or NULL. */
  const char* (*unavailable_reason)(void* plugin_ctx);
  /* optional: devices found but not offered (too old, filtered by
   * CUDA_VISIBLE_DEVICES, kernel library missing). */
  int32_t (*excluded_count)(void* plugin_ctx);
  axon_status (*get_excluded)(void* plugin_ctx, int32_t index, axon_excluded_device* out, axon_error* err);
  /* optional: collectives among this plugin's devices / across processes. */
  const axon_collective_api* collectives;
} axon_plugin_api;

/* The entry point. The host zero-fills `out` (setting out->struct_size to the
 * size it knows) before the call; the plugin sets every field it knows,
 * including struct_size. Returns AXON_OK or an error with a message. */
typedef axon_status (*axon_plugin_init_fn)(const axon_host_api* host, axon_plugin_api* out, axon_error* err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AXON_PLUGIN_ABI_H */
