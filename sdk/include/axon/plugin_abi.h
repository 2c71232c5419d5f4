/* axon plugin ABI: the only contract between the axon runtime (the host) and a
 * device backend (a plugin). Plain C so that any compiler, any C++ standard
 * library and any language with a C FFI can implement a backend.
 *
 * Rules (see docs/plugin-guide.md):
 *  - Every struct begins with `size_t struct_size`, set by whoever fills the
 *    struct to AXON_STRUCT_SIZE(type, last_field_it_knows). A reader treats any
 *    field that lies beyond struct_size as absent (zero / NULL). Fields are only
 *    ever appended; that is how minor versions stay compatible. The one
 *    exception is axon_tensor, passed in arrays: frozen for all of ABI 2, its
 *    reserved fields zero (a later minor may give one a meaning in which zero
 *    means what it means today).
 *  - Each side owns the tables it fills: the plugin returns pointers to its
 *    own function tables (one for the plugin, static; one per opened device,
 *    valid until close). A struct the caller hands over to be filled (device
 *    props, memory info, an excluded device) carries the caller's
 *    struct_size: the callee writes no more than that, and sets struct_size
 *    to what it wrote. So neither side writes past memory the other sized.
 *  - A different AXON_ABI_MAJOR is a hard reject, in both directions. (The
 *    host still loads ABI 1.x plugins, whose entry point has another name,
 *    through a translation layer: docs/plugin-guide.md.)
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

#define AXON_ABI_MAJOR 2
#define AXON_ABI_MINOR 3

/* Size of a struct up to and including `field`: what struct_size is set to. */
#define AXON_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

/* ABI 2's entry point (ABI 1's was "axon_plugin_init": the signature changed,
 * so the name did, and a host tells the two apart before calling either). */
#define AXON_PLUGIN_ENTRY_SYMBOL "axon_plugin_get_api"

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
 * convolution filters HWIO (TensorFlow's layouts). Frozen (no struct_size:
 * calls pass arrays of it): 112 bytes in every ABI 2.x. */
typedef struct axon_tensor {
  void* data; /* device pointer from this device's allocate(), or NULL if numel == 0 */
  axon_dtype dtype;
  int32_t rank;
  int64_t dims[AXON_MAX_RANK];
  int64_t reserved[4]; /* zero; a plugin ignores them */
} axon_tensor;

/* ------------------------------------------------------------------ op attributes
 * Each op with attributes takes one of these structs through
 * axon_kernel_call.attrs; the kernel checks struct_size before reading. */

typedef enum axon_padding { AXON_PADDING_VALID = 0, AXON_PADDING_SAME = 1 } axon_padding;

/* Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter, and
 * _Conv2DBackpropInputAccumulate (ABI 2.2): dx += Conv2DBackpropInput(dy,
 * filter) with dx, its first input, updated in place. */
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
 * folded into the learning rate). `step` is 1 for the first update.
 * ApplyAdamWithAmsgrad (ABI 1.6), Keras 3's Adam with amsgrad in float32:
 * alpha = lr * sqrt(1 - beta_2^step) / (1 - beta_1^step);
 * m += (grad - m) * (1 - beta_1); v += (grad^2 - v) * (1 - beta_2);
 * vhat = max(vhat, v); var -= m * alpha / (sqrt(vhat) + epsilon). */
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

/* LeakyRelu, LeakyReluGrad (ABI 1.4): y = x where x > 0, else alpha * x. */
typedef struct axon_leaky_relu_attrs {
  size_t struct_size;
  float alpha;
} axon_leaky_relu_attrs;

/* ClippedRelu, ClippedReluGrad (ABI 1.4): Keras' relu with its arguments,
 * y = min(x, max_value) where x > threshold, else negative_slope * (x - threshold)
 * (0 where x <= threshold when negative_slope is 0). max_value: INFINITY for none. */
typedef struct axon_clipped_relu_attrs {
  size_t struct_size;
  float negative_slope;
  float max_value;
  float threshold;
} axon_clipped_relu_attrs;

/* Gelu, GeluGrad (ABI 1.4): approximate 0 is the erf form, 1 the tanh form. */
typedef struct axon_gelu_attrs {
  size_t struct_size;
  int32_t approximate;
} axon_gelu_attrs;

