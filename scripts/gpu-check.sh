#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU and driver (finishes in a few minutes):
#   1. builds everything (mvn -q -DskipTests package);
#   2. runs the tests tagged "gpu" (GPU executor vs CPU executor on the same programs);
#   3. runs the device benchmark: fused elementwise GB/s vs cuMemcpyDtoD of the same bytes, the PTX GEMM vs
#      cuBLAS (when a cuBLAS binding is on the class path), and NCCL allreduce bus bandwidth (when the NCCL binding
#      provides its benchmark entry point). Whatever is not available is said so in the output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"

section() { printf '\n== %s\n' "$*"; }

section "device"
if command -v nvidia-smi >/dev/null; then nvidia-smi -L; else echo "nvidia-smi not found"; fi

section "build"
mvn -q -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/weft.classpath \
  -Dmdep.includeScope=runtime
CP="$(cat backends/target/weft.classpath):$ROOT/backends/target/classes"
AGENT="$(ls tracer/target/weft-tracer-*.jar | head -n1)"
JAVA=(java --enable-native-access=ALL-UNNAMED -Dnet.bytebuddy.safe=true -javaagent:"$AGENT" -cp "$CP")

section "GPU tests (tag gpu)"
status=0
mvn -q test -pl backends -am -Dgroups=gpu -Dsurefire.failIfNoSpecifiedTests=false || status=$?
grep -h "Tests run" backends/target/surefire-reports/*Gpu*.txt 2>/dev/null || true
if grep -qs "Skipped: [1-9]" backends/target/surefire-reports/*GpuParityTest.txt; then
  echo "GPU tests were skipped: no usable CUDA device in this JVM"
fi

section "benchmark"
timeout 180 "${JAVA[@]}" dev.weft.backends.gpu.exec.GpuBenchmark || { echo "benchmark failed"; status=1; }

section "NCCL allreduce"
if [[ -f backends/target/classes/dev/weft/backends/gpu/nccl/NcclBenchmark.class ]]; then
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if command -v mpirun >/dev/null && (( gpus > 1 )); then
    timeout 120 mpirun --allow-run-as-root -np "$gpus" "${JAVA[@]}" dev.weft.backends.gpu.nccl.NcclBenchmark \
      || { echo "NCCL benchmark failed"; status=1; }
  else
    timeout 120 "${JAVA[@]}" dev.weft.backends.gpu.nccl.NcclBenchmark || { echo "NCCL benchmark failed"; status=1; }
  fi
else
  echo "not available in this build: no dev.weft.backends.gpu.nccl.NcclBenchmark entry point"
fi
exit "$status"
