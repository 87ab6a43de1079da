#!/usr/bin/env bash
# Builds the Docker image with buildah and smoke-tests it, on a machine with no Docker engine and
# no registry (as root: debootstrap and vfs storage need it).
#
#   1. a debian:bookworm base made locally with debootstrap (cached in $BASE_CACHE, reused),
#      imported as localhost/bookworm-base;
#   2. the Dockerfile built with buildah (vfs storage, chroot isolation), torch from a local
#      wheel directory ($WHEELS, mounted at /wheels), the rest from PyPI, trusting the host's CA
#      bundle (mounted at /build-ca, not over /etc/ssl/certs, which the image's
#      ca-certificates package writes); prints time and size;
#   3. inside the built image, with no network (buildah run inside `unshare --net`): the image's CMD
#      (python serve.py) starts, /_stcore/health answers "ok", its HEALTHCHECK (python serve.py --check)
#      fails until the warm-up is done and passes after, / serves Streamlit's page, and the default
#      model runs a forward pass, so nothing needs to be downloaded at run time;
#   4. then, under the compose file's limits (a cgroup of 2 GiB of memory, no swap, 1024 tasks), with
#      scripts/check_image.py and harness/ mounted read-only (never in the image): every page of the
#      registry draws its main chart in English and in Chinese, every CSV and .npz download those
#      pages offer is made and parsed, and both live trainings (shortened) run to their end; prints
#      the peak memory and tasks, and fails if anything was written outside /tmp and /home/app (the
#      compose file's tmpfs: the rest is read-only there).
#
# Exits non-zero on any failure. Settings (environment): IMAGE (localhost/attnviz:latest),
# BASE_CACHE (/var/tmp/attnviz-base), WHEELS (/opt/wheels), CA_BUNDLE_DIR (/etc/ssl/certs),
# MIRROR (http://deb.debian.org/debian), NO_CACHE=1 (build every layer afresh), CHECK_ONLY=1 (no
# build: check the image there is), LIVE_STEPS (50) and LIVE_GPT_STEPS (100): the live trainings'.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-localhost/attnviz:latest}
BASE_IMAGE=localhost/bookworm-base:latest
BASE_CACHE=${BASE_CACHE:-/var/tmp/attnviz-base}
WHEELS=${WHEELS:-/opt/wheels}
CA_BUNDLE_DIR=${CA_BUNDLE_DIR:-/etc/ssl/certs}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
BUILDAH=(buildah --storage-driver vfs)
PODMAN=(podman --storage-driver vfs)

say() { printf '\n== %s\n' "$*"; }
die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# --- tools ---------------------------------------------------------------------------------
missing=()
for tool in buildah podman debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
for tool in unshare ip; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "missing: ${missing[*]}. Install them with:  apt-get update && apt-get install -y podman buildah debootstrap util-linux iproute2" >&2
  exit 2
fi
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and buildah's vfs storage need it)"
ls "$WHEELS"/torch-2.13.0*cp311*.whl >/dev/null 2>&1 \
  || die "no torch 2.13.0 cp311 wheel in $WHEELS (set WHEELS=<dir with torch-2.13.0+cpu-cp311-...whl>)"
[ -f "$CA_BUNDLE_DIR/ca-certificates.crt" ] || die "no CA bundle at $CA_BUNDLE_DIR/ca-certificates.crt"

# The build copies files with their modes here, and the image runs as uid 10001: a file only its owner may read
# (e.g. weights retrained under umask 077) would be unreadable in the image (a git clone is always readable).
unreadable=$(find app.py serve.py .streamlit model viz views runtime training locales ! -perm -o+r ! -name '*.pyc' \
  2>/dev/null | head -5)
[ -z "$unreadable" ] || die "not readable by the image's user (chmod a+r them): $unreadable"

