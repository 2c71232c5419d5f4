# The GPU test drivers (plain C++ over the C ABI harness, no Catch2), shared
# by tests/cuda/CMakeLists.txt (the superbuild) and tests/cuda/standalone (the
# build on the GPU machine, where Catch2 and Boost are missing).
# Expects: targets axon-plugin-cuda and axon-plugin-reference, and
# AXON_HARNESS_DIR (the folder of plugin_harness.hpp). cuda_goldens runs
# TensorFlow's goldens (tests/goldens/tf) on the GPU.

foreach(_t cuda_probe cuda_kernels_test cuda_memory_test cuda_collectives_test)
  add_executable(${_t} ${CMAKE_CURRENT_LIST_DIR}/${_t}.cpp)
  target_include_directories(${_t} PRIVATE ${AXON_HARNESS_DIR} ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(${_t} PRIVATE axon::sdk ${CMAKE_DL_LIBS})
  axon_set_warnings(${_t})
  # The plugins are loaded at run time; build them with the test.
  add_dependencies(${_t} axon-plugin-cuda axon-cuda-kernels)
endforeach()
add_dependencies(cuda_kernels_test axon-plugin-reference)

add_test(NAME cuda_probe COMMAND cuda_probe $<TARGET_FILE:axon-plugin-cuda>)
add_test(NAME cuda_kernels
  COMMAND cuda_kernels_test $<TARGET_FILE:axon-plugin-cuda> $<TARGET_FILE:axon-plugin-reference>)
foreach(_mode reserve growth limit)
  add_test(NAME cuda_memory_${_mode} COMMAND cuda_memory_test $<TARGET_FILE:axon-plugin-cuda> ${_mode})
endforeach()
add_test(NAME cuda_collectives COMMAND cuda_collectives_test $<TARGET_FILE:axon-plugin-cuda>)

if(NOT TARGET axon-golden-check)
  add_executable(axon-golden-check ${CMAKE_CURRENT_LIST_DIR}/../goldens/golden_check.cpp)
  target_include_directories(axon-golden-check PRIVATE ${AXON_HARNESS_DIR})
  target_link_libraries(axon-golden-check PRIVATE axon::sdk ${CMAKE_DL_LIBS})
  axon_set_warnings(axon-golden-check)
endif()
add_dependencies(axon-golden-check axon-plugin-cuda axon-cuda-kernels)
set(AXON_GOLDEN_DIR ${CMAKE_CURRENT_LIST_DIR}/../goldens/tf)
add_test(NAME cuda_goldens COMMAND axon-golden-check --gpu $<TARGET_FILE:axon-plugin-cuda> ${AXON_GOLDEN_DIR}/ops.axg
                                   ${AXON_GOLDEN_DIR}/fused_ops.axg ${AXON_GOLDEN_DIR}/fused_layers.axg
                                   ${AXON_GOLDEN_DIR}/fused_residual.axg
                                   ${AXON_GOLDEN_DIR}/layers.axg ${AXON_GOLDEN_DIR}/activations.axg
                                   ${AXON_GOLDEN_DIR}/optimizers.axg ${AXON_GOLDEN_DIR}/losses.axg
                                   ${AXON_GOLDEN_DIR}/layer_norm.axg)
set_tests_properties(cuda_probe cuda_kernels cuda_memory_reserve cuda_memory_growth cuda_memory_limit cuda_collectives cuda_goldens PROPERTIES
  LABELS gpu
  SKIP_RETURN_CODE 77
  TIMEOUT 300
  # One GPU: the memory tests take most of it, so they must not overlap.
  RUN_SERIAL TRUE)
# The collectives test waits 3 s for a peer that never comes; more means a hang.
set_tests_properties(cuda_collectives PROPERTIES TIMEOUT 90)
