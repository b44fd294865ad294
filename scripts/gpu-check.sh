#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU and driver. It runs every step it can, each under its own timeout,
# and starts no step once GPU_CHECK_SECONDS (default 280) have passed, so it ends within 5 minutes:
#   1. device and libraries: the GPUs `nvidia-smi -L` lists (MIG instances are listed, not counted as GPUs);
#      NCCL (WEFT_NCCL_LIB, libnccl.so.2 on the loader path, or pip's nvidia-nccl wheel in site-packages);
#      cuBLAS (on the loader path, under $CUDA_HOME or /usr/local/cuda*, or pip's nvidia-cublas wheel); mpirun.
#      The library directories found are added to LD_LIBRARY_PATH for every later step;
#   2. build (mvn -q -DskipTests package), or, with WEFT_GPU_BUNDLE=DIR, the jars and JDK that scripts/gpu-bundle.sh
#      prepared elsewhere (for a GPU machine with no Maven, no JDK 25 and no network);
#   3. probe: the CUDA devices a JVM sees (dev.weft.backends.cli.GpuProbe);
#   4. the tests tagged "gpu": GPU executor vs CPU executor, cuBLAS and the PTX GEMM vs a host product, NCCL;
#   5. device benchmark: the PTX target, fused elementwise GB/s vs a device-to-device copy, the PTX GEMM vs cuBLAS;
#   6. host synchronisations per Weft.fori step (printed by the device benchmark; a failure unless 0);
#   7. the Pi (allreduce), DataParallel, Mlp (gradients from Weft.grad and Weft.vjp) and HeatGlobal (a sharded
#      global program) examples on the GPU target, which need NCCL: one rank per GPU (under Open MPI's mpirun when
#      installed, else fake ranks in one JVM), one rank with MIG;
#   8. NCCL allreduce bus bandwidth, with two GPUs or more.
# Every step that does not run says why on a "skipped:" line, repeated in the summary at the end.
#
# Exit status: 0  every step that ran passed (steps may have been skipped: see the summary);
#              1  a step failed or timed out;
#              77 no usable CUDA device: the build ran and passed, every device step was skipped.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
BUDGET="${GPU_CHECK_SECONDS:-280}"
NO_DEVICE_STATUS=77

skipped=()
failed=()
section() { printf '\n== %s\n' "$*"; }
skip() { skipped+=("$*"); echo "skipped: $*"; }

# run_step NAME SECONDS COMMAND...: runs COMMAND for at most SECONDS (less if the budget ends sooner) and records
# a failure or a timeout under NAME. Returns COMMAND's status, or 125 when out of time (COMMAND not run).
run_step() {
  local name="$1" limit="$2"; shift 2
  local left=$((BUDGET - SECONDS))
  if ((left < 15)); then
    skip "$name: out of time (GPU_CHECK_SECONDS=$BUDGET)"
    return 125
  fi
  ((limit > left)) && limit=$left
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  if ((rc == 124 || rc == 137)); then
    failed+=("$name: timed out after $limit s")
    echo "$name: timed out after $limit s"
  elif ((rc != 0)); then
    failed+=("$name: exit status $rc")
    echo "$name: failed (exit status $rc)"
  fi
  return "$rc"
}

add_lib_dir() {
  case ":${LD_LIBRARY_PATH:-}:" in
    *":$1:"*) ;;
    *) export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
  esac
}

# The path of library NAME as the dynamic loader would find it (LD_LIBRARY_PATH, then ldconfig's cache).
on_loader_path() {
  local dir dirs ldconfig
  IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
  for dir in "${dirs[@]}"; do
    [[ -n "$dir" && -e "$dir/$1" ]] && { echo "$dir/$1"; return 0; }
  done
  ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
  "$ldconfig" -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; found = 1; exit } END { exit !found }'
}

# Python's site-packages directories, where pip puts NVIDIA's wheels (nvidia/<lib>/lib).
site_dirs() {
  command -v python3 >/dev/null 2>&1 || return 0
  python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' \
    2>/dev/null | sort -u
}

section "device"
gpus=0
mig=0
if command -v nvidia-smi >/dev/null 2>&1; then
  list="$(timeout 30 nvidia-smi -L 2>&1)"
  echo "$list"
  gpus=$(grep -c '^GPU ' <<<"$list")
  mig=$(grep -c '^ *MIG ' <<<"$list")
  echo "GPUs: $gpus; MIG instances: $mig"
else
  echo "nvidia-smi not found: the probe below counts the devices"
fi

section "libraries"
nccl="${WEFT_NCCL_LIB:-}"
if [[ -z "$nccl" ]]; then
  nccl="$(on_loader_path libnccl.so.2)"
