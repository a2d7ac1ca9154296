#!/usr/bin/env bash
# Installs, with apt-get, whatever faultline needs to build and test that this
# Debian 12 machine does not have yet. Safe to run again: it installs only
# what is missing, and skips apt-get entirely when nothing is.
#   deploy/install-deps.sh          build + run dependencies
#   deploy/install-deps.sh --test   also what the test suite uses (kcat, journald tools, ...)
#   deploy/install-deps.sh --list [--test]   print those packages, install nothing
#                                   (tests/deploy/script_commands.py checks that
#                                   every command our scripts run comes from one)
set -euo pipefail

list_only=0
test_deps=0
for arg in "$@"; do
  case "$arg" in
    --list) list_only=1 ;;
    --test) test_deps=1 ;;
    *) echo "install-deps.sh: unknown option '$arg' (--test, --list)" >&2; exit 2 ;;
  esac
done

# One at a time: CI runs clang-tidy (which installs its tools) beside the
# test suite (which installs its own), and two apt-gets at once fail on
# dpkg's lock. flock (util-linux) is on every Debian machine.
exec 9>"${TMPDIR:-/tmp}/faultline-install-deps.lock"
flock 9

packages=(
  build-essential cmake pkg-config
  libre2-dev libyaml-cpp-dev nlohmann-json3-dev libvectorscan-dev
  librdkafka-dev libsystemd-dev libcurl4-openssl-dev libssl-dev zlib1g-dev
  libcpp-httplib-dev libsimdjson-dev
)
if ((test_deps)); then
  packages+=(
    doctest-dev kcat systemd-journal-remote systemd ripgrep grep python3 openssl curl
    libbenchmark-dev clang clang-format clang-tidy libclang-rt-14-dev procps
    python3-yaml jq time prometheus strace
    python3-jsonschema git valgrind
    slurmctld slurmd slurm-client munge
  )
fi

if ((list_only)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: everything is installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