# --- base image and build (CHECK_ONLY=1: neither, the image there is is checked) ------------
base_and_build() {
  say "base image $BASE_IMAGE"
  if ! "${BUILDAH[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
    if [ ! -f "$BASE_CACHE/rootfs.ok" ]; then
      echo "debootstrap --variant=minbase bookworm into $BASE_CACHE/rootfs"
      rm -rf "$BASE_CACHE/rootfs" "$BASE_CACHE/rootfs.partial"
      mkdir -p "$BASE_CACHE"
      debootstrap --variant=minbase bookworm "$BASE_CACHE/rootfs.partial" "$MIRROR" >"$BASE_CACHE/debootstrap.log" 2>&1 \
        || die "debootstrap failed, see $BASE_CACHE/debootstrap.log"
      mv "$BASE_CACHE/rootfs.partial" "$BASE_CACHE/rootfs"
      touch "$BASE_CACHE/rootfs.ok"
    else
      echo "reusing $BASE_CACHE/rootfs"
    fi
    # Like the official slim image: updates and security in sources.list, no package cache.
    rootfs=$BASE_CACHE/rootfs
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
      "$MIRROR" "$MIRROR" >"$rootfs/etc/apt/sources.list"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
    tar --numeric-owner -C "$rootfs" -c . | "${PODMAN[@]}" import - "$BASE_IMAGE" >/dev/null
    echo "imported $BASE_IMAGE"
  else
    echo "present"
  fi

  # --- build ---------------------------------------------------------------------------------
  say "build $IMAGE"
  start=$(date +%s)
  cache=(--layers); if [ -n "${NO_CACHE:-}" ]; then cache+=(--no-cache); fi
  "${BUILDAH[@]}" bud --isolation chroot --format docker "${cache[@]}" --pull=false \
    -v "$CA_BUNDLE_DIR:/build-ca:ro" -v "$WHEELS:/wheels:ro" \
    --build-arg BASE_IMAGE="$BASE_IMAGE" \
    --build-arg PIP_FIND_LINKS=/wheels \
    --build-arg PIP_CERT=/build-ca/ca-certificates.crt \
    -t "$IMAGE" . || die "build failed"
  build_seconds=$(( $(date +%s) - start ))
}
if [ -n "${CHECK_ONLY:-}" ]; then
  say "CHECK_ONLY: no build, checking the image there is"
  "${BUILDAH[@]}" inspect --type image "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE to check"
else
  base_and_build
fi
build_seconds=${build_seconds:-"(not built this run)"}
size_bytes=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
size_human=$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE" | head -1)

# --- smoke test, inside the image, no network ----------------------------------------------
say "smoke test (buildah run, in a network namespace with loopback only)"
ctr=$("${BUILDAH[@]}" from --pull=false "$IMAGE")
CG_DIRS=(); sampler=""   # the limits' cgroups and their sampler (below), removed on the way out
remove_limits() {
  if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi
  for dir in "${CG_DIRS[@]}"; do rmdir "$dir" 2>/dev/null || true; done
}
trap 'remove_limits; "${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
MARK=/home/app/.attnviz-check-start   # what the checks write after it is listed at the end
# No network: buildah's chroot isolation refuses --network none, and its OCI isolation (crun)
# cannot run here (cgroups), so buildah itself runs in a fresh network namespace that has only
# a loopback interface: the same as `docker run --network none`. CG_PROCS: the cgroups the command
# joins first (see limits below; empty: none).
CG_PROCS=""
in_image() {
  CG_PROCS="$CG_PROCS" unshare --net -- sh -c \
    'for procs in $CG_PROCS; do echo $$ >"$procs" || exit 97; done; ip link set lo up && exec "$@"' sh \
    "${BUILDAH[@]}" run --isolation chroot --user 10001 --workingdir /app "${MOUNTS[@]}" "$ctr" -- "$@"
}
MOUNTS=()

offline=$(cat <<'PY'
import socket
for host in ("pypi.org", "huggingface.co"):
    try:
        socket.create_connection((host, 443), timeout=3).close()
        raise SystemExit(f"network: {host} is reachable, the smoke test would prove nothing")
    except OSError as e:
        print(f"network: {host} unreachable ({e.__class__.__name__}), as intended")
PY
)
in_image python -c "$offline" || die "the smoke test is not offline"
in_image touch "$MARK"

