# tools/gpu-check tested without a GPU (label gpucheck): its usage errors, the
# device preset's exports, and, in a simulated device machine
# (tools/gpucheck/simulate-device, needs root; skipped with the reason
# otherwise), the bundle and the device run: no GPU, no GPU and no wheels, a
# GPU that is there but unusable, a run killed midway, a run out of budget, a
# wheel-only toolkit.
# Included by tests/cuda/CMakeLists.txt.

set(_gpu_check ${PROJECT_SOURCE_DIR}/tools/gpu-check)
set(_expect -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake --)
add_test(NAME gpucheck_usage_no_output COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2
  "-DEXPECT_OUTPUT=^gpu-check: no output folder given \\(see bash tools/gpu-check --help\\)\n$" ${_expect} bash ${_gpu_check})
add_test(NAME gpucheck_usage_bad_budget COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2
  "-DEXPECT_OUTPUT=^gpu-check: --budget needs a whole number of seconds from 10 to 86400, got 'soon'"
  ${_expect} bash ${_gpu_check} ${CMAKE_CURRENT_BINARY_DIR}/gpucheck-usage-out --budget soon)
add_test(NAME gpucheck_usage_unknown COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2
  "-DEXPECT_OUTPUT=^gpu-check: unknown argument '--fast'" ${_expect} bash ${_gpu_check} ${CMAKE_CURRENT_BINARY_DIR}/gpucheck-usage-out --fast)
set_tests_properties(gpucheck_usage_no_output gpucheck_usage_bad_budget gpucheck_usage_unknown PROPERTIES LABELS "cuda;gpucheck")

# The device preset's linker flags keep a static libstdc++ out of the exports.
add_test(NAME gpucheck_device_preset_exports COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
  -DCXX=${CMAKE_CXX_COMPILER} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/device-preset-exports
  -P ${CMAKE_CURRENT_SOURCE_DIR}/device_preset_exports.cmake)
set_tests_properties(gpucheck_device_preset_exports PROPERTIES LABELS "cuda;gpucheck")

# The simulated device runs share one bundle (fixture), removed at the end.
set(_scratch ${CMAKE_CURRENT_BINARY_DIR}/gpucheck-scratch)
set(_run bash ${CMAKE_CURRENT_SOURCE_DIR}/gpucheck_test.sh)
add_test(NAME gpucheck_pack COMMAND ${_run} pack ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${_scratch})
set_tests_properties(gpucheck_pack PROPERTIES FIXTURES_SETUP gpucheck_bundle)
foreach(_scenario no-gpu no-wheels unusable-gpu killed budget)
  add_test(NAME gpucheck_${_scenario} COMMAND ${_run} ${_scenario} ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${_scratch})
  set_tests_properties(gpucheck_${_scenario} PROPERTIES FIXTURES_REQUIRED gpucheck_bundle)
endforeach()
add_test(NAME gpucheck_toolchain COMMAND ${_run} toolchain ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${_scratch}-toolchain)
add_test(NAME gpucheck_cleanup COMMAND ${CMAKE_COMMAND} -E rm -rf ${_scratch})
set_tests_properties(gpucheck_cleanup PROPERTIES FIXTURES_CLEANUP gpucheck_bundle)
set_tests_properties(gpucheck_pack gpucheck_no-gpu gpucheck_no-wheels gpucheck_unusable-gpu gpucheck_killed gpucheck_budget
  gpucheck_toolchain gpucheck_cleanup PROPERTIES LABELS "cuda;gpucheck" SKIP_RETURN_CODE 77 TIMEOUT 180
  # They mount namespaces and run the trainer: one at a time.
  RUN_SERIAL TRUE)
