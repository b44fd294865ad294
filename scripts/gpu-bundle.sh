#!/usr/bin/env bash
# Builds .gpu-bundle/: what scripts/gpu-check.sh needs on a GPU machine that has no JDK 25, no Maven and no network
# (the device machines lent to this project): a jlink'ed JDK 25 (jdk.tgz), the modules' jars, their run-time and
# test dependencies, backends' test classes and JUnit's console launcher. About 45 MiB. There, run
#   WEFT_GPU_BUNDLE=.gpu-bundle scripts/gpu-check.sh
# and the check skips its Maven build and uses these. Needs this checkout built once online (Maven fetches the
# console launcher here).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
OUT="$ROOT/.gpu-bundle"
JUNIT_CONSOLE=org.junit.platform:junit-platform-console-standalone:1.14.1
MODULES=java.base,java.instrument,jdk.attach,jdk.incubator.vector,jdk.unsupported,java.management,jdk.jfr,java.logging,jdk.management,jdk.zipfs,java.sql

mvn -B -q --no-transfer-progress -DskipTests package dependency:build-classpath \
  -Dmdep.outputFile=target/weft.test.classpath -Dmdep.includeScope=test
mvn -B -q --no-transfer-progress dependency:get -Dartifact="$JUNIT_CONSOLE"

rm -rf "$OUT"
mkdir -p "$OUT/lib"
# Every jar on the test class paths of backends and examples (module jars and dependencies), by file name.
for module in backends examples; do
  tr ":" "\n" <"$module/target/weft.test.classpath"; echo
  echo "$ROOT/$module/target/weft-$module-0.1.0-SNAPSHOT.jar"
done | sort -u | while read -r jar; do cp "$jar" "$OUT/lib/"; done
jar --create --file "$OUT/lib/weft-backends-tests.jar" -C backends/target/test-classes .
IFS=: read -r group artifact version <<<"$JUNIT_CONSOLE"
cp "$HOME/.m2/repository/${group//.//}/$artifact/$version/$artifact-$version.jar" "$OUT/junit-console.jar"
git rev-parse HEAD >"$OUT/commit"

jdk="$(mktemp -d)"
jlink --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages --compress zip-9 \
  --output "$jdk/jdk" 2>&1 | grep -v 'incubator modules' || true
tar -C "$jdk" -czf "$OUT/jdk.tgz" jdk
rm -rf "$jdk"
du -sh "$OUT"