# The image's own CMD and HEALTHCHECK (python serve.py, python serve.py --check), the address narrowed to loopback
# (the only interface there is): the check fails while the warm-up runs and passes once it is done.
smoke=$(cat <<'PY'
import json, subprocess, sys, time, urllib.request
cmd = ["python", "serve.py", "--server.port=8501", "--server.address=127.0.0.1"]
app = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
def get(path):
    return urllib.request.urlopen("http://127.0.0.1:8501" + path, timeout=3).read()
def check():
    return subprocess.run(["python", "serve.py", "--check"], capture_output=True).returncode
ok, health, refused, warming = False, None, 0, 0
try:
    start = time.monotonic()
    while time.monotonic() - start < 180 and app.poll() is None:
        try:
            if health is None and get("/_stcore/health") == b"ok":
                health = time.monotonic() - start
        except OSError:
            pass
        if check() == 0:
            ok = True
            break
        refused += 1
        warming += health is not None  # the server answers, its warm-up is not done: not healthy yet
        time.sleep(0.5)
    ready = time.monotonic() - start
    print(f"serve.py: /_stcore/health ok after {health or float('nan'):.1f} s, `serve.py --check` exit 0 after "
          f"{ready:.1f} s (non-zero {refused} times before, {warming} of them while health said ok: the warm-up)")
    ok = ok and health is not None and refused > 0
    if ok:
        page = get("/")
        ok = b"<title>Streamlit</title>" in page and b'id="root"' in page
        print(f"page /: {len(page)} bytes, {'Streamlit HTML' if ok else 'NOT Streamlit HTML'}")
finally:
    app.terminate()
    out = app.communicate(timeout=20)[0]
    print("serve.py said: " + " | ".join(line for line in out.splitlines() if "ready" in line))
    if not ok:
        print(out)
sys.exit(0 if ok else 1)
PY
)
in_image python -c "$smoke" || die "serve.py did not start, warm up and serve its page"

forward=$(cat <<'PY'
import os, torch
from model.loading.sources import DEFAULT_KEY, find_source, load
assert os.environ["HF_HUB_OFFLINE"] == "1", "HF_HUB_OFFLINE is not set"
source = find_source(DEFAULT_KEY)
assert source.available, source.reason
m = load(source)
with torch.no_grad():
    out = m.model(m.encode("The cat sat on the mat.").input_ids)
print(f"forward: {source.key} torch {torch.__version__}, {len(out.attentions)} layers, attention {tuple(out.attentions[0].shape)}")
PY
)
in_image python -c "$forward" || die "the default model did not run"

# --- every page, the downloads, both live trainings: under the compose file's limits ------
# compose.yaml gives each replica mem_limit 2g = memswap_limit (no swap) and pids_limit 1024. Here they are a
# cgroup the checks run in (cgroup v1 memory + pids, or v2), created beside this script's own and removed after;
# where no cgroup can be made, RLIMIT_NPROC stands in for the pids limit and memory is only measured.
MEM_LIMIT=$((2 * 1024 * 1024 * 1024)); PIDS_LIMIT=1024
limits="none"
make_limits() {
  local name=attnviz-check-$$ mem pids
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2
    mem=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)/$name
    mkdir "$mem" 2>/dev/null || return 1
    CG_DIRS=("$mem")
    echo "$MEM_LIMIT" >"$mem/memory.max" && echo 0 >"$mem/memory.swap.max" && echo "$PIDS_LIMIT" >"$mem/pids.max" \
      || return 1
    CG_PROCS="$mem/cgroup.procs"; MEM_PEAK="$mem/memory.peak"; PIDS_NOW="$mem/pids.current"
    OOM_FILE="$mem/memory.events"
    limits="cgroup v2 $mem: memory.max $MEM_LIMIT, memory.swap.max 0, pids.max $PIDS_LIMIT"
  else                                                 # cgroup v1
    mem=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)/$name
    pids=/sys/fs/cgroup/pids$(awk -F: '$2 == "pids" {print $3}' /proc/self/cgroup)/$name
    mkdir "$mem" 2>/dev/null && CG_DIRS=("$mem") && mkdir "$pids" 2>/dev/null && CG_DIRS+=("$pids") || return 1
    echo "$MEM_LIMIT" >"$mem/memory.limit_in_bytes" && echo "$PIDS_LIMIT" >"$pids/pids.max" || return 1
    if [ -f "$mem/memory.memsw.limit_in_bytes" ]; then echo "$MEM_LIMIT" >"$mem/memory.memsw.limit_in_bytes"; fi
    CG_PROCS="$mem/cgroup.procs $pids/cgroup.procs"; MEM_PEAK="$mem/memory.max_usage_in_bytes"
    PIDS_NOW="$pids/pids.current"
    OOM_FILE="$mem/memory.oom_control"
    limits="cgroup v1 memory $mem: limit_in_bytes $MEM_LIMIT (memsw too: no swap); pids $pids: pids.max $PIDS_LIMIT"
  fi
}
if ! make_limits; then
  remove_limits; CG_DIRS=(); CG_PROCS=""
  limits="no writable cgroup: pids by RLIMIT_NPROC $PIDS_LIMIT for uid 10001, memory NOT enforced (peak not measured)"
