#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU and driver (finishes in a few minutes):
#   1. builds everything (mvn -q -DskipTests package);
#   2. runs the tests tagged "gpu": GPU executor vs CPU executor on the same programs, the cuBLAS matmul and the
#      PTX GEMM kernel vs a host product, and NCCL collectives (built-in and custom reduce ops, nonblocking
#      point-to-point) vs the CPU executor on one rank and on one fake rank per device;
#   3. runs the device benchmark: fused elementwise GB/s vs cuMemcpyDtoD of the same bytes, the PTX GEMM vs
#      cuBLAS when cuBLAS loads;
#   4. runs the Pi (NCCL allreduce) and DataParallel (matmul + allreduce) examples on the GPU target with
#      WEFT_DEBUG=1, which says whether each matmul ran on cuBLAS or the PTX GEMM: one process per GPU under
#      mpirun when there are several GPUs and Open MPI is installed, else one process.
# Whatever is not available (NCCL, cuBLAS, a second GPU, mpirun) is said so in the output.
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
JAVA=(java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Dnet.bytebuddy.safe=true -javaagent:"$AGENT" -cp "$CP")

section "GPU tests (tag gpu)"
status=0
mvn -q test -pl backends -am -Dgroups=gpu -Dsurefire.failIfNoSpecifiedTests=false || status=$?
grep -h "Tests run" backends/target/surefire-reports/{*Gpu*,*GemmImplementations*}.txt 2>/dev/null || true
if grep -qs "Skipped: [1-9]" backends/target/surefire-reports/*GpuParityTest.txt; then
  echo "GPU tests were skipped: no usable CUDA device in this JVM"
fi

section "benchmark"
timeout 180 "${JAVA[@]}" dev.weft.backends.gpu.exec.GpuBenchmark || { echo "benchmark failed"; status=1; }

section "examples on the GPU target"
EXAMPLES_CP="$(cat examples/target/weft.classpath):$ROOT/examples/target/classes"
GPU_JAVA=(java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Dnet.bytebuddy.safe=true -javaagent:"$AGENT" -Dweft.target=gpu
  -cp "$EXAMPLES_CP")
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
for example in Pi DataParallel; do
  if command -v mpirun >/dev/null && (( gpus > 1 )); then
    echo "$example on $gpus ranks (mpirun, one GPU each):"
    WEFT_DEBUG=1 timeout 180 mpirun --allow-run-as-root -x WEFT_DEBUG -np "$gpus" "${GPU_JAVA[@]}" \
      "dev.weft.examples.$example" || { echo "$example failed"; status=1; }
  else
    echo "$example on 1 rank:"
    WEFT_DEBUG=1 timeout 180 "${GPU_JAVA[@]}" "dev.weft.examples.$example" || { echo "$example failed"; status=1; }
  fi
done
exit "$status"
