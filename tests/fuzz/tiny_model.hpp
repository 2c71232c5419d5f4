// The model the checkpoint and weights fuzzer reads into, and make_seeds
// writes from: Flatten + Dense(2) on 2x2 images, so that a checkpoint is a
// few hundred bytes and the fuzzer explores its header, not megabytes of
// floats. Built once, on the build tree's reference plugin (the fuzz
// preset's clang builds it; the CPU plugin needs GCC).
#pragma once

#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/runtime.hpp>
#include <axon/train/checkpoint.hpp>

#include <memory>

namespace axon::fuzz {

inline nn::Sequential& tiny_model() {
  static nn::Sequential* model = [] {
    if (!Runtime::initialised()) Runtime::init(Config{});
    auto* m = new nn::Sequential("tiny");  // kept for the process, like the runtime
    m->add<nn::Flatten>();
    m->add<nn::Dense>(2);
    m->build({2, 2, 1}, Runtime::get().device("ref:0"), 1);
    m->compile();
    return m;
  }();
  return *model;
}

// The run its checkpoints belong to: 8 samples, batch 4.
inline train::RunIdentity tiny_run() { return {1, 4, 8, 2, 1e-3f}; }

}  // namespace axon::fuzz