fi
say "checks under the limits: $limits"
MOUNTS=(-v "$PWD/scripts/check_image.py:/check/check_image.py:ro" -v "$PWD/harness:/check/harness:ro")
PIDS_PEAK_FILE=$(mktemp)
if [ -n "$CG_PROCS" ]; then
  ( peak=0; while sleep 0.2; do now=$(cat "$PIDS_NOW" 2>/dev/null || echo 0)
      if (( now > peak )); then peak=$now; echo "$peak" >"$PIDS_PEAK_FILE"; fi; done ) &
  sampler=$!
  limited() { in_image "$@"; }
else  # root is not held by RLIMIT_NPROC; the image's user, which buildah switches to, is
  limited() { ( ulimit -u "$PIDS_LIMIT" && in_image "$@" ); }
fi
limited sh -c 'echo "inside: uid $(id -u), $(grep "Max processes" /proc/self/limits | tr -s " "), cgroups:" \
  $(grep -E "memory|pids" /proc/self/cgroup)'
check_start=$(date +%s)
set +e
limited env ATTNVIZ_LIVE_STEPS="${LIVE_STEPS:-50}" ATTNVIZ_LIVE_GPT_STEPS="${LIVE_GPT_STEPS:-100}" \
  python /check/check_image.py pages live 2>&1 | grep --line-buffered -v "missing ScriptRunContext"
check_status=${PIPESTATUS[0]}
set -e
check_seconds=$(( $(date +%s) - check_start ))
if [ -n "$CG_PROCS" ]; then
  kill "$sampler" 2>/dev/null || true
  mem_peak=$(cat "$MEM_PEAK" 2>/dev/null || echo 0)
  oom=$(awk '$1 == "oom_kill" {print $2}' "$OOM_FILE" 2>/dev/null || echo "?")
  printf 'under the limits: peak memory %s MiB of %s MiB, peak tasks %s of %s, OOM kills %s, %ss\n' \
    "$(( mem_peak / 1048576 ))" "$(( MEM_LIMIT / 1048576 ))" "$(cat "$PIDS_PEAK_FILE" 2>/dev/null || echo "?")" \
    "$PIDS_LIMIT" "$oom" "$check_seconds"
fi
rm -f "$PIDS_PEAK_FILE"
[ "$check_status" = 0 ] || die "a page, a download or a live training failed in the image (above)"
if [ -n "$CG_PROCS" ]; then  # and the limits do hold: more memory, or more threads, than compose allows fail
  if limited python -c 'b = b"x" * (3 * 1024 ** 3)' >/dev/null 2>&1; then die "3 GiB filled under the 2 GiB limit"; fi
  threads='import sys, threading, time
for _ in range(int(sys.argv[1])): threading.Thread(target=time.sleep, args=(3,), daemon=True).start()'
  limited python -c "$threads" 900 || die "900 threads could not start under the 1,024 limit"
  if limited python -c "$threads" 1100 >/dev/null 2>&1; then die "1,100 threads started under the 1,024 limit"; fi
  echo "the limits hold: filling 3 GiB was killed (OOM kills: $(awk '$1 == "oom_kill" {print $2}' "$OOM_FILE")); 900" \
    "threads started, 1,100 were refused"
fi
MOUNTS=()

in_image id
echo "/app holds: $(in_image ls -A /app | tr '\n' ' ')"
# compose runs the image read-only with tmpfs at /tmp and /home/app: nothing may be written elsewhere.
# (Folders the image's user cannot read, it cannot write either: find's complaints about them are dropped.)
written=$(in_image sh -c 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /home/app \
  -o -path /run -o -path /check -o -path /etc/hosts -o -path /etc/resolv.conf -o -path /etc/hostname \) -prune -o -type f \
  -newer "$1" -print 2>/dev/null; exit 0' sh "$MARK")
[ -z "$written" ] || die "the checks wrote outside /tmp and /home/app (read-only under compose): $written"
echo "files written outside /tmp and /home/app: none"
echo "files the runs wrote in HOME: $(in_image find /home/app -type f -newer "$MARK" | tr '\n' ' ')"

say "result"
echo "image: $IMAGE"
echo "build time: ${build_seconds} s"
echo "size: $size_human ($size_bytes bytes, uncompressed)"
(( size_bytes < 2000000000 )) || die "image is over the 2.0 GB budget"
echo "limits: $limits"
echo "smoke: PASS (no network; serve.py healthy only once warm, page served, forward pass of the default model;"
echo "       every page in English and Chinese, every CSV and .npz download, both live trainings to their end)"
