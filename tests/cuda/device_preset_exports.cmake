# The `device` preset's linking, as the GPU bundle gets it:
#  - an exception thrown in a shared library (libaxon-core) and caught in the
#    program must arrive (with a static libstdc++ in each, hidden by
#    --exclude-libs, every such error aborted without a word on the H200);
#  - no shared library may export libstdc++'s symbols, which would override
#    the system libstdc++ that cuDNN and NCCL use on the device.
# Links a small library and a program with the preset's flags, runs it, and
# counts the library's exports that libstdc++.so.6 also has.
#   cmake -DSOURCE_DIR=... -DCXX=... -DWORK=... -P device_preset_exports.cmake
file(READ ${SOURCE_DIR}/CMakePresets.json _presets)
string(JSON _n LENGTH "${_presets}" configurePresets)
math(EXPR _last "${_n} - 1")
set(_found OFF)
set(_shared "")
set(_exe "")
foreach(_i RANGE ${_last})
  string(JSON _name GET "${_presets}" configurePresets ${_i} name)
  if(_name STREQUAL "device")
    set(_found ON)
    string(JSON _shared ERROR_VARIABLE _none GET "${_presets}" configurePresets ${_i} cacheVariables
           CMAKE_SHARED_LINKER_FLAGS)
    string(JSON _exe ERROR_VARIABLE _none GET "${_presets}" configurePresets ${_i} cacheVariables
           CMAKE_EXE_LINKER_FLAGS)
  endif()
endforeach()
if(NOT _found)
  message(FATAL_ERROR "no device preset in CMakePresets.json")
endif()
foreach(_v _shared _exe)
  if(${_v} MATCHES "-NOTFOUND$")
    set(${_v} "")
  endif()
endforeach()
message("device preset: CMAKE_SHARED_LINKER_FLAGS='${_shared}' CMAKE_EXE_LINKER_FLAGS='${_exe}'")
separate_arguments(_shared UNIX_COMMAND "${_shared}")
separate_arguments(_exe UNIX_COMMAND "${_exe}")

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
file(WRITE ${WORK}/main.cpp [=[
#include <cstdio>
#include <stdexcept>
#include <string>
std::string probe(int v);
int main() {
  try {
    probe(-1);
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
    return 0;
  }
  return 1;
}
]=])
execute_process(COMMAND ${CXX} -shared -fPIC -O1 ${_shared} -o ${WORK}/libprobe.so ${WORK}/probe.cpp
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "linking the probe library failed: ${err}")
endif()
execute_process(COMMAND ${CXX} -O1 ${_exe} -o ${WORK}/probe_main ${WORK}/main.cpp -L${WORK} -lprobe
  -Wl,-rpath,${WORK} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "linking the probe program failed: ${err}")
endif()
execute_process(COMMAND ${WORK}/probe_main RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "caught: value -1\n")
  message(FATAL_ERROR "an exception from the library did not reach the program's catch: exit ${rc}, '${out}${err}'")
endif()
message("the library's exception reached the program: ${out}")

execute_process(COMMAND ${CXX} -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE _stdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND bash -c [=[
    set -o pipefail
    names() { nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | LC_ALL=C sort -u; }
    LC_ALL=C comm -12 <(names "$0") <(names "$1") | wc -l]=]
  ${WORK}/libprobe.so ${_stdcxx} OUTPUT_VARIABLE _count RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "counting the exports failed (nm, awk, sort, comm)")
endif()
message("libstdc++ symbols the library exports: ${_count}")
if(NOT _count EQUAL 0)
  message(FATAL_ERROR "the device preset's flags export ${_count} symbols of libstdc++")
endif()
