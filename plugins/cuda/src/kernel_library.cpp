#include "kernel_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace axon::cuda {

namespace {

// The folder this plugin was loaded from.
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Where the dynamic loader looks for the kernel library's own dependencies.
std::string dependency_search_note() {
  std::string s = "its dependencies (libcudnn.so.9, libcublas.so.13, libnccl.so.2) are searched in the library's "
                  "RUNPATH, LD_LIBRARY_PATH=";
  const char* ld = std::getenv("LD_LIBRARY_PATH");
  s += ld && *ld ? std::string("\"") + ld + "\"" : "(unset)";
  s += ", the ld.so cache and /lib, /usr/lib";
  return s;
}

}  // namespace

const axon_cuda_kernels_api* load_kernel_library(std::string& error) {
  static axon_cuda_kernels_api api{};
  static std::string load_error;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    // AXON_CUDA_KERNELS_DIR overrides the folder (tests, unusual installs).
    std::vector<std::string> folders;
    if (const char* dir = std::getenv("AXON_CUDA_KERNELS_DIR"); dir && *dir) folders.emplace_back(dir);
    folders.push_back(own_folder());
    std::string tried;
    for (const auto& folder : folders) {
      std::string path = folder + "/" + AXON_CUDA_KERNELS_FILE;
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) {
        const char* e = dlerror();
        tried += (tried.empty() ? "" : "; ") + std::string(e ? e : path + ": unknown error");
        continue;
      }
      auto init = reinterpret_cast<axon_cuda_kernels_init_fn>(dlsym(lib, AXON_CUDA_KERNELS_ENTRY));
      if (init == nullptr) {
        load_error = path + " has no " AXON_CUDA_KERNELS_ENTRY;
        return;
      }
      api.struct_size = sizeof api;
      axon_error err{};
      if (init(AXON_CUDA_KERNELS_VERSION, &api, &err) != AXON_OK) {
        load_error = path + ": " + err.message;
        return;
      }
      if (api.version != AXON_CUDA_KERNELS_VERSION || api.open_device == nullptr) {
        load_error = path + " is of another build (kernel table version " + std::to_string(api.version) + ", expected " +
                     std::to_string(AXON_CUDA_KERNELS_VERSION) + ")";
        return;
      }
      ok = true;
      return;
    }
    std::string searched;
    for (const auto& f : folders) searched += (searched.empty() ? "" : ", ") + f;
    load_error = std::string("cannot load the CUDA kernel library " AXON_CUDA_KERNELS_FILE ": ") + tried +
                 " (searched: " + searched + "; " + dependency_search_note() + ")";
  });
  if (!ok) {
    error = load_error;
    return nullptr;
  }
  return &api;
}

}  // namespace axon::cuda