fi
if [[ -z "$nccl" ]]; then
  while read -r dir; do
    if [[ -e "$dir/nvidia/nccl/lib/libnccl.so.2" ]]; then
      nccl="$dir/nvidia/nccl/lib/libnccl.so.2"
      break
    fi
  done < <(site_dirs)
fi
if [[ -n "$nccl" ]]; then
  export WEFT_NCCL_LIB="$nccl"
  [[ "$nccl" == */* ]] && add_lib_dir "$(dirname "$nccl")"
  echo "NCCL: $nccl"
else
  echo "NCCL: not found (not on the loader path, WEFT_NCCL_LIB unset, no nvidia-nccl wheel)"
fi

cublas=""
for v in 13 12 11; do
  cublas="$(on_loader_path "libcublas.so.$v")" && break
done
if [[ -z "$cublas" ]]; then
  candidates=("${CUDA_HOME:-/nonexistent}/lib64" "${CUDA_HOME:-/nonexistent}/targets/x86_64-linux/lib"
    /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64
    /usr/local/cuda-*/targets/x86_64-linux/lib)
  while read -r dir; do candidates+=("$dir/nvidia/cublas/lib"); done < <(site_dirs)
  for dir in "${candidates[@]}"; do
    for v in 13 12 11; do
      if [[ -e "$dir/libcublas.so.$v" ]]; then
        cublas="$dir/libcublas.so.$v"
        add_lib_dir "$dir"
        break 2
      fi
    done
  done
fi
echo "cuBLAS: ${cublas:-not found (matmuls will run the PTX GEMM kernel)}"

mpi=""
if command -v mpirun >/dev/null 2>&1 && mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  mpi="$(command -v mpirun)"
  echo "mpirun: $mpi (Open MPI)"
else
  echo "mpirun: no Open MPI mpirun; several ranks run as fake ranks in one JVM"
fi
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"

section "build"
BUNDLE="${WEFT_GPU_BUNDLE:-}"
if [[ -n "$BUNDLE" ]]; then
  BUNDLE="$(cd "$BUNDLE" && pwd)" || exit 1
  echo "prebuilt bundle $BUNDLE of commit $(cat "$BUNDLE/commit")"
  if ! java -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
    mkdir -p /tmp/weft-jdk && tar -C /tmp/weft-jdk -xzf "$BUNDLE/jdk.tgz" || exit 1
    export JAVA_HOME=/tmp/weft-jdk/jdk
    export PATH="$JAVA_HOME/bin:$PATH"
  fi
  java -version 2>&1 | head -n1
  BUNDLE_CP="$(ls "$BUNDLE"/lib/*.jar | grep -v -- '-tests.jar$' | tr '\n' ':')"
  AGENT="$(ls "$BUNDLE"/lib/weft-tracer-*.jar | head -n1)"
  BACKENDS_CP="$BUNDLE_CP"
  EXAMPLES_CP="$BUNDLE_CP"
else
  if ! run_step build 170 mvn -B -q --no-transfer-progress -DskipTests package dependency:build-classpath \
      -Dmdep.outputFile=target/weft.classpath -Dmdep.includeScope=runtime; then
    echo "the build failed or did not run: nothing else can run"
    exit 1
  fi
  AGENT="$(ls tracer/target/weft-tracer-*.jar | head -n1)"
  BACKENDS_CP="$(cat backends/target/weft.classpath):$ROOT/backends/target/classes"
  EXAMPLES_CP="$(cat examples/target/weft.classpath):$ROOT/examples/target/classes:$ROOT/backends/target/classes"
fi
JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Dnet.bytebuddy.safe=true)
JAVA=(java "${JVM_FLAGS[@]}" -javaagent:"$AGENT")

section "probe"
probe="$(timeout --kill-after=10 60 "${JAVA[@]}" -cp "$BACKENDS_CP" dev.weft.backends.cli.GpuProbe 2>&1)"
probe_rc=$?
echo "$probe"
devices=$(grep -c '^cuda device ' <<<"$probe")
if ((probe_rc != 0)); then
  [[ $probe_rc != 3 ]] && failed+=("probe: exit status $probe_rc")
  for step in "GPU tests" "device benchmark" "host synchronisations per fori step" "examples on the GPU target" \
      "NCCL allreduce bandwidth"; do
    skip "$step: no usable CUDA device"
  done
