#!/usr/bin/env bash
# tools/gpu-check without a GPU: its bundle and its device run in a simulated
# device machine (tools/gpucheck/simulate-device: no OpenBLAS, Boost or
# Catch2, CUDA only as pip wheels), one scenario per call:
#
#   gpucheck_test.sh SCENARIO SOURCE_DIR BUILD_DIR SCRATCH_DIR
#
#   pack          packs BUILD_DIR into SCRATCH_DIR/.device (a copy of tools/, the
#                 goldens and the Keras models there stands for the checkout);
#                 OpenBLAS, libgfortran, libquadmath in it
#   no-gpu        no driver: GPU stages SKIP, the bundle's CPU epoch passes, exit 77
#   no-wheels     no driver and no wheels: the CUDA libraries FAIL, named, while
#                 the GPU stages SKIP
#   unusable-gpu  the fake driver shows an H200 but the wheels are gone: the probe,
#                 the GPU tests and the benchmark FAIL naming the missing library
#   killed        SIGKILL in the middle: summary.txt holds the lines so far
#   budget        a 12 s budget: stages that do not fit are reported, not run,
#                 and the run ends inside it
#   toolchain     a wheel-only CUDA toolkit: nvcc found in nvidia/cu13/bin and
#                 tests/cuda/standalone configures (LIBRARY_PATH, CUDA_CUDART)
#
# Exit: 0 pass, 1 fail, 77 the simulation or the data set is not available here.
set -uo pipefail

[ $# = 4 ] || { echo "usage: $0 pack|no-gpu|no-wheels|unusable-gpu|killed|budget|toolchain SOURCE_DIR BUILD_DIR SCRATCH_DIR" >&2; exit 2; }
scenario=$1
src=$2
build=$3
scratch=$4
sim=$src/tools/gpucheck/simulate-device
data=/usr/share/datasets/fashion-mnist
failures=0

check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; failures=$((failures + 1)); fi
}
has() { grep -qE -- "$1" "$2"; }
lacks() { ! grep -qE -- "$1" "$2"; }
done_() {
  echo "SUMMARY: $([ $failures = 0 ] && echo PASS || echo FAIL): scenario $scenario, $failures failure(s)"
  [ $failures = 0 ]
  exit $?
}
# The preconditions of a device run: a simulation and a pack with data.
need_simulation() {
  local why
  if ! why=$("$sim" -- true 2>&1); then
    echo "SKIP: cannot simulate the device machine here: $why"
    exit 77
  fi
  if ! ls "$scratch/.device/data/"*-ubyte.gz >/dev/null 2>&1; then
    echo "SKIP: no data set in $scratch/.device/data ($data is missing: apt-get install dataset-fashion-mnist)"
    exit 77
  fi
}
# device_run OUT [SIMULATE-DEVICE OPTIONS] -- [GPU-CHECK OPTIONS]: sets rc, elapsed.
device_run() {
  local out=$1 opts=()
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  rm -rf "$out"
  local t=$(date +%s)
  "$sim" "${opts[@]}" -- bash "$scratch/tools/gpu-check" "$out" "$@" >"$out.log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - t ))
  echo "---- summary.txt (exit $rc, $elapsed s)"
  cat "$out/summary.txt"
}

