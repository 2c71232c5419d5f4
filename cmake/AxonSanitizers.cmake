# AXON_SANITIZE: every C and C++ target with AddressSanitizer and
# UndefinedBehaviorSanitizer; a report aborts the process, so the test that
# hit it fails (the sanitize preset, GCC). AXON_FUZZ: the fuzz targets as
# libFuzzer binaries, with every library instrumented for coverage (the fuzz
# preset; needs clang).
option(AXON_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(AXON_FUZZ "Build the fuzz targets with libFuzzer (clang only)" OFF)

# Four of UBSan's checks are left out: `null` (ASan reports a null
# dereference as a SEGV with its stack anyway), `object-size` (an access
# beyond an object the compiler knows the size of: ASan reports every access
# beyond any object), `alignment` (x86-64 loads misaligned data; axon's
# buffers are allocated aligned) and `pointer-overflow`. Between them they
# instrument every memory access and pointer step, which more than doubled
# the compile time of the kernels and of nlohmann::json's users
# (small_gemm.cpp 76 s -> 31 s, keras_json.cpp 44 s -> 21 s without the
# first three; winograd.cpp under UBSan alone 101 s -> 51 s without
# object-size too), the largest part of the stage. The rest of UBSan stays
# on.
if(AXON_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize=null,object-size,alignment,pointer-overflow>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
if(AXON_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "AXON_FUZZ needs clang (libFuzzer); this is ${CMAKE_CXX_COMPILER_ID}: use the fuzz preset")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
endif()

# The reference plugin (sdk/examples/reference-plugin) reads the C ABI's enum
# fields as C++ enums, which is undefined for the out-of-range values the
# kernel tests send it on purpose (values it then refuses): UBSan's enum
# check is off for that target alone. Called once the targets exist.
#
# The sanitize preset compiles at -O1, which takes 40% off the compile of
# the rest (core's largest batch 30 s -> 18 s); the kernels the tests spend
# their time in keep -O2 (the last -O on the command line wins), except in a
# Debug build.
function(axon_sanitizer_exceptions)
  if(AXON_SANITIZE AND TARGET axon-plugin-reference)
    target_compile_options(axon-plugin-reference PRIVATE -fno-sanitize=enum)
  endif()
  if(AXON_SANITIZE)
    foreach(kernels axon-plugin-cpu axon_cpu_small_gemm axon_reference_kernels)
      if(TARGET ${kernels})
        target_compile_options(${kernels} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O2>)
      endif()
    endforeach()
  endif()
endfunction()
