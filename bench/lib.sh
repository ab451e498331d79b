# Sourced by the bench/ scripts: finds the JDK exactly as ./zcnet does and builds the benchmark jar.
# Defines: root, bench_jar, JAVA_HOME (exported), build_benchmarks, run_jmh, require_package, tbf_shape, die,
# start_qp_server, start_qp_hold.

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

package_present() { if [[ "$1" == /* ]]; then [ -e "$1" ]; else command -v "$1" >/dev/null 2>&1; fi; }

# require_package COMMAND PACKAGE: installs the Debian PACKAGE when COMMAND is missing and this is root with
# apt-get (updating the package lists only if the first try fails), else stops with what to do. COMMAND may
# be an absolute path instead (a header, a library): then it is that file that must exist.
require_package() {
  package_present "$1" && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bench: installing $2 (apt-get install -y $2) ..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >&2 \
      || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >&2; } \
      || die "could not install $2"
    package_present "$1" || die "$2 is installed but $1 is still not there"
  else
    die "$1 is missing: install it (Debian/Ubuntu: sudo apt-get install $2) and run again"
  fi
}

# tbf_shape NS DEV RATE_MBIT: shapes DEV's egress in namespace NS to RATE_MBIT with tc tbf: burst the larger
# of 64 KiB and 4 ms of the rate (a whole GSO packet that veth hands over at once, and what tbf's watchdog
# may sleep, one jiffy at HZ=250: a smaller bucket would hold the link below the rate), latency 50 ms (the
# queue). tbf counts Ethernet and IP/TCP headers, so TCP goodput peaks near 95% of the rate. Prints the
# settings.
tbf_shape() {
  local burst=$(($3 * 1000000 / 8 / 250))
  [ "$burst" -ge 65536 ] || burst=65536
  tc -n "$1" qdisc replace dev "$2" root tbf rate "${3}mbit" burst "$burst" latency 50ms
  echo "tbf rate ${3}mbit burst $burst latency 50ms"
}

# start_qp_hold PORT N HOLD LOG: starts 'zcnet qp-load' opening N queue pairs to 127.0.0.1:PORT, driving them for a second
# and holding them open and idle for HOLD seconds (its output to LOG, JAVA_OPTS as set), and waits until they are held;
# sets load_pid (the launcher's) and load_jvm (its JVM's).
start_qp_hold() {
  local port="$1" n="$2" hold="$3" log="$4"
  "$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$n" --seconds 1 --hold "$hold" >"$log" 2>&1 &
  load_pid=$!
  for _ in $(seq 1 600); do grep -q "open and idle" "$log" 2>/dev/null && break; sleep 0.2; done
  grep -q "open and idle" "$log" || { cat "$log" >&2; die "qp-load did not get its queue pairs open"; }
  load_jvm="$(pgrep -f "qp-load --connect 127.0.0.1:$port" | tail -n 1)"
}

# start_qp_server PORT LOG [JVM options...]: starts 'zcnet qp-server' on 127.0.0.1:PORT (its output to LOG, a line of
# counts every 5 s; QP_SERVER_ARGS, if set, adds options of its own) and waits until it listens; sets server_pid (the
# launcher's) and server_jvm (its JVM's).
server_pid=""
start_qp_server() {
  local port="$1" log="$2"
  shift 2
  JAVA_OPTS="${JAVA_OPTS:-} $*" "$root/zcnet" qp-server --listen "127.0.0.1:$port" --report-seconds 5 ${QP_SERVER_ARGS:-} >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done # up to 30 s: a JVM starting on a loaded machine
  grep -q "listening on" "$log" || { cat "$log" >&2; die "qp-server did not start"; }
  server_jvm="$(pgrep -f "qp-server --listen 127.0.0.1:$port" | tail -n 1)"
}