case "$scenario" in
  pack)
    ls "$data"/*-ubyte.gz >/dev/null 2>&1 || { echo "SKIP: no data set in $data (apt-get install dataset-fashion-mnist)"; exit 77; }
    rm -rf "$scratch"
    mkdir -p "$scratch"
    cp -r "$src/tools" "$scratch/tools"
    mkdir -p "$scratch/tests/goldens" "$scratch/tests/data"  # the goldens and models travel with the tree
    cp -r "$src/tests/goldens/tf" "$scratch/tests/goldens/tf"
    cp "$src"/tests/data/keras_*.json "$src"/tests/data/keras_*.safetensors "$scratch/tests/data/"
    bash "$scratch/tools/gpu-check" --pack --from "$build" >"$scratch/pack.log" 2>&1
    rc=$?
    cat "$scratch/pack.log"
    check "pack exits 0" [ $rc = 0 ]
    tar -xzOf "$scratch/.device/bundle.tar.gz" bundle/MANIFEST >"$scratch/MANIFEST" 2>/dev/null
    for f in bin/axon-train bin/cuda_probe bin/axon-golden-check bin/test_goldens_keras_models \
             lib/axon/plugins/libaxon-plugin-cpu.so lib/libopenblas.so.0 lib/libgfortran.so.5 lib/libquadmath.so.0; do
      check "the bundle holds $f" has " \./$f\$" "$scratch/MANIFEST"
    done
    check "the MANIFEST states the minimum glibc" has "^needs glibc >= 2\.[0-9]+" "$scratch/MANIFEST"
    check "no xz: the bundle is a gzip tar" [ -f "$scratch/.device/bundle.tar.gz" ]
    check "the carried size is printed" has "carried: .* of 64 MiB" "$scratch/pack.log"
    check "the data set is copied" [ "$(ls "$scratch/.device/data" | wc -l)" = 4 ]
    ;;
  no-gpu)
    need_simulation
    device_run "$scratch/no-gpu" -- --no-build --budget 90
    s=$scratch/no-gpu/summary.txt
    check "exit 77 (no GPU, nothing failed)" [ $rc = 77 ]
    check "the environment line names the wheels" has "INFO  environment: .*wheel library folders: cu13,cudnn,nccl" "$s"
    check "the probe skips: no driver" has "SKIP  GPU probe: no CUDA device: CUDA driver not found" "$s"
    for t in "GPU test cuda_kernels" "GPU test cuda_memory reserve" "GPU test cuda_collectives" "GPU test goldens" \
             "GPU test Keras models" \
             "benchmark FP32" "benchmark TF32" "trainer GPU epoch" "trainer CPU vs GPU"; do
      check "$t: SKIP" has "SKIP  $t" "$s"
    done
    check "the bundle's OpenBLAS is the one loaded" has "blas=OpenBLAS" "$s"
    check "the CPU epoch runs from the bundle" has "PASS  trainer CPU epoch .*Trained 1 epoch on /device:CPU:0" "$s"
    check "the CUDA libraries come from the wheels" has "PASS  CUDA libraries: .*libcudnn\.so\.9 /mnt/axon-sim/site/nvidia/cudnn/lib/" "$s"
    check "nothing fails" lacks "FAIL" "$s"
    check "a result line" has "^result: SKIPPED \(no GPU\) after [0-9]+ s of 90 s" "$s"
    check "inside the budget" [ "$elapsed" -le 90 ]
    ;;
  no-wheels)
    need_simulation
    device_run "$scratch/no-wheels" --no-wheels -- --no-build --budget 90
    s=$scratch/no-wheels/summary.txt
    check "exit 1" [ $rc = 1 ]
    check "the missing libraries are named" has "FAIL  CUDA libraries: libaxon-cuda-kernels.so needs .*libcudnn\.so\.9.*: not found" "$s"
    check "the probe still says: no GPU" has "SKIP  GPU probe: no CUDA device: CUDA driver not found" "$s"
    check "a result line" has "^result: FAIL" "$s"
    ;;
  unusable-gpu)
    need_simulation
    device_run "$scratch/unusable" --no-wheels --fake-gpu "$build/tests/cuda/fake-driver" -- --no-build --budget 90
    s=$scratch/unusable/summary.txt
    missing="lib(cudnn\.so\.9|cublas\.so\.13|cublasLt\.so\.13|nccl\.so\.2): cannot open shared object file"
    check "exit 1" [ $rc = 1 ]
    check "the missing libraries are named" has "FAIL  CUDA libraries: libaxon-cuda-kernels.so needs .*libcublas\.so\.13" "$s"
    check "the probe fails naming the missing library" has "FAIL  GPU probe \(exit 1\): FAIL: unusable CUDA device: .*$missing" "$s"
    for t in "GPU test cuda_kernels" "GPU test cuda_memory reserve" "GPU test cuda_collectives" "GPU test goldens" \
             "GPU test Keras models" \
             "benchmark FP32"; do
      check "$t: FAIL naming the missing library" has "FAIL  $t \(exit 1\): .*$missing" "$s"
    done
    check "no GPU stage reads as skipped" lacks "SKIP  (GPU|benchmark|trainer)" "$s"
    check "the CPU epoch still runs" has "PASS  trainer CPU epoch" "$s"
    check "a result line" has "^result: FAIL" "$s"
    ;;
  killed)
    need_simulation
    out=$scratch/killed
    rm -rf "$out"
    setsid "$sim" -- bash "$scratch/tools/gpu-check" "$out" --no-build --budget 90 >"$out.log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do  # up to 60 s for the trainer stage to begin
      grep -q "axon-devices" "$out/summary.txt" 2>/dev/null && break
      sleep 0.1
    done
    # The whole session: timeout(1) puts its children in groups of their own.
    pkill -KILL -s "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "---- summary.txt after SIGKILL"
    cat "$out/summary.txt"
    check "summary.txt survives the kill" [ -s "$out/summary.txt" ]
    check "it holds the lines up to the kill" has "SKIP  GPU probe" "$out/summary.txt"
    check "killed before the end: no result line" lacks "^result:" "$out/summary.txt"
    ;;
  budget)
    need_simulation
    device_run "$scratch/budget" -- --no-build --budget 12
    s=$scratch/budget/summary.txt
    check "exit 1" [ $rc = 1 ]
    check "stages that do not fit are reported as not run" has "FAIL  .*not run: the (stage's share of the )?budget is spent" "$s"
    check "a result line" has "^result: FAIL after [0-9]+ s of 12 s" "$s"
    check "ends inside the budget (plus the kill grace)" [ "$elapsed" -le 17 ]
    ;;
  toolchain)
    why=$("$sim" -- true 2>&1) || { echo "SKIP: cannot simulate the device machine here: $why"; exit 77; }
    rm -rf "$scratch"
    mkdir -p "$scratch"
    "$sim" -- bash "$src/tools/gpucheck/cuda-toolchain.sh" --configure "$scratch/toolchain" >"$scratch/toolchain.log" 2>&1
    rc=$?
    cat "$scratch/toolchain.log"
    l=$scratch/toolchain.log
    check "configure exits 0" [ $rc = 0 ]
    check "nvcc comes from the wheel" has "^nvcc: .*/axon-sim/site/nvidia/cu13/bin/nvcc \(release [0-9.]+\)" "$l"
    check "the toolkit is recognised as wheel-only" has "^toolkit: .*/nvidia/cu13 \(wheel-only: LIBRARY_PATH=" "$l"
    check "CUDA_CUDART names the versioned cudart" has "-DCUDA_CUDART=.*/nvidia/cu13/lib/libcudart\.so\.13" "$l"
    check "CMake finds the toolkit, cuDNN and NCCL" has "axon: CUDA plugin: toolkit 13\.[0-9.]+, cuDNN [0-9.]+, NCCL" "$l"
    rm -rf "$scratch"
    ;;
  *) echo "unknown scenario '$scenario'" >&2; exit 2 ;;
esac
done_
