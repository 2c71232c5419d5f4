// Elementwise arithmetic of two tensors, MaximumGrad, MovingAverage, and the
// ops that move data between tensors of different shapes (ConcatV2, Slice,
// Pad), on axon's own kernels (elementwise.cu) and the copy engine.
#include "cuda_device.hpp"
#include "elementwise.hpp"

namespace axon::cuda {

namespace {

template <Binary B>
void binary(CudaDevice& d, const sdk::KernelCall& c) {
  auto a = c.input(0), b = c.input(1), y = c.output(0);
  launch::binary(d.stream(), B, a.data<float>(), b.data<float>(), y.data<float>(), y.numel());
}

void maximum_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), a = c.input(1), b = c.input(2), da = c.output(0), db = c.output(1);
  launch::maximum_grad(d.stream(), dy.data<float>(), a.data<float>(), b.data<float>(), da.data<float>(),
                       db.data<float>(), dy.numel());
}

void moving_average(CudaDevice& d, const sdk::KernelCall& c) {
  auto var = c.input(0), value = c.input(1);
  const auto& a = c.attrs<axon_moving_average_attrs>();
  launch::moving_average(d.stream(), var.data<float>(), value.data<float>(), var.numel(), a.momentum, a.weight);
}

// Each input is a block of rows (the dimensions before the axis) of
// axis * inner values, copied into its columns of y's rows: one 2-D copy.
void concat(CudaDevice& d, const sdk::KernelCall& c) {
  auto y = c.output(0);
  const int axis = c.attrs<axon_concat_attrs>().axis;
  int64_t rows = 1, inner = 1;
  for (int k = 0; k < axis; ++k) rows *= y.dim(k);
  for (int k = axis + 1; k < y.rank(); ++k) inner *= y.dim(k);
  const size_t y_row = static_cast<size_t>(y.dim(axis) * inner) * sizeof(float);
  size_t at = 0;  // bytes into y's row
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto x = c.input(i);
    const size_t x_row = static_cast<size_t>(x.dim(axis) * inner) * sizeof(float);
    char* to = static_cast<char*>(y.raw()) + at;
    if (x_row > 0 && rows == 1)  // one row (axis 0): a plain copy, whatever its size
      CUDA_CHECK(cudaMemcpyAsync(to, x.raw(), x_row, cudaMemcpyDeviceToDevice, d.stream()));
    else if (x_row > 0 && rows > 1)
      CUDA_CHECK(cudaMemcpy2DAsync(to, y_row, x.raw(), x_row, x_row, static_cast<size_t>(rows),
                                   cudaMemcpyDeviceToDevice, d.stream()));
    at += x_row;
  }
}

// Slice: y = x[begin : begin + shape(y)]; Pad: y = zeros with x at begin.
Window window_of(const sdk::TensorRef& src, const sdk::TensorRef& dst, const axon_slice_attrs& a, int sign) {
  Window w;
  w.rank = dst.rank();
  for (int k = 0; k < w.rank; ++k) {
    w.dst_dims[k] = dst.dim(k);
    w.src_dims[k] = src.dim(k);
    w.offset[k] = sign * a.begin[k];
  }
  return w;
}

void slice(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  launch::window(d.stream(), window_of(x, y, c.attrs<axon_slice_attrs>(), 1), x.data<float>(), y.data<float>());
}

void pad(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  launch::window(d.stream(), window_of(x, y, c.attrs<axon_slice_attrs>(), -1), x.data<float>(), y.data<float>());
}

}  // namespace

void register_tensor_kernels(sdk::KernelTable& t) {
  add<OpId::Sub, binary<Binary::Sub>>(t);
  add<OpId::Mul, binary<Binary::Mul>>(t);
  add<OpId::Maximum, binary<Binary::Maximum>>(t);
  add<OpId::MaximumGrad, maximum_grad>(t);
  add<OpId::MovingAverage, moving_average>(t);
  add<OpId::ConcatV2, concat>(t);
  add<OpId::Slice, slice>(t);
  add<OpId::Pad, pad>(t);
}

}  // namespace axon::cuda