/* ConcatV2 (ABI 1.4): the inputs joined along `axis` (0 <= axis < rank). */
typedef struct axon_concat_attrs {
  size_t struct_size;
  int32_t axis;
} axon_concat_attrs;

/* Slice and Pad (ABI 1.4): where the smaller tensor sits in the larger one.
 * Slice: y = x[begin : begin + shape(y)]; Pad: y = 0, then
 * y[begin : begin + shape(x)] = x. Entries past the rank are ignored. */
typedef struct axon_slice_attrs {
  size_t struct_size;
  int64_t begin[AXON_MAX_RANK];
} axon_slice_attrs;

/* FusedBatchNormV3, FusedBatchNormGradV3 (ABI 1.4), TensorFlow's semantics
 * over the last dimension of x (rank >= 2). */
typedef struct axon_batch_norm_attrs {
  size_t struct_size;
  float epsilon;
  float exponential_avg_factor; /* forward, training: 1 gives the batch's statistics */
  int32_t is_training;
} axon_batch_norm_attrs;

/* _FusedBatchNormEx, _FusedBatchNormGradEx (ABI 1.5): FusedBatchNormV3 and
 * its gradient with an activation applied to y (TensorFlow's ops of these
 * names, without side input). _FusedBatchNormAddEx, _FusedBatchNormAddGradEx
 * (ABI 2.1): the same with a side input of x's shape added before the
 * activation, y = activation(FusedBatchNormV3(x) + side_input), and its
 * gradient: side_input_backprop = dy masked where y is not positive (relu;
 * dy itself without an activation), dx, scale_backprop and offset_backprop
 * FusedBatchNormGradV3's of it. */
typedef struct axon_fused_batch_norm_attrs {
  size_t struct_size;
  axon_batch_norm_attrs batch_norm;
  int32_t activation; /* 0 none, 1 relu */
} axon_fused_batch_norm_attrs;

/* MovingAverage (ABI 1.4): var = momentum * var + weight * value. */
typedef struct axon_moving_average_attrs {
  size_t struct_size;
  float momentum;
  float weight;
} axon_moving_average_attrs;

/* The optimizers of ABI 1.6: Keras 3's update rules, one fused pass over a
 * flat parameter buffer. learning_rate is the step's (a schedule may change
 * it every step). Keras' weight_decay is the separate op ApplyWeightDecay,
 * applied before the update, and its gradient clipping ClipGradients. */

/* ApplySGD: momentum 0: var -= lr * grad (velocity untouched); else
 * velocity = momentum * velocity - lr * grad, then var += velocity, or with
 * nesterov var += momentum * velocity - lr * grad. */
typedef struct axon_sgd_attrs {
  size_t struct_size;
  float learning_rate;
  float momentum;
  int32_t nesterov; /* 0 or 1 */
} axon_sgd_attrs;

/* ApplyRMSprop: velocity = rho * velocity + (1 - rho) * grad^2; centered:
 * average_grad = rho * average_grad + (1 - rho) * grad and the denominator
 * sqrt(velocity - average_grad^2 + epsilon), else sqrt(velocity + epsilon);
 * increment = lr * grad / denominator; momentum > 0: momentum_buf =
 * momentum * momentum_buf + increment, var -= momentum_buf; else var -= increment.
 * Unused state (momentum_buf when momentum is 0, average_grad when not
 * centered) is left untouched. Keras rounds 1 - rho from the double the user
 * gave (rho's shortest decimal form), as 1 - beta in ApplyAdamWithAmsgrad. */
typedef struct axon_rmsprop_attrs {
  size_t struct_size;
  float learning_rate;
  float rho;
  float momentum;
  float epsilon;
  int32_t centered; /* 0 or 1 */
} axon_rmsprop_attrs;

/* ApplyAdagrad: accumulator += grad^2; var -= lr * grad / sqrt(accumulator + epsilon). */
typedef struct axon_adagrad_attrs {
  size_t struct_size;
  float learning_rate;
  float epsilon;
} axon_adagrad_attrs;