else
  ((gpus == 0)) && gpus=$devices
  ranks=$((gpus < devices ? gpus : devices))
  if ((mig > 0 && ranks > 1)); then
    echo "MIG instances are enabled: CUDA shows this process one of them, so one rank"
    ranks=1
  fi

  section "GPU tests (tag gpu)"
  if [[ -n "$BUNDLE" ]]; then
    run_step "GPU tests" 150 java "${JVM_FLAGS[@]}" -XX:+EnableDynamicAgentLoading -Xss8m \
      -jar "$BUNDLE/junit-console.jar" execute --disable-banner --details=tree --include-tag gpu \
      --class-path "$BUNDLE_CP$BUNDLE/lib/weft-backends-tests.jar" --scan-class-path "$BUNDLE/lib/weft-backends-tests.jar"
  else
    marker="$(mktemp)"
    run_step "GPU tests" 120 mvn -B -q --no-transfer-progress test -pl backends -am -Dgroups=gpu \
      -Dsurefire.failIfNoSpecifiedTests=false
    find backends/target/surefire-reports -name '*.txt' -newer "$marker" -exec grep -h "Tests run" {} + 2>/dev/null
    rm -f "$marker"
  fi

  section "device benchmark"
  bench_out="$(mktemp)"
  # Not piped into tee: run_step must run in this shell to record a failure.
  run_step "device benchmark" 90 "${JAVA[@]}" -cp "$BACKENDS_CP" dev.weft.backends.gpu.exec.GpuBenchmark \
    >"$bench_out" 2>&1
  cat "$bench_out"

  # GpuBenchmark runs a Weft.fori through GpuExecutable and prints its host synchronisations per step (0 expected).
  section "host synchronisations per fori step"
  fori_line="$(grep '^host synchronisations per fori step: ' "$bench_out")"
  rm -f "$bench_out"
  if [[ -z "$fori_line" ]]; then
    skip "host synchronisations per fori step: the device benchmark did not print it"
  else
    echo "$fori_line"
    if [[ "$fori_line" != "host synchronisations per fori step: 0.00 "* ]]; then
      failed+=("host synchronisations per fori step: not 0")
    fi
  fi

  # launch NAME RANKS CLASS [ARGS...]: CLASS's main on the GPU target on RANKS ranks, one GPU each.
  launch() {
    local name="$1" n="$2"; shift 2
    local flags=(-Dweft.target=gpu -cp "$EXAMPLES_CP")
    if ((n > 1)) && [[ -n "$mpi" ]]; then
      local mflags=(--bind-to none -x LD_LIBRARY_PATH)
      [[ -n "${WEFT_NCCL_LIB:-}" ]] && mflags+=(-x WEFT_NCCL_LIB)
      [[ -n "${WEFT_DEBUG:-}" ]] && mflags+=(-x WEFT_DEBUG)
      [[ $(id -u) == 0 ]] && mflags+=(--allow-run-as-root)
      ((n > $(nproc))) && mflags+=(--oversubscribe)
      echo "$name on $n ranks (mpirun, one GPU each):"
      run_step "$name" 60 mpirun "${mflags[@]}" -np "$n" "${JAVA[@]}" "${flags[@]}" "$@"
    elif ((n > 1)); then
      echo "$name on $n fake ranks in one JVM (one GPU each):"
      run_step "$name" 60 "${JAVA[@]}" "${flags[@]}" dev.weft.backends.cli.FakeRanks "$n" "$@"
    else
      echo "$name on 1 rank:"
      run_step "$name" 60 "${JAVA[@]}" "${flags[@]}" "$@"
    fi
  }

  section "examples on the GPU target"
  if [[ -z "$nccl" ]]; then
    skip "examples Pi, DataParallel, Mlp and HeatGlobal: they communicate, and NCCL was not found"
  else
    for example in Pi DataParallel Mlp HeatGlobal; do
      WEFT_DEBUG=1 launch "$example" "$ranks" "dev.weft.examples.$example"
    done
  fi

  section "NCCL allreduce bandwidth"
  if [[ -z "$nccl" ]]; then
    skip "NCCL allreduce bandwidth: NCCL was not found"
  elif ((ranks < 2)); then
    skip "NCCL allreduce bandwidth: needs 2 GPUs or more (found $ranks usable)"
  else
    launch "NCCL allreduce bandwidth" "$ranks" dev.weft.backends.gpu.exec.GpuBenchmark allreduce
  fi
fi

section "summary ($SECONDS s)"
for s in "${skipped[@]}"; do echo "skipped: $s"; done
for f in "${failed[@]}"; do echo "FAILED: $f"; done
if ((${#failed[@]} > 0)); then
  exit 1
fi
if ((probe_rc != 0)); then
  echo "no usable CUDA device: exit status $NO_DEVICE_STATUS (nothing on a GPU was checked)"
  exit "$NO_DEVICE_STATUS"
fi
echo "every step that ran passed"
