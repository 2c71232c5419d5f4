// Under AddressSanitizer an allocation past its size cap aborts the process
// unless the allocator may return NULL; the checker asks plugins for 2^60
// bytes on purpose, so a host-memory plugin's own out-of-memory path (NULL
// from aligned_alloc, then AXON_OUT_OF_MEMORY) is what must run. Options set
// in ASAN_OPTIONS still win.
#if defined(__SANITIZE_ADDRESS__)
#define AXON_CHECK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AXON_CHECK_ASAN 1
#endif
#endif

#ifdef AXON_CHECK_ASAN
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif
