# The `device` preset links the C++ runtime statically; its linker flags must
# keep those libstdc++ symbols out of a shared library's exports, or they
# would override the system libstdc++ that cuDNN and NCCL use on the device.
# Links a small shared library twice with the preset's flags, with and
# without --exclude-libs, and counts the exports libstdc++.so.6 also has:
# none with the flags, many without (so the count can tell).
#   cmake -DSOURCE_DIR=... -DCXX=... -DWORK=... -P device_preset_exports.cmake
file(READ ${SOURCE_DIR}/CMakePresets.json _presets)
string(JSON _n LENGTH "${_presets}" configurePresets)
math(EXPR _last "${_n} - 1")
set(_flags "")
foreach(_i RANGE ${_last})
  string(JSON _name GET "${_presets}" configurePresets ${_i} name)
  if(_name STREQUAL "device")
    string(JSON _flags GET "${_presets}" configurePresets ${_i} cacheVariables CMAKE_SHARED_LINKER_FLAGS)
  endif()
endforeach()
if(NOT _flags)
  message(FATAL_ERROR "no CMAKE_SHARED_LINKER_FLAGS in the device preset")
endif()
message("device preset: CMAKE_SHARED_LINKER_FLAGS=${_flags}")
separate_arguments(_flags UNIX_COMMAND "${_flags}")
set(_without ${_flags})
list(FILTER _without EXCLUDE REGEX "exclude-libs")

file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/probe.cpp [=[
#include <sstream>
#include <stdexcept>
#include <string>
__attribute__((visibility("default"))) std::string probe(int v) {
  std::ostringstream s;
  s << "value " << v;
  if (v < 0) throw std::runtime_error(s.str());
  return s.str();
}
]=])
execute_process(COMMAND ${CXX} -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE _stdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)

# common_exports(OUT FLAGS): links the probe with FLAGS; OUT = how many of its
# exports libstdc++.so.6 exports too (names without their @version).
function(common_exports out flags)
  execute_process(COMMAND ${CXX} -shared -fPIC -O1 ${flags} -o ${WORK}/libprobe.so ${WORK}/probe.cpp
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "linking the probe library failed: ${err}")
  endif()
  execute_process(COMMAND bash -c [=[
      set -o pipefail
      names() { nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | LC_ALL=C sort -u; }
      LC_ALL=C comm -12 <(names "$0") <(names "$1") | wc -l]=]
    ${WORK}/libprobe.so ${_stdcxx} OUTPUT_VARIABLE n RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "counting the exports failed (nm, awk, sort, comm)")
  endif()
  set(${out} ${n} PARENT_SCOPE)
endfunction()

common_exports(_count_with "${_flags}")
common_exports(_count_plain "${_without}")
message("libstdc++ symbols exported: ${_count_with} with the preset's flags, ${_count_plain} without --exclude-libs")
if(_count_plain LESS 100)
  message(FATAL_ERROR "without --exclude-libs the probe should export libstdc++'s symbols; the check cannot tell")
endif()
if(NOT _count_with EQUAL 0)
  message(FATAL_ERROR "the device preset's flags export ${_count_with} symbols of the static libstdc++")
endif()