/* ApplyNadam (Keras' form): with u_t = beta_1 * (1 - 0.5 * 0.96^step),
 * u_t1 = beta_1 * (1 - 0.5 * 0.96^(step + 1)) and u_product the product of
 * u_1 ... u_step (Keras' momentum cache, kept by the caller in float32):
 * m += (grad - m) * (1 - beta_1); v += (grad^2 - v) * (1 - beta_2);
 * m_hat = u_t1 * m / (1 - u_product * u_t1) + (1 - u_t) * grad / (1 - u_product);
 * var -= m_hat * lr / (sqrt(v / (1 - beta_2^step)) + epsilon). */
typedef struct axon_nadam_attrs {
  size_t struct_size;
  float learning_rate;
  float beta_1, beta_2;
  float epsilon;
  int64_t step;
  float u_product;
} axon_nadam_attrs;

/* ApplyWeightDecay: var -= var * weight_decay * learning_rate (Keras' weight_decay). */
typedef struct axon_weight_decay_attrs {
  size_t struct_size;
  float learning_rate;
  float weight_decay;
} axon_weight_decay_attrs;

/* ClipGradients: Keras' clipping of the gradients of the variables laid end
 * to end in grad; segment_ends[i] is where variable i ends (the last is
 * grad's size). */
typedef enum axon_clip_mode {
  AXON_CLIP_VALUE = 0,      /* grad = min(max(grad, -clip), clip) */
  AXON_CLIP_NORM = 1,       /* each variable: grad * clip / max(norm(grad), clip) */
  AXON_CLIP_GLOBAL_NORM = 2 /* all: grad * (clip * min(1 / global_norm, 1 / clip)) */
} axon_clip_mode;

typedef struct axon_clip_attrs {
  size_t struct_size;
  axon_clip_mode mode;
  float clip; /* > 0 */
} axon_clip_attrs;

/* The losses of ABI 1.7: Keras 3's losses on predictions [N, C] float32 and
 * labels [N] int32 (class indices), each writing the per-sample loss [N] and
 * the gradient of each sample's loss with respect to its predictions [N, C]
 * (the caller scales by 1 / batch). Keras' epsilon is 1e-7.
 *
 * CategoricalCrossentropy: target t = onehot(label, C) * (1 - s) + s / C
 * (s = label_smoothing). from_logits: loss = sum_j t_j (logsumexp(x) - x_j),
 * gradient softmax(x) - t. Else the predictions are probabilities:
 * p = x / sum(x), q = clip(p, eps, 1 - eps), loss = -sum_j t_j log q_j, the
 * gradient through the clip (zero outside [eps, 1 - eps]) and the division.
 *
 * BinaryCrossentropy: C = 1, label 0 or 1, t = label * (1 - s) + 0.5 * s.
 * from_logits: loss = max(x, 0) - x t + log(1 + exp(-|x|)), gradient
 * sigmoid(x) - t. Else q = clip(x, eps, 1 - eps),
 * loss = -(t log q + (1 - t) log(1 - q)), gradient through the clip. */
typedef struct axon_crossentropy_attrs {
  size_t struct_size;
  int32_t from_logits;   /* 0 or 1 */
  float label_smoothing; /* in [0, 1] */
} axon_crossentropy_attrs;

/* RegressionLoss: t = onehot(label, C) when C > 1, the label as a float when
 * C = 1; e = x - t; the loss is the mean over C of e^2 (mean squared error),
 * |e| (mean absolute error) or Huber's 0.5 e^2 where |e| <= delta, else
 * delta |e| - 0.5 delta^2. */
typedef enum axon_regression_loss {
  AXON_LOSS_MEAN_SQUARED_ERROR = 0,
  AXON_LOSS_MEAN_ABSOLUTE_ERROR = 1,
  AXON_LOSS_HUBER = 2
} axon_regression_loss;

typedef struct axon_regression_loss_attrs {
  size_t struct_size;
  axon_regression_loss loss;
  float delta; /* Huber's, > 0 */
} axon_regression_loss_attrs;

/* BinaryAccuracy: predictions [N, 1], labels [N] int32; correct[i] = 1 where
 * (x_i > threshold) equals the label (as Keras' binary_accuracy compares
 * against the float label), else 0. */
