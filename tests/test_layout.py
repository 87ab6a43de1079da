"""The layout keeps its shape: dependencies run one way (import-linter's contracts in pyproject.toml), no module
imports itself back through others, ruff's stated rules hold, and no file grows past what one sitting reads."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PACKAGES = ("app.py", "views", "runtime", "viz", "model", "training", "locales", "harness", "bench", "tests")
MAX_LINES = 300
SIZED = ("model", "viz", "views", "runtime", "training", "bench", "harness")


def _modules() -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in ([ROOT / top] if top.endswith(".py") else sorted((ROOT / top).rglob("*.py"))):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_of(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project's modules it imports, at the top or inside a function (absolute or relative)."""
    graph = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                wanted = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for want in wanted:
                while want and want not in modules:
                    want = want.rpartition(".")[0]
                if want and want != name:
                    targets.add(want)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back():
    assert cycles(imports_of(_modules())) == []


def test_the_cycle_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_tests_never_import_bench_and_bench_never_imports_tests():
    graph = imports_of(_modules())
    crossing = [(m, t) for m, targets in graph.items() for t in targets
                if {m.split(".")[0], t.split(".")[0]} == {"tests", "bench"}]
    assert crossing == []


@pytest.mark.parametrize("command", [["lint-imports"], ["ruff", "check", "."]], ids=["import-linter", "ruff"])
def test_the_contracts_and_the_linter_pass(command):
    done = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_no_file_is_longer_than_one_sitting():
    long = {str(p.relative_to(ROOT)): n for top in SIZED for p in (ROOT / top).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
