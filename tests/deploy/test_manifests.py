"""compose.yaml and deploy/k8s/*.yaml: they parse, they say what the README says, the Kubernetes
manifests validate against the API's own schemas (kubernetes-validate bundles them: offline), and the pod runs
the image as compose runs each replica (health, environment, limits, writable paths)."""
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest
import uvicorn
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = sorted((DEPLOY / "k8s").glob("*.yaml"))
APPS = ["app1", "app2", "app3"]


def _load(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.fixture(scope="module")
def k8s():
    return {d["kind"]: d for path in K8S for d in _load(path)}


def test_compose_runs_three_replicas_of_the_image(compose):
    services = compose["services"]
    assert sorted(s for s in services if s.startswith("app")) == APPS
    for name in APPS:
        app = services[name]
        assert app["image"] == "attnviz:latest"
        assert app["build"] in (".", {"context": "."})
        assert "healthcheck" not in app  # the image's own HEALTHCHECK
        assert "ports" not in app        # reached only through nginx
    assert "HEALTHCHECK" in (ROOT / "Dockerfile").read_text()


def test_compose_nginx_mounts_deploy_files(compose):
    nginx = compose["services"]["nginx"]
    # ${NGINX_IMAGE:-nginx:...}: the official image unless the environment names another (scripts/compose_up.sh)
    image = re.fullmatch(r"\$\{NGINX_IMAGE:-(.+)\}", nginx["image"])
    assert image and image[1].startswith("nginx:"), nginx["image"]
    assert "8080:80" in [str(p) for p in nginx["ports"]]
    mounts = {}
    for v in nginx["volumes"]:
        src, dst, mode = v.split(":")
        assert mode == "ro", v
        mounts[dst] = (ROOT / src).resolve()
    # The same file tests/deploy/test_proxy.py runs nginx with.
    assert mounts["/etc/nginx/nginx.conf"] == DEPLOY / "nginx.conf"
    # nginx resolves includes next to its config file: the per-environment files sit beside it.
    for inc in ("upstreams.conf", "listen.conf", "server_names.conf"):
        assert f"include {inc};" in (DEPLOY / "nginx.conf").read_text()
        assert mounts[f"/etc/nginx/{inc}"] == DEPLOY / inc and (DEPLOY / inc).is_file()
    assert nginx["depends_on"] == {a: {"condition": "service_healthy"} for a in APPS}


def test_upstreams_list_every_app_service(compose):
    servers = re.findall(r"^\s*server\s+(\S+)", (DEPLOY / "upstreams.conf").read_text(), re.MULTILINE)
    assert servers == [f"{a}:8501" for a in APPS]
    assert re.search(r"^\s*listen\s+80;", (DEPLOY / "listen.conf").read_text(), re.MULTILINE)


def test_nginx_conf_is_sticky_and_passes_websockets():
    conf = (DEPLOY / "nginx.conf").read_text()
    for needle in ("hash $route_key consistent;", "map $cookie_attnviz_route $route_key",
                   "proxy_set_header Upgrade $http_upgrade;", "proxy_set_header Connection $connection_upgrade;",
                   "location = /_stcore/stream", "proxy_read_timeout 1h;", "proxy_next_upstream error timeout"):
        assert needle in conf, needle


def test_nginx_closes_idle_replica_connections_first():
    """A reused idle connection the replica is closing gets a reset, and max_fails=1 then takes a live replica
    out for fail_timeout: its students' requests move to another one. So nginx's idle timeout for upstream
    connections must be below Streamlit's server's (uvicorn's timeout_keep_alive, which Streamlit leaves as is)."""
    replica_idle = inspect.signature(uvicorn.Config).parameters["timeout_keep_alive"].default
    streamlit_dir = Path(importlib.util.find_spec("streamlit").origin).parent  # found, not imported (slow)
    assert "timeout_keep_alive" not in (streamlit_dir / "web/server/starlette/starlette_server.py").read_text()
    upstream = re.search(r"upstream attnviz \{(.*?)\}", (DEPLOY / "nginx.conf").read_text(), re.DOTALL).group(1)
    idle = re.search(r"^\s*keepalive_timeout\s+(\d+)s;", upstream, re.MULTILINE)
    assert idle and int(idle.group(1)) < replica_idle, (idle and idle.group(0), replica_idle)


def test_compose_documents_a_read_only_model_volume():
    text = (ROOT / "compose.yaml").read_text()
    assert re.search(r"#\s*ATTNVIZ_MODEL_DIRS: /models", text)
    assert re.search(r"#\s*-\s*\S+:/models:ro", text)


@pytest.mark.parametrize("path", K8S, ids=[p.name for p in K8S])
def test_k8s_manifest_validates(path):
    try:
        import kubernetes_validate  # noqa: PLC0415 - optional: a missing one is said with how to install it
    except ImportError:
        pytest.fail("kubernetes-validate is missing: .venv/bin/pip install -r requirements-dev.txt")
    version = kubernetes_validate.utils.latest_version()
    for doc in _load(path):
        kubernetes_validate.validate(doc, version, strict=True)  # raises on any unknown or wrong field


def test_k8s_deployment(k8s):
    assert {"Deployment", "Service", "Ingress"} <= set(k8s)
    dep = k8s["Deployment"]
    assert dep["spec"]["replicas"] == 3
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["image"] == "attnviz:latest"
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"http": 8501}
    for probe in ("startupProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["path"] == "/_stcore/health" and c[probe]["httpGet"]["port"] in ("http", 8501)
    assert {"cpu", "memory"} <= set(c["resources"]["requests"]) and {"cpu", "memory"} <= set(c["resources"]["limits"])
    assert pod["securityContext"]["runAsNonRoot"] is True
    uid = re.search(r"--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert uid and pod["securityContext"]["runAsUser"] == int(uid.group(1))  # the image's user
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    empty = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable = {m["mountPath"] for m in c["volumeMounts"] if m["name"] in empty}
    assert {"/tmp", "/home/app"} <= writable
    assert "HOME=/home/app" in (ROOT / "Dockerfile").read_text()


def test_k8s_service_and_ingress_point_at_the_pods(k8s):
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    svc = k8s["Service"]
    assert svc["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert svc["spec"]["selector"].items() <= labels.items()
    assert k8s["Deployment"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (port,) = svc["spec"]["ports"]
    assert port["targetPort"] == "http"
    ing = k8s["Ingress"]
    ann = ing["metadata"]["annotations"]
    assert ann["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert ann["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"
    assert ann["nginx.ingress.kubernetes.io/session-cookie-name"] == "attnviz_route"
    assert int(ann["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    backends = [p["backend"]["service"] for r in ing["spec"]["rules"] for p in r["http"]["paths"]]
    assert backends == [{"name": svc["metadata"]["name"], "port": {"name": port["name"]}}]


def dockerfile_json(instruction: str) -> list[str]:
    """The exec form (a JSON array) of the Dockerfile's CMD, or of its HEALTHCHECK's CMD."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    pattern = r"^HEALTHCHECK [^\n]*?CMD (\[.*\])$" if instruction == "HEALTHCHECK" else r"^CMD (\[.*\])$"
    (found,) = re.findall(pattern, text, re.MULTILINE)
    return json.loads(found)


def test_the_pod_runs_the_image_as_compose_runs_each_replica(compose, k8s):
    """compose and Kubernetes must not drift apart: the same health checks (compose has the image's HEALTHCHECK),
    environment, writable paths, confinement, port and number of replicas; the memory limit is checked in
    test_hardening.py. pids_limit has no field in a pod: the manifest names the kubelet setting with the same number."""
    dep = k8s["Deployment"]
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert dep["spec"]["replicas"] == len(APPS)

    check = dockerfile_json("HEALTHCHECK")
    assert check == ["python", "serve.py", "--check"]
    assert c["readinessProbe"] == {**c["readinessProbe"], "exec": {"command": check}}  # ready: server up and warm
    for probe in ("startupProbe", "livenessProbe"):                                     # alive: the server answers
        assert c[probe]["httpGet"] == {"path": "/_stcore/health", "port": "http"}, c[probe]
    cmd = dockerfile_json("CMD")
    assert cmd[:2] == ["python", "serve.py"] and "--server.port=8501" in cmd and "command" not in c and "args" not in c
    assert {p["name"]: p["containerPort"] for p in c["ports"]} == {"http": 8501}

    env = {e["name"]: e["value"] for e in c["env"]}
    empty = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable = {m["mountPath"] for m in c["volumeMounts"] if m["name"] in empty}
    text = (DEPLOY / "k8s" / "deployment.yaml").read_text()
    for name in APPS:
        app = compose["services"][name]
        assert {k: str(v) for k, v in app["environment"].items()} == env, (name, app["environment"], env)
        assert set(app["tmpfs"]) == writable, (name, app["tmpfs"], writable)
        assert app["read_only"] is c["securityContext"]["readOnlyRootFilesystem"] is True
        assert app["cap_drop"] == c["securityContext"]["capabilities"]["drop"] == ["ALL"]
        no_new_privileges = "no-new-privileges:true" in app["security_opt"]
        assert no_new_privileges is (not c["securityContext"]["allowPrivilegeEscalation"]) is True
        assert f"podPidsLimit: {app['pids_limit']}" in text and f"--pod-max-pids={app['pids_limit']}" in text


def test_the_compose_stack_without_docker_is_set_up_for_podman():
    """scripts/compose_up.sh (run by hand, as root: not in the suite) and its files: podman's settings parse and say
    runc with limits a cgroup-v1 host allows, the script is valid bash, and the local nginx image builds from the base
    image scripts/build_image.sh makes."""
    import subprocess  # noqa: PLC0415
    import tomllib  # noqa: PLC0415

    conf = tomllib.loads((ROOT / "deploy/podman/containers.conf").read_text())
    assert conf["engine"]["runtime"] == "runc"
    limits = dict(u.split("=") for u in conf["containers"]["default_ulimits"])
    assert set(limits) == {"nofile", "nproc"} and all(len(v.split(":")) == 2 for v in limits.values())
    assert tomllib.loads((ROOT / "deploy/podman/storage.conf").read_text())["storage"]["driver"] == "vfs"
    script = ROOT / "scripts/compose_up.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    base = re.search(r"^BASE_IMAGE=(\S+)$", (ROOT / "scripts/build_image.sh").read_text(), re.M)[1]
    containerfile = (ROOT / "deploy/nginx-debian/Containerfile").read_text()
    assert f"FROM {base}\n" in containerfile and re.search(r"^BASE_IMAGE=(\S+)$", script.read_text(), re.M)[1] == base
