// Naive, obviously correct kernels of the layers ABI 1.4 added: average
// pooling, batch normalization and depthwise convolution, with their
// gradients; ABI 1.5's batch normalization with relu, and ABI 2.1's with a
// side input added before it. As in kernels.cpp, every call is checked
// against the op table first and sums are accumulated in double.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace ref {
namespace {

using namespace axon::sdk;
using axon::ConvGeometry;
using axon::PoolGeometry;

void store(const std::vector<double>& acc, float* out) {
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
}

// ------------------------------------------------------------------ average pooling

// The real (not padded) input rows [h0, h1) and columns [w0, w1) of the window
// of output pixel (oh, ow): TensorFlow averages over these taps only.
struct Window {
  int64_t h0, h1, w0, w1;
  int64_t taps() const { return (h1 - h0) * (w1 - w0); }
};

Window window(const PoolGeometry& p, int64_t oh, int64_t ow) {
  const int64_t h = oh * p.sh - p.pad_h, w = ow * p.sw - p.pad_w;
  return {std::max<int64_t>(h, 0), std::min(h + p.kh, p.h), std::max<int64_t>(w, 0), std::min(w + p.kw, p.w)};
}

void avg_pool(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        const Window win = window(p, oh, ow);
        for (int64_t ch = 0; ch < p.c; ++ch) {
          double s = 0.0;
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw) s += xp[((n * p.h + ih) * p.w + iw) * p.c + ch];
          yp[((n * p.oh + oh) * p.ow + ow) * p.c + ch] = static_cast<float>(s / double(win.taps()));
        }
      }
}

// Each output's gradient, divided by its window's tap count, goes to every tap.
void avg_pool_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), dx = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), dx.c());
  const float* dyp = dy.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        const Window win = window(p, oh, ow);
        for (int64_t ch = 0; ch < p.c; ++ch) {
          const double g = double(dyp[((n * p.oh + oh) * p.ow + ow) * p.c + ch]) / double(win.taps());
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw)
              acc[static_cast<size_t>(((n * p.h + ih) * p.w + iw) * p.c + ch)] += g;
        }
      }
  store(acc, dx.data<float>());
}

// ------------------------------------------------------------------ batch normalization
// x is [rows, C] for any rank >= 2: the statistics are per channel (the last
// dimension) over all the other dimensions.

// Training: the batch's mean and biased variance per channel (NaN for no rows).
void batch_moments(const float* x, int64_t rows, int64_t ch, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(ch), 0.0);
  var.assign(static_cast<size_t>(ch), 0.0);
  for (int64_t k = 0; k < ch; ++k) {
    double s = 0.0;
    for (int64_t r = 0; r < rows; ++r) s += x[r * ch + k];
    const double m = s / double(rows);
    double q = 0.0;
    for (int64_t r = 0; r < rows; ++r) q += (x[r * ch + k] - m) * (x[r * ch + k] - m);
    mean[static_cast<size_t>(k)] = m;
    var[static_cast<size_t>(k)] = q / double(rows);
  }
}

