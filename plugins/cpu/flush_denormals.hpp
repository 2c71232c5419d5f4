// FlushDenormals, for the optimizer kernels (math.cpp, optimizers.cpp).
#pragma once

namespace axon::cpu {

// Denormals flushed to zero while alive (MXCSR FTZ and DAZ on this thread,
// restored after). For Adam: the moment m of a weight whose gradient has
// gone to zero (a dead ReLU unit) decays by beta_1 every step and spends
// ~100 steps as a denormal, where each multiply costs ~100 cycles: measured,
// ApplyAdam took 3x as long late in training as early. Such an m moves its
// weight by less than 1e-30 of the weight's own size, so flushing it changes
// no weight (TensorFlow flushes denormals on the CPU everywhere).
class FlushDenormals {
 public:
#if defined(__x86_64__) && defined(__GNUC__)
  FlushDenormals() : saved_(__builtin_ia32_stmxcsr()) { __builtin_ia32_ldmxcsr(saved_ | 0x8040); }
  ~FlushDenormals() { __builtin_ia32_ldmxcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

}  // namespace axon::cpu
