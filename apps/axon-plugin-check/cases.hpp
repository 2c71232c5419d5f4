// The numerical test cases of one (op, dtype), generated from the op table:
// each op's inputs, outputs and dtypes come from its row (axon/op_table.hpp),
// the attribute variants from its attribute kind (padding SAME and VALID,
// strides 1 and 2, dilation for convolutions, both transposes for MatMul,
// ...), the shapes are odd, batch 1 and empty ones (a zero dimension), and
// the values come from a fixed seed. Derived inputs (MaxPoolGrad's y, the
// argmax of _FusedConv2DMaxPoolGrad) are computed by the reference kernels.
#pragma once

#include <axon/any_attrs.hpp>
#include <axon/op_table.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace axon::plugin_check {

using Dims = std::vector<int64_t>;

// A tensor in host memory: dtype, shape and its bytes (dense, row-major).
struct HostTensor {
  axon_dtype dtype = AXON_FLOAT32;
  Dims dims;
  std::vector<unsigned char> bytes;

  HostTensor() = default;
  HostTensor(axon_dtype t, Dims d);  // zero-filled
  int64_t numel() const;
  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  // The C view of this tensor with `data` as its memory.
  axon_tensor view(void* data) const;
};

std::string dims_text(const Dims& d);  // "1x7x5x3", "scalar"

// How one result is judged against the reference (axon/tolerance.hpp).
enum class Rule {
  exact,     // equal
  sum,       // a sum of products: needs S, the op run on the inputs' magnitudes
  loss,      // SparseSoftmaxCrossEntropyWithLogits' loss
  dlogits,   // its gradient
  adam_var,  // ApplyAdam's var, m and v
  adam_m,
  adam_v,
  function,  // an activation, Softmax or their gradients: the bound of axon/function_bounds.hpp
  update,    // the ABI 1.6 optimizers' in-place results: |before| + 32 |change| + |grad| + grad^2
  keras_loss, // the ABI 1.7 losses' results: (log2 C + 2) (1 + the row's largest |result| and |prediction|)
  normal      // StatelessRandomNormalV2: within 2^-22 |want| (2 ulps: logf and sincosf may round the other way)
};

struct Case {
  const OpSchema* op = nullptr;
  axon_dtype key = AXON_FLOAT32;  // the kernel's dtype
  std::string label;              // "SAME stride 2 1x7x5x3 * 3x3x3x4"
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;  // dtype and shape; their contents are not used
  AnyAttrs attrs;  // the struct the op takes
  bool in_place = false;      // output 0 is input 0's buffer
  std::vector<bool> abs_inputs;  // inputs taken by magnitude to compute S
  std::vector<Rule> rules;       // one per result (the outputs, or the inputs updated in place)

  std::string name() const;  // "kernel[Conv2D float32] SAME stride 2 1x7x5x3 * 3x3x3x4"
  const void* attr_ptr() const { return attrs_ptr(attrs); }
  // The tensors the op writes: its outputs, or its first in_place_inputs inputs.
  int result_count() const;
  const char* result_name(int i) const;
};

// "kernel[Conv2D float32]"
std::string kernel_name(const OpSchema& op, axon_dtype key);

// The cases of `op` keyed by `key` (a dtype the table allows), always the
// same ones; the first is never empty.
std::vector<Case> make_cases(const OpSchema& op, axon_dtype key);

}  // namespace axon::plugin_check