typedef struct axon_binary_accuracy_attrs {
  size_t struct_size;
  float threshold;
} axon_binary_accuracy_attrs;

/* InTopKV2 (ABI 1.8): predictions [N, C], targets [N] int32; correct[i] = 1
 * where fewer than k predictions of row i are greater than the target's (a
 * tie at the k-th place counts), else 0; a NaN or infinity anywhere in the
 * row, or a target outside [0, C), gives 0 (TensorFlow's in_top_k). */
typedef struct axon_in_top_k_attrs {
  size_t struct_size;
  int32_t k; /* >= 1 */
} axon_in_top_k_attrs;
/* The random ops of ABI 1.9: TensorFlow's StatelessRandomNormalV2 and
 * StatelessRandomUniformV2 (algorithm Philox). Element i of y (row-major) is
 * word i % 4 of the Philox-4x32-10 block at counter + i / 4 (a 128-bit add,
 * word 0 lowest) under key: it depends on key, counter and i alone, never on
 * threads or tiling. Uniform: the word's low 23 bits as the mantissa of a
 * float in [1, 2), minus 1 (TensorFlow's Uint32ToFloat). Normal: TensorFlow's
 * BoxMullerFloat on words (0, 1) and (2, 3) of the block:
 * u1 = max(uniform(w0), 1e-7f), v = float(2 pi uniform(w1)) (in double, then
 * rounded), r = sqrtf(-2 logf(u1)), values r cosf(v) and r sinf(v). Then
 * y = value * scale + offset, rounded after each operation (as
 * tf.random.stateless_normal's rnd * stddev + mean and stateless_uniform's
 * rnd * (maxval - minval) + minval). key and counter are what TensorFlow
 * derives from a seed pair (sdk/include/axon/philox.hpp). */
typedef struct axon_random_attrs {
  size_t struct_size;
  uint32_t key[2];
  uint32_t counter[4];
  float scale;  /* finite */
  float offset; /* finite */
} axon_random_attrs;

/* The reductions of ABI 1.9: TensorFlow's Sum (here ReduceSum: the name Sum
 * is ABI 1.0's full reduction), Mean and Max over a set of axes of x. Each
 * axis is in [-rank, rank) (negative counts from the end), none twice; none
 * at all: y = x. keep_dims 1: y has x's rank with 1 on the reduced axes, else
 * the reduced axes are dropped. Over zero elements: sum 0, mean NaN, max
 * -inf (TensorFlow's answers); Max propagates NaN. */
typedef struct axon_reduce_attrs {
  size_t struct_size;
  int32_t num_axes; /* 0 to AXON_MAX_RANK */
  int32_t axes[AXON_MAX_RANK];
  int32_t keep_dims; /* 0 or 1 */
} axon_reduce_attrs;

/* LayerNorm, LayerNormGrad (ABI 2.3): Keras' LayerNormalization over the last
 * dimension of x [R, K] (a caller views the normalised axes as one).
 * LayerNorm: mean = sum(x) / K and variance = sum((x - mean)^2) / K per row,
 * inv_std = 1 / sqrt(variance + epsilon), y = (x - mean) * inv_std * scale +
 * offset; mean and inv_std [R] are outputs for the gradient. LayerNormGrad:
 * with xhat = (x - mean) * inv_std and g = dy * scale, dx = inv_std * (g -
 * mean(g) - xhat * mean(g * xhat)) per row, scale_backprop = sum over rows of
 * dy * xhat, offset_backprop = sum over rows of dy. */
typedef struct axon_layer_norm_attrs {
  size_t struct_size;
  float epsilon;
} axon_layer_norm_attrs;

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
 * A device has an op when get_kernel returns a function for it, and runs a
 * call of it unless it declines that call: up front, through the
 * device's supports() (shapes and attributes it has no kernel for), or, when
 * it finds out only at launch (no library algorithm for the shape), by
 * returning AXON_UNIMPLEMENTED from the kernel with its outputs untouched.
 * Either way the host places the call as it would an op without a kernel
 * (soft placement: on the CPU, logged; strict placement: an error).
 * Kernels are enqueued on the call's stream (the device's own by default) and
 * may return before the work is done; errors that surface later are reported
 * by synchronize() (and by a copy or an event that waits for them). */

