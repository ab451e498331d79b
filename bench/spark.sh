#!/usr/bin/env bash
# A 64 MiB float allreduce among 4 ranks: the 4 tasks of a Spark barrier stage (local[4]) against 4 threads
# with a communicator each and no Spark; prints both and the ratio (target >= 0.8).
#   bench/spark.sh [bytes] [iterations] [rounds] [engine]      defaults: 67108864 10 5 auto
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not on PATH"
cp_file="$root/spark/target/bench-classpath.txt"
# Test classes and the test class path (Spark is provided: on it only there); nothing is installed.
(cd "$root" && mvn -B -q -pl spark -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$cp_file" -Dmaven.javadoc.skip=true) || die "build failed"
# In a reactor build the zcnet modules resolve to their target/classes; build-classpath lists those too.
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xmx3g \
  -Dlog4j2.configurationFile="$root/spark/src/test/resources/log4j2-test.properties" \
  -cp "$root/spark/target/test-classes:$root/spark/target/classes:$(cat "$cp_file")" \
  io.zcnet.spark.bench.SparkAllreduceBench "$@"
