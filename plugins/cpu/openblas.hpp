// Loads OpenBLAS at run time (dlopen) instead of linking it, for one reason:
// OpenBLAS picks its kernels once, in its load-time constructor, from the CPU
// models it knows, and an older OpenBLAS on a newer CPU falls back to generic
// SSE3 ("Prescott") kernels. Debian's 0.3.21 does exactly that on this
// project's Xeons (family 6 model 207), a 4-5x loss in sgemm. Before loading,
// if the user has not set OPENBLAS_CORETYPE, we set it from the CPU's features
// (AVX-512 -> SkylakeX, AVX2+FMA -> Haswell: the kernels the newer models use).
// Header-only so that benchmarks measure sgemm exactly as the plugin runs it.
#pragma once

#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#ifndef AXON_OPENBLAS_LIBRARY
#define AXON_OPENBLAS_LIBRARY ""
#endif

namespace axon::cpu {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  decltype(&openblas_get_num_threads) get_num_threads = nullptr;
  decltype(&openblas_get_config) get_config = nullptr;
  std::string error;     // why it did not load; empty when it did
  std::string coretype;  // "OPENBLAS_CORETYPE=SkylakeX (set by axon)" or "(set by the user)" or ""
  bool ok() const { return sgemm != nullptr; }
};

// The kernel family OpenBLAS should use on this CPU, or nullptr to let it decide.
inline const char* openblas_coretype_for_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

inline OpenBlas load_openblas() {
  OpenBlas b;
  void* already = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (already != nullptr) {
    b.coretype = "OpenBLAS was loaded before axon's CPU plugin: its kernel choice stands";
  } else if (const char* user = std::getenv("OPENBLAS_CORETYPE")) {
    b.coretype = std::string("OPENBLAS_CORETYPE=") + user + " (set by the user)";
  } else if (const char* core = openblas_coretype_for_cpu()) {
    setenv("OPENBLAS_CORETYPE", core, 0);  // read by OpenBLAS's constructor, below
    b.coretype = std::string("OPENBLAS_CORETYPE=") + core + " (set by axon from the CPU's features)";
  }
  std::string tried;
  void* h = already;
  for (const char* name : {"libopenblas.so.0", AXON_OPENBLAS_LIBRARY, "libopenblas.so"}) {
    if (h != nullptr || *name == '\0') continue;
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) break;
    const char* e = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
  }
  if (h == nullptr) {
    b.error = "cannot load OpenBLAS: " + tried;
    return b;
  }
  b.set_num_threads = reinterpret_cast<decltype(b.set_num_threads)>(dlsym(h, "openblas_set_num_threads"));
  b.get_num_threads = reinterpret_cast<decltype(b.get_num_threads)>(dlsym(h, "openblas_get_num_threads"));
  b.get_config = reinterpret_cast<decltype(b.get_config)>(dlsym(h, "openblas_get_config"));
  auto sgemm = reinterpret_cast<decltype(b.sgemm)>(dlsym(h, "cblas_sgemm"));
  if (!sgemm || !b.set_num_threads || !b.get_num_threads || !b.get_config) {
    b.error = "the loaded OpenBLAS lacks cblas_sgemm or openblas_set/get_num_threads/get_config";
    return b;
  }
  b.sgemm = sgemm;  // the library stays loaded for the life of the process
  return b;
}

// Loaded once per process, on first use.
inline const OpenBlas& openblas() {
  static const OpenBlas b = load_openblas();
  return b;
}

}  // namespace axon::cpu
