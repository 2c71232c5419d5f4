# FindcuDNN
# ---------
# Finds NVIDIA cuDNN (headers and the main library).
#
# Looks in CUDNN_ROOT (CMake or environment variable), next to the CUDA toolkit
# (CUDAToolkit_INCLUDE_DIRS / CUDAToolkit_LIBRARY_DIR when find_package(CUDAToolkit)
# ran first), CMAKE_PREFIX_PATH / CMAKE_INCLUDE_PATH / CMAKE_LIBRARY_PATH, and
# the system. A pip wheel (nvidia-cudnn-cu13) ships only libcudnn.so.9, without
# the unversioned link, so that name is searched too.
#
# Result variables: cuDNN_FOUND, cuDNN_VERSION, cuDNN_INCLUDE_DIR, cuDNN_LIBRARY
# Imported target:   cuDNN::cuDNN

set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT})
if(CUDAToolkit_LIBRARY_DIR)
  list(APPEND _cudnn_hints "${CUDAToolkit_LIBRARY_DIR}/..")
endif()

find_path(cuDNN_INCLUDE_DIR NAMES cudnn_version.h cudnn.h
  HINTS ${_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(cuDNN_LIBRARY NAMES cudnn libcudnn.so.9
  HINTS ${_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64 lib/x64)

if(cuDNN_INCLUDE_DIR)
  foreach(_h cudnn_version.h cudnn.h)
    if(EXISTS "${cuDNN_INCLUDE_DIR}/${_h}" AND NOT cuDNN_VERSION)
      file(STRINGS "${cuDNN_INCLUDE_DIR}/${_h}" _cudnn_defs REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
      foreach(_part MAJOR MINOR PATCHLEVEL)
        string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _m "${_cudnn_defs}")
        set(_cudnn_${_part} "${CMAKE_MATCH_1}")
      endforeach()
      if(NOT "${_cudnn_MAJOR}" STREQUAL "")
        set(cuDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
      endif()
    endif()
  endforeach()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(cuDNN
  REQUIRED_VARS cuDNN_LIBRARY cuDNN_INCLUDE_DIR
  VERSION_VAR cuDNN_VERSION)

if(cuDNN_FOUND AND NOT TARGET cuDNN::cuDNN)
  add_library(cuDNN::cuDNN SHARED IMPORTED)
  set_target_properties(cuDNN::cuDNN PROPERTIES
    IMPORTED_LOCATION "${cuDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${cuDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(cuDNN_INCLUDE_DIR cuDNN_LIBRARY)