/* A point in a device's work (a CUDA event), and a queue of work on a
 * device (a CUDA stream): the plugin's own objects. On a device whose work is
 * done when each call returns, both may be tokens that stand for nothing.
 * Wherever a call takes an axon_stream, NULL means the device's own stream,
 * the one kernels run on unless a call names another, and the synchronous
 * copies run on. */
typedef struct axon_event_s* axon_event;
typedef struct axon_stream_s* axon_stream;

typedef struct axon_kernel_call {
  size_t struct_size;
  const char* op;
  int32_t num_inputs;
  const axon_tensor* inputs;
  int32_t num_outputs;
  axon_tensor* outputs;
  const void* attrs; /* one of the *_attrs structs above, or NULL */
  /* The stream to queue the call on; NULL: the device's own. The host names
   * one only on a device with streams (stream_create). */
  axon_stream stream;
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
  int32_t host_memory;        /* 1: allocate() returns host memory, which the host may read and write
                                 directly once the device's work on it is done (synchronize); 0: not */
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

/* One opened device, the plugin's own table (valid until close). All
 * functions take device_ctx. */
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
  /* Waits for all queued work, on every stream of the device; reports errors
   * of asynchronous work. */
  axon_status (*synchronize)(void* device_ctx, axon_error* err);

  /* kernels (required): NULL when the device has no kernel for (op, dtype).
   * dtype is the dtype of the first input, or of the first output when the op
   * has no inputs. */
  axon_kernel_fn (*get_kernel)(void* device_ctx, const char* op, axon_dtype dtype);
  /* Names of all ops with a kernel, NULL-terminated; for listings. */
  const char* const* (*list_ops)(void* device_ctx);

  /* optional */
  axon_status (*memory_info)(void* device_ctx, axon_memory_info* info, axon_error* err);
  /* Frees the device (and this table). */
  void (*close)(void* device_ctx);

  /* optional: 1 when the device runs this call (an op it has a kernel for,
   * with these shapes and attributes), 0 when it declines it. Asked before
   * each call; data pointers may be NULL or another device's, so only
   * shapes, dtypes and attributes may be read. NULL: every call. */
  int32_t (*supports)(void* device_ctx, const axon_kernel_call* call);

  /* optional, all or none (the host reads event_create): streams, events and
   * asynchronous copies. */
  axon_status (*stream_create)(void* device_ctx, axon_stream* stream, axon_error* err);
  /* Waits for the stream's work, then frees it. */
  void (*stream_destroy)(void* device_ctx, axon_stream stream);
  axon_status (*event_create)(void* device_ctx, axon_event* event, axon_error* err);
  void (*event_destroy)(void* device_ctx, axon_event event);
  /* Marks the point after the work queued on `stream` so far (again: a new
   * point replaces the old). */
  axon_status (*event_record)(void* device_ctx, axon_event event, axon_stream stream, axon_error* err);
  /* Work queued on `stream` from now on starts after the event's point (an
   * event of this device, or of another device of this plugin). */
  axon_status (*event_wait)(void* device_ctx, axon_event event, axon_stream stream, axon_error* err);
  /* *done = 1 when the work before the event's point has finished (0 before;
   * 1 for an event never recorded). The error of that work, if it failed,
   * comes back here and from event_synchronize, as from synchronize. */
  axon_status (*event_query)(void* device_ctx, axon_event event, int32_t* done, axon_error* err);
  /* Waits until the work before the event's point has finished. */
  axon_status (*event_synchronize)(void* device_ctx, axon_event event, axon_error* err);
  /* Copies queued on `stream` that may return before they are done: a host
   * `src` must stay as it is, and a host `dst` holds the data, once an event
   * recorded after the copy is done. device_to_device: `dst` on this device,
   * `src` on this device or on another device of this plugin (a peer copy
   * where the hardware has one, else through the host). */
  axon_status (*copy_host_to_device_async)(void* device_ctx, void* dst, const void* src, size_t bytes,
                                           axon_stream stream, axon_error* err);
  axon_status (*copy_device_to_host_async)(void* device_ctx, void* dst, const void* src, size_t bytes,
                                           axon_stream stream, axon_error* err);
  axon_status (*copy_device_to_device_async)(void* device_ctx, void* dst, const void* src, size_t bytes,
                                             axon_stream stream, axon_error* err);
} axon_device_api;