// TensorFlow's FusedBatchNormV3. y = (x - mean) / sqrt(variance + epsilon) *
// scale + offset, with the batch's mean and biased variance in training, the
// given ones in inference. Training also writes batch_mean and batch_variance
// (the running averages (1 - f) old + f new, the variance's new value
// unbiased by n / (n - 1), n / 1 for n = 1), reserve_space_1 = the mean and
// reserve_space_2 = the biased variance. Inference with 5 outputs copies the
// given mean and variance into both pairs. For an empty x, batch_mean and
// batch_variance are NaN and the reserve spaces 0, as TensorFlow writes them.
void fused_batch_norm(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const auto& a = c.attrs<axon_batch_norm_attrs>();
  const int64_t ch = x.dim(-1), rows = ch > 0 ? x.numel() / ch : 0;
  const float* xp = x.data<float>();
  const float* scale = c.input(1).data<float>();
  const float* offset = c.input(2).data<float>();
  const float* old_mean = c.input(3).data<float>();
  const float* old_var = c.input(4).data<float>();
  std::vector<double> mean, var;
  if (a.is_training) {
    batch_moments(xp, rows, ch, mean, var);
  } else {
    mean.assign(old_mean, old_mean + ch);
    var.assign(old_var, old_var + ch);
  }
  float* yp = y.data<float>();
  for (int64_t k = 0; k < ch; ++k) {
    const double r = 1.0 / std::sqrt(var[static_cast<size_t>(k)] + double(a.epsilon));
    for (int64_t i = 0; i < rows; ++i)
      yp[i * ch + k] = static_cast<float>((xp[i * ch + k] - mean[static_cast<size_t>(k)]) * r * scale[k] + offset[k]);
  }
  if (c.num_outputs() == 1) return;
  float* batch_mean = c.output(1).data<float>();
  float* batch_var = c.output(2).data<float>();
  float* saved_mean = c.output(3).data<float>();
  float* saved_var = c.output(4).data<float>();
  const double f = a.exponential_avg_factor;
  const double unbias = double(rows) / double(rows > 1 ? rows - 1 : 1);
  for (int64_t k = 0; k < ch; ++k) {
    const double m = mean[static_cast<size_t>(k)], v = var[static_cast<size_t>(k)];
    if (rows == 0) {
      batch_mean[k] = batch_var[k] = std::numeric_limits<float>::quiet_NaN();
      saved_mean[k] = saved_var[k] = 0.0f;
    } else if (a.is_training) {
      batch_mean[k] = static_cast<float>(f == 1.0 ? m : (1.0 - f) * old_mean[k] + f * m);
      batch_var[k] = static_cast<float>(f == 1.0 ? v * unbias : (1.0 - f) * old_var[k] + f * unbias * v);
      saved_mean[k] = static_cast<float>(m);
      saved_var[k] = static_cast<float>(v);
    } else {
      batch_mean[k] = saved_mean[k] = old_mean[k];
      batch_var[k] = saved_var[k] = old_var[k];
    }
  }
}

// TensorFlow's FusedBatchNormGradV3, reserve_space_1/2 being the mean and
// biased variance the forward used (the given ones in inference). With
// r = 1 / sqrt(var + epsilon) and xhat = (x - mean) r, per channel:
// scale_backprop = sum(dy xhat), offset_backprop = sum(dy), and
// dx = scale r (dy - mean(dy) - xhat mean(dy xhat)) in training (the mean and
// variance depend on x), dx = scale r dy in inference.
void fused_batch_norm_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), x = c.input(1), dx = c.output(0);
  const auto& a = c.attrs<axon_batch_norm_attrs>();
  const int64_t ch = x.dim(-1), rows = ch > 0 ? x.numel() / ch : 0;
  const float* g = dy.data<float>();
  const float* xp = x.data<float>();
  const float* scale = c.input(2).data<float>();
  const float* mean = c.input(3).data<float>();
  const float* var = c.input(4).data<float>();
  float* dxp = dx.data<float>();
  float* dscale = c.output(1).data<float>();
  float* doffset = c.output(2).data<float>();
  for (int64_t k = 0; k < ch; ++k) {
    const double r = 1.0 / std::sqrt(double(var[k]) + double(a.epsilon));
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      sum_dy += g[i * ch + k];
      sum_dy_xhat += g[i * ch + k] * ((xp[i * ch + k] - double(mean[k])) * r);
    }
    for (int64_t i = 0; i < rows; ++i) {
      const double xhat = (xp[i * ch + k] - double(mean[k])) * r;
      const double centred = a.is_training ? g[i * ch + k] - sum_dy / double(rows) - xhat * sum_dy_xhat / double(rows)
                                           : double(g[i * ch + k]);
      dxp[i * ch + k] = static_cast<float>(scale[k] * r * centred);
    }
    dscale[k] = static_cast<float>(sum_dy_xhat);
    doffset[k] = static_cast<float>(sum_dy);
  }
}

// LayerNorm (ABI 2.3): each row of x [R, K] normalised by its own mean and
// biased variance, in double; mean and inv_std = 1 / sqrt(variance +
// epsilon) are written for the gradient.
void layer_norm(Device&, const KernelCall& c) {
  TensorRef x = c.input(0);
  const int64_t rows = x.dim(0), k = x.dim(1);
  const float eps = c.attrs<axon_layer_norm_attrs>().epsilon;
  const float* xp = x.data<float>();
  const float* scale = c.input(1).data<float>();
  const float* offset = c.input(2).data<float>();
  float* yp = c.output(0).data<float>();
  float* mean_out = c.output(1).data<float>();
  float* inv_std_out = c.output(2).data<float>();
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = xp + i * k;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < k; ++j) mean += row[j];
    mean /= double(k);
    for (int64_t j = 0; j < k; ++j) var += (row[j] - mean) * (row[j] - mean);
    const double r = 1.0 / std::sqrt(var / double(k) + double(eps));
    for (int64_t j = 0; j < k; ++j) yp[i * k + j] = static_cast<float>((row[j] - mean) * r * scale[j] + offset[j]);
    mean_out[i] = static_cast<float>(mean);
    inv_std_out[i] = static_cast<float>(r);
  }
}

