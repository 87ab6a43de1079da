"""What a hostile page or visitor meets, read from the shipped files: no framing, only the operator's host
names, confined containers, Streamlit's XSRF and websocket-origin checks on. tests/deploy/test_proxy.py
checks the same nginx config for real (a foreign Host refused, the frame headers on every response).

compose-spec.json is the Compose specification's JSON schema (compose-spec/compose-go, schema/compose-spec.json
at e70e961, Apache-2.0), the one `docker compose` validates with: here it catches a misspelt key such as
`pid_limit`, which Compose would refuse and a dict lookup would not notice.
"""
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
APPS = ["app1", "app2", "app3"]
FRAME_OPTIONS = {"DENY", "SAMEORIGIN"}
FRAME_ANCESTORS = re.compile(r"frame-ancestors '(none|self)'")
NGINX_CAPS = {"CHOWN", "SETUID", "SETGID", "NET_BIND_SERVICE"}  # bind :80, chown temp dirs, switch workers' user
STREAMLIT_CHECKS = ("enableXsrfProtection", "enableCORS", "developmentMode",
                    "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION", "STREAMLIT_SERVER_ENABLE_CORS",
                    "STREAMLIT_GLOBAL_DEVELOPMENT_MODE")


def parse_nginx(text: str) -> list:
    """nginx config text -> [(name, [args], block or None)], blocks nested the same way."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[{};]|[^\s{};]+', re.sub(r"(?m)#.*$", "", text))
    stack, words = [[]], []
    for tok in tokens:
        if tok == ";":
            stack[-1].append((words[0], words[1:], None))
            words = []
        elif tok == "{":
            block = []
            stack[-1].append((words[0], words[1:], block))
            stack.append(block)
            words = []
        elif tok == "}":
            assert not words, f"unterminated directive {words}"
            stack.pop()
        else:
            words.append(tok[1:-1] if tok[0] in "\"'" else tok)
    assert len(stack) == 1 and not words, "unbalanced braces"
    return stack[0]


def find(block, name):
    return [d for d in block if d[0] == name]


def includes(block):
    return [d[1][0] for d in find(block, "include")]


def to_bytes(size: str) -> int:
    """A Compose ("2g") or Kubernetes ("2Gi") memory size in bytes; both mean binary units."""
    m = re.fullmatch(r"(\d+)([kmg])i?b?", str(size).lower())
    assert m, size
    return int(m.group(1)) * 1024 ** (1 + "kmg".index(m.group(2)))


@pytest.fixture(scope="module")
def servers():
    (http,) = find(parse_nginx((DEPLOY / "nginx.conf").read_text()), "http")
    return find(http[2], "server")


@pytest.fixture(scope="module")
def pod():
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "deployment.yaml").read_text()) if d]
    (dep,) = [d for d in docs if d["kind"] == "Deployment"]
    return dep["spec"]["template"]["spec"]


def test_parse_nginx_reads_nested_blocks_and_quotes():
    conf = parse_nginx('http { server { add_header A "b c" always; # x;\n location / { return 421; } } }')
    (http,) = find(conf, "http")
    (server,) = find(http[2], "server")
    assert find(server[2], "add_header") == [("add_header", ["A", "b c", "always"], None)]
    assert find(server[2], "location")[0][1:] == (["/"], [("return", ["421"], None)])


def test_every_server_forbids_framing_on_every_response(servers):
    assert len(servers) == 2
    for _, _, block in servers:
        headers = {d[1][0]: d[1][1:] for d in find(block, "add_header")}
        frame, csp = headers.get("X-Frame-Options"), headers.get("Content-Security-Policy")
        assert frame and frame[0] in FRAME_OPTIONS and frame[-1] == "always", frame
        assert csp and FRAME_ANCESTORS.fullmatch(csp[0]) and csp[-1] == "always", csp
        # An add_header inside a location makes nginx drop every server-level one there.
        for _, path, loc in find(block, "location"):
            assert not find(loc, "add_header"), f"location {path} would lose the frame headers"


def test_only_the_configured_host_names_are_served(servers):
    (_, _, refuse), (_, _, app) = servers
    # The first server on the port is nginx's default for it: it takes every other Host, and answers no app.
    assert includes(refuse) == ["listen.conf"]
    assert [d[1][0] for d in find(refuse, "return")] in (["421"], ["444"])
    assert not find(refuse, "location") and not find(refuse, "proxy_pass")
    assert "listen.conf" in includes(app) and "server_names.conf" in includes(app)
    assert not find(app, "server_name")  # only the operator's file names the hosts
    assert find(app, "location")
    # default_server here would make the app the catch-all again (and clash with the first server).
    assert "default_server" not in (DEPLOY / "listen.conf").read_text()

    (names,) = parse_nginx((DEPLOY / "server_names.conf").read_text())
    assert names[0] == "server_name" and names[1]
    for name in names[1]:
        assert name not in {"_", "*", '""'} and not name.startswith("~"), f"{name!r} lets any host in"


def test_compose_mounts_the_host_names_for_nginx(compose):
    volumes = compose["services"]["nginx"]["volumes"]
    assert "./deploy/server_names.conf:/etc/nginx/server_names.conf:ro" in volumes
    assert "deploy/server_names.conf" in (ROOT / "compose.yaml").read_text().split("services:")[0]  # the header
    assert "deploy/server_names.conf" in (ROOT / "README.md").read_text()


def test_compose_app_containers_are_confined_like_the_pod(compose, pod):
    (container,) = pod["containers"]
    pod_limit = to_bytes(container["resources"]["limits"]["memory"])
    for name in APPS:
        app = compose["services"][name]
        assert to_bytes(app["mem_limit"]) == pod_limit == 2 * 1024 ** 3, app.get("mem_limit")
        assert app["memswap_limit"] == app["mem_limit"]  # no swap on top, as on a Kubernetes node
        assert isinstance(app["pids_limit"], int) and 0 < app["pids_limit"] <= 4096
        assert app["cap_drop"] == ["ALL"] and "cap_add" not in app
        assert "no-new-privileges:true" in app["security_opt"]
        assert app["read_only"] is True and not app.get("privileged") and "user" not in app  # the image's user


def test_compose_nginx_keeps_only_the_capabilities_it_needs(compose):
    nginx = compose["services"]["nginx"]
    assert nginx["cap_drop"] == ["ALL"] and set(nginx["cap_add"]) <= NGINX_CAPS
    assert "no-new-privileges:true" in nginx["security_opt"]
    assert to_bytes(nginx["mem_limit"]) <= 512 * 1024 ** 2 and 0 < nginx["pids_limit"] <= 1024
    assert not nginx.get("privileged")


def test_compose_is_valid_for_compose():
    try:
        import jsonschema  # noqa: PLC0415 - optional: a missing one is said with how to install it
    except ImportError:
        pytest.fail("jsonschema is missing: .venv/bin/pip install -r requirements-dev.txt (kubernetes-validate)")
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    document = yaml.safe_load((ROOT / "compose.yaml").read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, errors
    document["services"]["app1"]["pid_limit"] = 5  # the schema does catch a misspelt key
    assert not validator.is_valid(document)


def test_k8s_pod_is_confined(pod):
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]} and not sc.get("privileged")
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    ingress = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "ingress.yaml").read_text()) if d]
    hosts = [rule.get("host") for doc in ingress for rule in doc["spec"]["rules"]]
    assert hosts and all(h and "*" not in h for h in hosts), hosts  # a rule without a host serves any Host


def test_streamlit_keeps_xsrf_and_websocket_origin_checks():
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True  # off, Streamlit takes a websocket from any Origin
    # The image has these settings: in .dockerignore's allow-list, which the Dockerfile's `COPY . ./` takes whole.
    assert "COPY . ./" in (ROOT / "Dockerfile").read_text()
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    assert "!.streamlit" in ignored
    assert not [line for line in ignored if ".streamlit" in line and not line.startswith(("#", "!"))
                and line != ".streamlit/secrets.toml"]
    # Nothing that starts the app overrides them (a flag, an environment variable); comments may name them.
    for path in [ROOT / "Dockerfile", ROOT / "compose.yaml", *sorted((DEPLOY / "k8s").glob("*.yaml"))]:
        code = re.sub(r"(?m)^\s*#.*$", "", path.read_text())
        for option in STREAMLIT_CHECKS:
            assert option not in code, f"{path.name} sets {option}"
