# Shared by bench/cuda/CMakeLists.txt and tests/cuda/standalone.
# Expects AXON_HARNESS_DIR and the target axon-plugin-cuda.
add_executable(axon-bench-cuda ${CMAKE_CURRENT_LIST_DIR}/bench_cuda.cpp)
target_include_directories(axon-bench-cuda PRIVATE ${AXON_HARNESS_DIR})
target_link_libraries(axon-bench-cuda PRIVATE axon::sdk ${CMAKE_DL_LIBS})
target_compile_definitions(axon-bench-cuda PRIVATE AXON_CUDA_PLUGIN_PATH="$<TARGET_FILE:axon-plugin-cuda>")
add_dependencies(axon-bench-cuda axon-plugin-cuda axon-cuda-kernels)
axon_set_warnings(axon-bench-cuda)

# The host cost of a cuDNN convolution call, legacy against backend API (plain
# C++ on cudart and cuDNN, no plugin). Exits 77 without a GPU.
find_package(CUDAToolkit)
find_package(cuDNN)
if(CUDAToolkit_FOUND AND cuDNN_FOUND)
  add_executable(axon-bench-cudnn-calls ${CMAKE_CURRENT_LIST_DIR}/bench_cudnn_calls.cpp)
  target_link_libraries(axon-bench-cudnn-calls PRIVATE CUDA::cudart_static cuDNN::cuDNN)
  axon_set_warnings(axon-bench-cudnn-calls)
endif()