// LayerNormGrad: with xhat = (x - mean) inv_std and g = dy scale per row,
// dx = inv_std (g - mean(g) - xhat mean(g xhat)); scale_backprop and
// offset_backprop sum dy xhat and dy over the rows.
void layer_norm_grad(Device&, const KernelCall& c) {
  TensorRef x = c.input(1);
  const int64_t rows = x.dim(0), k = x.dim(1);
  const float* dy = c.input(0).data<float>();
  const float* xp = x.data<float>();
  const float* scale = c.input(2).data<float>();
  const float* mean = c.input(3).data<float>();
  const float* inv_std = c.input(4).data<float>();
  float* dx = c.output(0).data<float>();
  std::vector<double> dscale(static_cast<size_t>(k)), doffset(static_cast<size_t>(k));
  for (int64_t i = 0; i < rows; ++i) {
    const double r = inv_std[i];
    auto xhat = [&](int64_t j) { return (xp[i * k + j] - double(mean[i])) * r; };
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double g = double(dy[i * k + j]) * scale[j];
      sum_g += g;
      sum_g_xhat += g * xhat(j);
      dscale[static_cast<size_t>(j)] += dy[i * k + j] * xhat(j);
      doffset[static_cast<size_t>(j)] += dy[i * k + j];
    }
    for (int64_t j = 0; j < k; ++j)
      dx[i * k + j] = static_cast<float>(
          r * (double(dy[i * k + j]) * scale[j] - sum_g / double(k) - xhat(j) * sum_g_xhat / double(k)));
  }
  store(dscale, c.output(1).data<float>());
  store(doffset, c.output(2).data<float>());
}

// _FusedBatchNormEx and _FusedBatchNormGradEx (ABI 1.5): exactly the ops
// they stand for, one after the other. The forward is FusedBatchNormV3, then
// the activation on y; the gradient masks dy where y (the forward's output)
// is not positive, as ReluGrad does, and runs FusedBatchNormGradV3 on that.
axon_kernel_call sub_call(const KernelCall& c, int inputs, std::vector<axon_tensor>& in, std::vector<axon_tensor>& out,
                          const void* attrs) {
  for (int i = 0; i < inputs; ++i) in.push_back(c.input(i).c());
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output(i).c());
  axon_kernel_call s{};
  s.struct_size = sizeof s;
  s.op = c.op();
  s.num_inputs = static_cast<int32_t>(in.size());
  s.inputs = in.data();
  s.num_outputs = static_cast<int32_t>(out.size());
  s.outputs = out.data();
  s.attrs = attrs;
  return s;
}

void fused_batch_norm_ex(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  std::vector<axon_tensor> in, out;
  fused_batch_norm(d, KernelCall(sub_call(c, 5, in, out, &a.batch_norm)));
  if (a.activation != AXON_ACTIVATION_RELU) return;
  TensorRef y = c.output(0);
  float* p = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
}

void fused_batch_norm_grad_ex(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  std::vector<axon_tensor> in, out;
  axon_kernel_call s = sub_call(c, 5, in, out, &a.batch_norm);
  std::vector<float> masked;
  if (a.activation == AXON_ACTIVATION_RELU) {
    TensorRef dy = c.input(0), y = c.input(5);
    masked.assign(dy.data<float>(), dy.data<float>() + dy.numel());
    for (size_t i = 0; i < masked.size(); ++i)
      if (!(y.data<float>()[i] > 0.0f)) masked[i] = 0.0f;
    in[0].data = masked.empty() ? nullptr : masked.data();
  }
  fused_batch_norm_grad(d, KernelCall(s));
}

// _FusedBatchNormAddEx and _FusedBatchNormAddGradEx (ABI 2.1): the same with
// the side input added to y before the activation, and the side input's
// gradient (dy, masked with relu) written first, FusedBatchNormGradV3 run on it.
void fused_batch_norm_add_ex(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  std::vector<axon_tensor> in, out;
  fused_batch_norm(d, KernelCall(sub_call(c, 5, in, out, &a.batch_norm)));
  TensorRef y = c.output(0), side = c.input(5);
  float* p = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    p[i] = p[i] + side.data<float>()[i];
    if (a.activation == AXON_ACTIVATION_RELU) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
  }
}

void fused_batch_norm_add_grad_ex(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  TensorRef dy = c.input(0), y = c.input(5), side = c.output(3);
  float* g = side.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i)
    g[i] = a.activation != AXON_ACTIVATION_RELU || y.data<float>()[i] > 0.0f ? dy.data<float>()[i] : 0.0f;
  std::vector<axon_tensor> in, out;
  axon_kernel_call s = sub_call(c, 5, in, out, &a.batch_norm);
  in[0].data = g;
  fused_batch_norm_grad(d, KernelCall(s));
}

// ------------------------------------------------------------------ depthwise convolution
// filter [KH, KW, C, M]: input channel c feeds output channels c * M .. c * M + M - 1,
// each with its own KH x KW filter. The geometry is Conv2D's with oc = M.

// Calls f(y index of (n, oh, ow, channel 0), x index of (n, ih, iw, channel 0),
// filter index of (kh, kw, channel 0)) for every tap that reads a real pixel.
template <class F>
void for_each_tap(const ConvGeometry& g, F&& f) {
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = oh * g.sh - g.pad_h + kh * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const int64_t iw = ow * g.sw - g.pad_w + kw * g.dw;
            if (iw < 0 || iw >= g.w) continue;
            f(((n * g.oh + oh) * g.ow + ow) * g.c * g.oc, ((n * g.h + ih) * g.w + iw) * g.c,
              (kh * g.kw + kw) * g.c * g.oc);
          }
        }
}

void depthwise_conv2d(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), y = c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c());
  const float* xp = x.data<float>();
  const float* fp = f.data<float>();
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t fi) {
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t m = 0; m < g.oc; ++m)
        acc[static_cast<size_t>(yi + ci * g.oc + m)] += double(xp[xi + ci]) * fp[fi + ci * g.oc + m];
  });
  store(acc, y.data<float>());
}

void depthwise_conv2d_backprop_input(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), f = c.input(1), dx = c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  const float* dyp = dy.data<float>();
  const float* fp = f.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t fi) {
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t m = 0; m < g.oc; ++m)
        acc[static_cast<size_t>(xi + ci)] += double(dyp[yi + ci * g.oc + m]) * fp[fi + ci * g.oc + m];
  });
  store(acc, dx.data<float>());
}

void depthwise_conv2d_backprop_filter(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(1), df = c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  std::vector<double> acc(static_cast<size_t>(df.numel()), 0.0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t fi) {
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t m = 0; m < g.oc; ++m)
        acc[static_cast<size_t>(fi + ci * g.oc + m)] += double(xp[xi + ci]) * dyp[yi + ci * g.oc + m];
  });
  store(acc, df.data<float>());
}

}  // namespace

void add_layer_kernels(KernelTable& t) {
  using axon::OpId;
  add<OpId::AvgPool, avg_pool>(t);
  add<OpId::AvgPoolGrad, avg_pool_grad>(t);
  add<OpId::FusedBatchNormV3, fused_batch_norm>(t);
  add<OpId::FusedBatchNormGradV3, fused_batch_norm_grad>(t);
  add<OpId::FusedBatchNormEx, fused_batch_norm_ex>(t);
  add<OpId::FusedBatchNormGradEx, fused_batch_norm_grad_ex>(t);
  add<OpId::FusedBatchNormAddEx, fused_batch_norm_add_ex>(t);
  add<OpId::FusedBatchNormAddGradEx, fused_batch_norm_add_grad_ex>(t);
  add<OpId::DepthwiseConv2dNative, depthwise_conv2d>(t);
  add<OpId::DepthwiseConv2dNativeBackpropInput, depthwise_conv2d_backprop_input>(t);
  add<OpId::DepthwiseConv2dNativeBackpropFilter, depthwise_conv2d_backprop_filter>(t);
  add<OpId::LayerNorm, layer_norm>(t);
  add<OpId::LayerNormGrad, layer_norm_grad>(t);
}

}  // namespace ref