/* ------------------------------------------------------------------ collectives */

typedef enum axon_reduce_op { AXON_REDUCE_SUM = 0, AXON_REDUCE_MEAN = 1 } axon_reduce_op;

#define AXON_COMM_ID_CAPACITY 256

typedef struct axon_collective_api {
  size_t struct_size;
  /* In-process: all-reduce buffers[i] (on the device whose ctx is
   * device_ctxs[i]) in place across n devices of this plugin. Returns when
   * the result is in the buffers. */
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

  /* optional (devices with events): the same all-reduces queued instead of
   * waited for. Each device's share starts once its `wait_for` event (NULL:
   * nothing) is reached, runs on a stream of the plugin's choosing (a
   * communication stream beside the device's own), and `done` (an event of
   * that device) is recorded after it; the call returns at once. An error or
   * a timeout (timeout_ms from the call, 0 = none) that surfaces later comes
   * back from event_query / event_synchronize on `done` and from synchronize. */
  axon_status (*all_reduce_async)(void* plugin_ctx, int32_t n, void* const* device_ctxs, void* const* buffers,
                                  int64_t count, axon_dtype dtype, axon_reduce_op op, const axon_event* wait_for,
                                  const axon_event* done, axon_error* err);
  axon_status (*comm_all_reduce_async)(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op,
                                       axon_event wait_for, axon_event done, int32_t timeout_ms, axon_error* err);
} axon_collective_api;

/* ------------------------------------------------------------------ plugin */

/* The plugin's own table, returned by its entry point; static (it lives as
 * long as the process). */
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
  /* required: opens a device and returns its table (the plugin's own, valid
   * until its close). Called at most once per device. */
  axon_status (*open_device)(void* plugin_ctx, int32_t physical_id, const axon_device_config* config,
                             const axon_device_api** out, axon_error* err);

  /* optional: why device_count() is 0 ("no CUDA driver: ..."), or NULL. */
  const char* (*unavailable_reason)(void* plugin_ctx);
  /* optional: devices found but not offered (too old, filtered by
   * CUDA_VISIBLE_DEVICES, kernel library missing). */
  int32_t (*excluded_count)(void* plugin_ctx);
  axon_status (*get_excluded)(void* plugin_ctx, int32_t index, axon_excluded_device* out, axon_error* err);
  /* optional: collectives among this plugin's devices / across processes. */
  const axon_collective_api* collectives;

  /* optional: the plugin's extension `name` at `version`, or NULL when it
   * has none (or not that version). What a plugin offers beyond this table
   * goes there instead of into a new minor: a static struct that
   * starts with struct_size and lives as long as the process, its layout
   * frozen for that version (a new field is a new version). */
  const void* (*get_extension)(void* plugin_ctx, const char* name, uint32_t version);
} axon_plugin_api;

/* ------------------------------------------------------------------ extensions */

/* "axon.timing", version 1: the device's own clock, for benchmarks. Calls
 * enqueue(arg) `iters` times between two marks on the device's stream
 * (events on a GPU), waits for the second, and returns the time between
 * them in milliseconds: the device's time for the work, without the host's
 * launch overhead where the device queues work. */
#define AXON_EXTENSION_TIMING "axon.timing"

typedef struct axon_timing_extension {
  size_t struct_size;
  axon_status (*time_on_stream)(void* device_ctx, void (*enqueue)(void* arg), void* arg, int32_t iters,
                                float* device_ms, axon_error* err);
} axon_timing_extension;

/* The entry point, AXON_PLUGIN_ENTRY_SYMBOL: sets *api to the plugin's own
 * table (abi_major AXON_ABI_MAJOR, struct_size what the plugin knows) and
 * returns AXON_OK, or returns an error with a message. The host calls it once. */
typedef axon_status (*axon_plugin_get_api_fn)(const axon_host_api* host, const axon_plugin_api** api, axon_error* err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AXON_PLUGIN_ABI_H */
