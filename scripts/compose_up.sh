#!/usr/bin/env bash
# Runs compose.yaml for real with podman, on a machine with no Docker engine and no registry (as root), after
# scripts/build_image.sh has built localhost/attnviz:latest and its base image:
#
#   1. podman-compose (PyPI, pinned) in a venv of its own ($TOOLS);
#   2. podman set up for this kind of host: deploy/podman/containers.conf (runc, explicit ulimits: crun refuses
#      hosts with v1 or hybrid cgroups, and the runtime's default limits can be above what the host allows) and
#      deploy/podman/storage.conf (vfs, where build_image.sh leaves the image);
#   3. an nginx image made here from the base image, deploy/nginx-debian/Containerfile (Debian's nginx 1.22), in
#      place of compose.yaml's nginx:1.27-alpine, which no registry here can give; NGINX_IMAGE=... uses another;
#   4. the three replicas started with the compose file's limits, each one's HEALTHCHECK (python serve.py --check)
#      run until it passes (podman 4.3 runs health checks only from systemd timers, and podman-compose ignores
#      depends_on's service_healthy before podman 4.6), then nginx, as depends_on says; then the page and
#      /_stcore/health through nginx at http://127.0.0.1:8080/.
#
#   scripts/compose_up.sh          # up; prints each step's time
#   scripts/compose_up.sh stats    # each container's peak memory, tasks and OOM kills so far (cgroup v1), its pid
#   scripts/compose_up.sh down     # stop and remove the stack
#
# Settings (environment): PROJECT (attnviz), TOOLS (/var/tmp/attnviz-compose), NGINX_IMAGE, READY_TIMEOUT (300 s).
set -euo pipefail
cd "$(dirname "$0")/.."

PROJECT=${PROJECT:-attnviz}
TOOLS=${TOOLS:-/var/tmp/attnviz-compose}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BASE_IMAGE=localhost/bookworm-base:latest
LOCAL_NGINX=localhost/attnviz-nginx:1.22
export CONTAINERS_CONF=$PWD/deploy/podman/containers.conf
export CONTAINERS_STORAGE_CONF=$PWD/deploy/podman/storage.conf

# podman 4.3 with no systemd says so on every start (it would time health checks with systemd), and podman-compose
# that it skips depends_on's conditions: both are handled below.
# (Through a file, not a pipe: a daemon the command starts, e.g. aardvark-dns, would hold a pipe open.)
LOG=$(mktemp); trap 'rm -f "$LOG"' EXIT
quiet() { grep -v -e 'systemd connection' -e 'connect to syslog' -e 'condition check due to podman' "$LOG" >&2 || true; }
run() { local status=0; "${compose[@]}" "$@" >/dev/null 2>"$LOG" || status=$?; quiet; return "$status"; }
say() { printf '\n== %s\n' "$*"; }
die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (vfs storage and the replicas' cgroups need it)"
for tool in podman buildah runc; do
  command -v "$tool" >/dev/null || die "missing $tool: apt-get update && apt-get install -y podman buildah runc"
done
if [ ! -x "$TOOLS/bin/podman-compose" ]; then
  say "podman-compose into $TOOLS"
  python3 -m venv "$TOOLS" && "$TOOLS/bin/pip" install -q podman-compose==1.6.0 || die "podman-compose did not install"
fi
compose=("$TOOLS/bin/podman-compose" -p "$PROJECT" -f compose.yaml)

if [ "${1:-up}" = stats ]; then
  for ctr in $(podman ps -q --filter "label=io.podman.compose.project=$PROJECT"); do
    name=$(podman inspect -f '{{.Name}}' "$ctr"); id=$(podman inspect -f '{{.Id}}' "$ctr")
    mem=$(find /sys/fs/cgroup/memory -maxdepth 3 -type d -name "*$id*" | head -1)
    pids=$(find /sys/fs/cgroup/pids -maxdepth 3 -type d -name "*$id*" | head -1)
    [ -n "$mem" ] && [ -n "$pids" ] || { echo "$name: no cgroup v1 memory and pids directories found"; continue; }
    echo "$name (pid $(podman inspect -f '{{.State.Pid}}' "$ctr")): peak memory $(( $(cat "$mem/memory.max_usage_in_bytes") \
/ 1048576 )) MiB of $(( $(cat "$mem/memory.limit_in_bytes") / 1048576 )) MiB, OOM kills \
$(awk '/^oom_kill /{print $2}' "$mem/memory.oom_control"), tasks now $(cat "$pids/pids.current") of $(cat "$pids/pids.max")"
  done
  exit 0
fi
if [ "${1:-up}" = down ]; then
  export NGINX_IMAGE=${NGINX_IMAGE:-$LOCAL_NGINX}
  run down -t 5
  exit 0
fi

podman image exists localhost/attnviz:latest || die "no image localhost/attnviz:latest: run scripts/build_image.sh first"
if [ -z "${NGINX_IMAGE:-}" ]; then
  NGINX_IMAGE=$LOCAL_NGINX
  if ! podman image exists "$NGINX_IMAGE"; then
    say "nginx image $NGINX_IMAGE (Debian's nginx, from $BASE_IMAGE)"
    podman image exists "$BASE_IMAGE" || die "no $BASE_IMAGE: run scripts/build_image.sh first"
    buildah --storage-driver vfs bud --isolation chroot --format docker --pull=false \
      -f deploy/nginx-debian/Containerfile -t "$NGINX_IMAGE" deploy/nginx-debian || die "nginx image build failed"
  fi
fi
export NGINX_IMAGE

start=$(date +%s.%N)
since() { printf '%.1f s' "$(echo "$(date +%s.%N) - $start" | bc)"; }
in_time() { [ "$(echo "$(date +%s.%N) - $start > $READY_TIMEOUT" | bc)" = 0 ] || die "$1 after $READY_TIMEOUT s"; }
say "replicas up (compose.yaml's limits)"
run up -d --no-build app1 app2 app3 || die "podman-compose up failed"
for app in app1 app2 app3; do
  ctr=$(podman ps -q --filter "label=io.podman.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$app")
  [ -n "$ctr" ] || die "$app is not running"
  until podman healthcheck run "$ctr" >/dev/null 2>&1; do
    in_time "$app not healthy"
    sleep 1
  done
  up_ms=$(( $(date +%s%3N) - $(podman inspect -f '{{.State.StartedAt.UnixMilli}}' "$ctr") ))
  echo "$app healthy after $(since), $(( up_ms / 1000 )).$(( up_ms % 1000 / 100 )) s after its container started (mem limit $(podman inspect -f '{{.HostConfig.Memory}}' "$ctr"), pids limit \
$(podman inspect -f '{{.HostConfig.PidsLimit}}' "$ctr"), read-only $(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$ctr"))"
done

say "nginx up ($NGINX_IMAGE)"
run up -d --no-build nginx || die "podman-compose up nginx failed"
until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/_stcore/health)" = 200 ]; do
  in_time "nginx not answering"
  sleep 0.5
done
curl -sf http://127.0.0.1:8080/ | grep -q '<div id="root">' || die "the page through nginx is not Streamlit's"
echo "ready through nginx after $(since): http://127.0.0.1:8080/"
"${compose[@]}" ps
