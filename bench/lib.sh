# Sourced by the bench/ scripts: finds the JDK exactly as ./zcnet does and builds the benchmark jar.
# Defines: root, bench_jar, JAVA_HOME (exported), build_benchmarks, run_jmh, require_package, die.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench_jar="$root/jmh/target/benchmarks.jar"

die() { echo "bench: $*" >&2; exit 1; }

# The launcher's own finder, so there is one place that knows where JDKs live.
JAVA_HOME="$("$root/zcnet" java-home)" || exit 1
export JAVA_HOME
export MAVEN_OPTS="${MAVEN_OPTS:---sun-misc-unsafe-memory-access=allow}"

# Builds jmh/target/benchmarks.jar (and what it depends on) when a source or pom is newer than it.
build_benchmarks() {
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not on PATH"
  if [ -f "$bench_jar" ] && [ -z "$(find "$root" -path "$root/*/target" -prune -o \
      \( -name '*.java' -o -name 'pom.xml' \) -type f -newer "$bench_jar" -print -quit)" ]; then
    return 0
  fi
  echo "bench: building $bench_jar with $JAVA_HOME ..." >&2
  (cd "$root" && mvn -B -q -Dmaven.test.skip=true -pl jmh -am package) || die "build failed (run: cd $root && mvn -pl jmh -am package -DskipTests)"
}

# Runs the benchmark jar with the given JMH arguments.
run_jmh() {
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$bench_jar" "$@"
}

# require_package COMMAND PACKAGE: installs the Debian PACKAGE when COMMAND is missing and this is root with
# apt-get (updating the package lists only if the first try fails), else stops with what to do.
require_package() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bench: installing $2 (apt-get install -y $2) ..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >&2 \
      || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >&2; } \
      || die "could not install $2"
    command -v "$1" >/dev/null 2>&1 || die "$2 is installed but $1 is still not on PATH"
  else
    die "$1 is missing: install it (Debian/Ubuntu: sudo apt-get install $2) and run again"
  fi
}
