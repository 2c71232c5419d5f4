# What a CUDA build and run need, found on a machine where CUDA, cuDNN,
# cuBLAS and NCCL may exist only as pip wheels (site-packages/nvidia/<pkg>/
# {bin,lib,include}; the CUDA 13 wheels share nvidia/cu13). Sourced by
# tools/gpu-check. Run alone, it prints what it finds:
#
#   bash tools/gpucheck/cuda-toolchain.sh [--configure BUILD_DIR]
#
# With --configure it also configures tests/cuda/standalone in BUILD_DIR with
# the arguments it prints (exit: CMake's).
#
# A wheel-only toolkit (nvcc in nvidia/cu13/bin) has no lib64 folder, no
# targets/ tree and no unversioned libcudart.so: nvcc then links only with
# LIBRARY_PATH set to its lib folder, and CMake's FindCUDAToolkit needs
# CUDA_CUDART pointing at libcudart.so.13. cuda_toolchain sets both.

# site-packages/nvidia folders: python3's `nvidia` namespace package first,
# then the usual places of a system or virtual-environment Python.
nvidia_roots() {
  {
    python3 -c 'import nvidia, sys; print("\n".join(nvidia.__path__))' 2>/dev/null
    local g
    for g in /usr/local/lib/python3*/dist-packages/nvidia /usr/lib/python3/dist-packages/nvidia \
             /usr/local/lib/python3*/site-packages/nvidia /opt/*/.venv/lib/python3*/site-packages/nvidia \
             /opt/conda/lib/python3*/site-packages/nvidia; do
      [ -d "$g" ] && echo "$g"
    done
  } | while read -r d; do [ -d "$d" ] && readlink -f "$d"; done | awk '!seen[$0]++'
}

# wheel_dirs KIND: every nvidia/*/KIND folder (lib, include, bin), colon-separated.
wheel_dirs() {
  local kind=$1 root sub out=""
  for root in $(nvidia_roots); do
    for sub in "$root"/*/"$kind"; do
      [ -d "$sub" ] && out=${out:+$out:}$sub
    done
  done
  echo "$out"
}

# nvcc: PATH, CUDA_HOME / CUDA_PATH, /usr/local/cuda, the newest
# /usr/local/cuda-*, then the wheels (CUDA 13: nvidia/cu13/bin, CUDA 12:
# nvidia/cuda_nvcc/bin). Prints the first that runs.
find_nvcc() {
  local c candidates=()
  c=$(command -v nvcc 2>/dev/null) && candidates+=("$c")
  [ -n "${CUDA_HOME:-}" ] && candidates+=("$CUDA_HOME/bin/nvcc")
  [ -n "${CUDA_PATH:-}" ] && candidates+=("$CUDA_PATH/bin/nvcc")
  candidates+=(/usr/local/cuda/bin/nvcc)
  while read -r c; do candidates+=("$c"); done < <(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -rV)
  local root
  for root in $(nvidia_roots); do candidates+=("$root/cu13/bin/nvcc" "$root/cuda_nvcc/bin/nvcc"); done
  for c in "${candidates[@]}"; do
    if [ -x "$c" ] && "$c" --version >/dev/null 2>&1; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# cuda_toolchain: sets
#   cuda_nvcc         nvcc's path ("" when none)
#   cuda_top          the toolkit folder above nvcc's bin/
#   cuda_wheel_only   1 when that toolkit is a wheel tree (no lib64, no targets/)
#   cuda_wheel_libs   the wheels' lib folders, colon-separated
#   cuda_wheel_incs   the wheels' include folders, colon-separated
#   cuda_cmake_args   array: CMake arguments for tests/cuda/standalone
#   cuda_lib_path     folders to put on LD_LIBRARY_PATH to run what was built
# and exports LIBRARY_PATH for a wheel-only toolkit.
cuda_toolchain() {
  cuda_nvcc=$(find_nvcc || true)
  cuda_top=""
  cuda_wheel_only=0
  cuda_wheel_libs=$(wheel_dirs lib)
  cuda_wheel_incs=$(wheel_dirs include)
  cuda_cmake_args=()
  cuda_lib_path=$cuda_wheel_libs
  local d
  for d in ${cuda_wheel_libs//:/ }; do
    [ -e "$d/libcudnn.so.9" ] && cuda_cmake_args+=("-DCUDNN_ROOT=$(dirname "$d")")
    [ -e "$d/libnccl.so.2" ] && cuda_cmake_args+=("-DNCCL_ROOT=$(dirname "$d")")
  done
  [ -n "$cuda_wheel_libs" ] && cuda_cmake_args+=("-DCMAKE_LIBRARY_PATH=${cuda_wheel_libs//:/;}")
  [ -n "$cuda_wheel_incs" ] && cuda_cmake_args+=("-DCMAKE_INCLUDE_PATH=${cuda_wheel_incs//:/;}")
  [ -n "$cuda_nvcc" ] || return 0
  cuda_top=$(cd "$(dirname "$(readlink -f "$cuda_nvcc")")/.." && pwd)
  cuda_cmake_args+=("-DCMAKE_CUDA_COMPILER=$cuda_nvcc")
  local libdir=""
  for d in "$cuda_top/lib64" "$cuda_top/targets/x86_64-linux/lib" "$cuda_top/lib"; do
    if [ -d "$d" ]; then libdir=$d; break; fi
  done
  [ -n "$libdir" ] && cuda_lib_path=$libdir${cuda_lib_path:+:$cuda_lib_path}
  if [ ! -d "$cuda_top/lib64" ] && [ ! -d "$cuda_top/targets" ] && [ -n "$libdir" ]; then
    cuda_wheel_only=1
    # nvcc's profile points its linker at targets/x86_64-linux/lib, which a
    # wheel lacks: give it the wheel's lib folder (libcudart_static.a).
    export LIBRARY_PATH=$libdir${LIBRARY_PATH:+:$LIBRARY_PATH}
    local cudart
    cudart=$(ls "$libdir"/libcudart.so.[0-9]* 2>/dev/null | sort -V | tail -1)
    [ -n "$cudart" ] && cuda_cmake_args+=("-DCUDA_CUDART=$cudart")
  fi
}

# cuda_configure BUILD_DIR [EXTRA CMAKE ARGS...]: configures tests/cuda/standalone.
cuda_configure() {
  local build=$1 src
  shift
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/cuda/standalone
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${cuda_cmake_args[@]}" "$@"
}

# cuda_toolchain_report: one line per finding.
cuda_toolchain_report() {
  echo "nvcc: ${cuda_nvcc:-none found}${cuda_nvcc:+ ($("$cuda_nvcc" --version | grep -o 'release [0-9.]*'))}"
  echo "toolkit: ${cuda_top:-none}$([ "$cuda_wheel_only" = 1 ] && echo " (wheel-only: LIBRARY_PATH=${LIBRARY_PATH%%:*})")"
  echo "wheel library folders: ${cuda_wheel_libs:-none}"
  echo "cmake arguments: ${cuda_cmake_args[*]}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  case "${1:-}" in
    "") cuda_toolchain; cuda_toolchain_report ;;
    --configure)
      [ -n "${2:-}" ] || { echo "cuda-toolchain.sh: --configure needs a build folder" >&2; exit 2; }
      cuda_toolchain
      cuda_toolchain_report
      [ -n "$cuda_nvcc" ] || { echo "cuda-toolchain.sh: no nvcc found" >&2; exit 1; }
      cuda_configure "$2"
      ;;
    *) echo "cuda-toolchain.sh: unknown argument '$1' (use --configure BUILD_DIR or nothing)" >&2; exit 2 ;;
  esac
fi
