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
#   3. inside the built image, with no network (buildah run inside `unshare --net`): the app starts,
#      /_stcore/health answers "ok", / serves Streamlit's page, and the default model runs a
#      forward pass, so nothing needs to be downloaded at run time.
#
# Exits non-zero on any failure. Settings (environment): IMAGE (localhost/attnviz:latest),
# BASE_CACHE (/var/tmp/attnviz-base), WHEELS (/opt/wheels), CA_BUNDLE_DIR (/etc/ssl/certs),
# MIRROR (http://deb.debian.org/debian).
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

# --- base image ----------------------------------------------------------------------------
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
"${BUILDAH[@]}" bud --isolation chroot --format docker --layers --pull=false \
  -v "$CA_BUNDLE_DIR:/build-ca:ro" -v "$WHEELS:/wheels:ro" \
  --build-arg BASE_IMAGE="$BASE_IMAGE" \
  --build-arg PIP_FIND_LINKS=/wheels \
  --build-arg PIP_CERT=/build-ca/ca-certificates.crt \
  -t "$IMAGE" . || die "build failed"
build_seconds=$(( $(date +%s) - start ))
size_bytes=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
size_human=$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE" | head -1)

# --- smoke test, inside the image, no network ----------------------------------------------
say "smoke test (buildah run, in a network namespace with loopback only)"
ctr=$("${BUILDAH[@]}" from --pull=false "$IMAGE")
trap '"${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
# No network: buildah's chroot isolation refuses --network none, and its OCI isolation (crun)
# cannot run here (cgroups), so buildah itself runs in a fresh network namespace that has only
# a loopback interface: the same as `docker run --network none`.
in_image() {
  unshare --net -- sh -c 'ip link set lo up && exec "$@"' sh \
    "${BUILDAH[@]}" run --isolation chroot --user 10001 --workingdir /app "$ctr" -- "$@"
}

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

# The image's CMD, with the address narrowed to loopback (the only interface there is).
smoke=$(cat <<'PY'
import subprocess, sys, time, urllib.request
app = subprocess.Popen(["streamlit", "run", "app.py", "--server.port=8501", "--server.address=127.0.0.1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
def get(path):
    return urllib.request.urlopen("http://127.0.0.1:8501" + path, timeout=3).read()
ok = False
try:
    start = time.monotonic()
    while time.monotonic() - start < 90 and app.poll() is None:
        try:
            if get("/_stcore/health") == b"ok":
                ok = True
                break
        except OSError:
            time.sleep(0.5)
    print(f"health: {'ok' if ok else 'NO ANSWER'} after {time.monotonic() - start:.1f}s")
    if ok:
        page = get("/")
        ok = b"<title>Streamlit</title>" in page and b'id="root"' in page
        print(f"page /: {len(page)} bytes, {'Streamlit HTML' if ok else 'NOT Streamlit HTML'}")
finally:
    app.terminate()
    out = app.communicate(timeout=20)[0]
    if not ok:
        print(out)
sys.exit(0 if ok else 1)
PY
)
in_image python -c "$smoke" || die "the app did not start and serve its page"

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
in_image id
written=$(in_image find /home/app -type f -newer /app/app.py)
echo "files the runs wrote in HOME: ${written:-none}"

say "result"
echo "image: $IMAGE"
echo "build time: ${build_seconds}s"
echo "size: $size_human ($size_bytes bytes, uncompressed)"
(( size_bytes < 1600000000 )) || die "image is over the 1.6 GB budget"
echo "smoke: PASS (no network; health ok, page served, forward pass of the default model)"
