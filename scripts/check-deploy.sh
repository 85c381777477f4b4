#!/usr/bin/env bash
# Validate the deployment artefacts in deploy/ without a cluster or a
# container engine:
#   - every YAML file under deploy/kubernetes parses; every document has
#     apiVersion, kind and metadata.name, and the kinds are the expected ones;
#   - cross-references hold (Service/ServiceMonitor/Probe ports and
#     selectors, ConfigMap/Secret/PVC names, token and state paths, the
#     probe module, --shard against replicas);
#   - `kubectl kustomize` renders the base (when kubectl is installed);
#   - the example configs pass `mcp-exporter check-config` (when a built
#     binary is found: $MCP_EXPORTER_BIN, target/{release,debug}, or PATH);
#   - the Prometheus example in deploy/README.md passes
#     `promtool check config`, with alerts/mcp-exporter.rules.yaml loaded
#     through its rule_files when that file exists;
#   - the systemd unit passes `systemd-analyze verify` with no warnings;
#   - the Dockerfile's static facts (stages, user, port, entrypoint, COPY
#     sources exist). The image is NOT built here.
# Tools that are missing are reported as SKIP, not as failures, except
# python3 + PyYAML (installed into a temporary venv if absent).
#
# Usage: scripts/check-deploy.sh            (exit status 0 = all checks passed)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$ROOT/deploy"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }
skip() { printf 'SKIP  %s\n' "$*"; }

# ------------------------------------------------------------------ python
PY=python3
if ! command -v python3 >/dev/null; then
  echo "python3 is required" >&2
  exit 2
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  # No system PyYAML: a throwaway venv keeps the host untouched.
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install --quiet PyYAML
  PY="$WORK/venv/bin/python"
fi

# --------------------------------------------------- manifests (parse + refs)
if "$PY" - "$DEPLOY" <<'PYEOF'
import json, re, sys, pathlib, yaml

deploy = pathlib.Path(sys.argv[1])
kdir = deploy / "kubernetes"
errors = []
def err(msg): errors.append(msg)

# Which kinds each file must hold (all of them, nothing else).
expected = {
    "configmap.yaml": ["ConfigMap"],
    "targets-configmap.yaml": ["ConfigMap"],
    "pvc.yaml": ["PersistentVolumeClaim"],
    "deployment.yaml": ["Deployment"],
    "service.yaml": ["Service"],
    "servicemonitor.yaml": ["ServiceMonitor"],
    "probe.yaml": ["Probe"],
    "secret.example.yaml": ["Secret"],
    "web-config.example.yaml": ["Secret"],
    "sharded-statefulset.yaml": ["Service", "StatefulSet"],
    "kustomization.yaml": ["Kustomization"],
}
api_of = {
    "ConfigMap": "v1", "PersistentVolumeClaim": "v1", "Service": "v1", "Secret": "v1",
    "Deployment": "apps/v1", "StatefulSet": "apps/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1", "Probe": "monitoring.coreos.com/v1",
    "Kustomization": "kustomize.config.k8s.io/v1beta1",
}

docs = {}  # file name -> list of documents
files = sorted(p for p in kdir.rglob("*") if p.suffix in (".yaml", ".yml"))
if not files:
    err("no YAML files under deploy/kubernetes")
for path in files:
    rel = path.relative_to(kdir).as_posix()
    try:
        loaded = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as e:
        err(f"{rel}: does not parse: {e}")
        continue
    docs[rel] = loaded
    kinds = []
    for i, d in enumerate(loaded):
        if not isinstance(d, dict):
            err(f"{rel} doc {i}: not a mapping"); continue
        kind, api = d.get("kind"), d.get("apiVersion")
        if not kind or not api:
            err(f"{rel} doc {i}: missing kind or apiVersion"); continue
        kinds.append(kind)
        if api_of.get(kind) and api_of[kind] != api:
            err(f"{rel}: {kind} has apiVersion {api}, expected {api_of[kind]}")
        if kind != "Kustomization" and not (d.get("metadata") or {}).get("name"):
            err(f"{rel}: {kind} without metadata.name")
    if rel not in expected:
        err(f"{rel}: unexpected file (add it to the expectations in scripts/check-deploy.sh)")
    elif sorted(kinds) != sorted(expected[rel]):
        err(f"{rel}: kinds {kinds}, expected {expected[rel]}")
    print(f"  parsed {rel}: {', '.join(kinds)}")

def one(rel, kind):
    for d in docs.get(rel, []):
        if d.get("kind") == kind:
            return d
    err(f"{rel}: no {kind}")
    return {}

# kustomization: resources exist; the extras are deliberately not listed.
kust = one("kustomization.yaml", "Kustomization")
res = kust.get("resources", [])
for r in res:
    if not (kdir / r).is_file():
        err(f"kustomization.yaml lists missing {r}")
for extra in ("secret.example.yaml", "sharded-statefulset.yaml"):
    if extra in res:
        err(f"kustomization.yaml must not list {extra}")
for f in docs:
    if f not in res and f not in ("kustomization.yaml", "secret.example.yaml", "web-config.example.yaml", "sharded-statefulset.yaml"):
        err(f"{f} is in neither kustomization.yaml nor the known extras")

# The exporter config inside the ConfigMap.
cm = one("configmap.yaml", "ConfigMap")
cfg_text = (cm.get("data") or {}).get("config.yaml", "")
try:
    cfg = yaml.safe_load(cfg_text) or {}
except yaml.YAMLError as e:
    err(f"configmap.yaml: data.config.yaml does not parse: {e}"); cfg = {}
state_dir = (cfg.get("global") or {}).get("state_dir")
http_blocks = [t.get("http") or {} for t in cfg.get("targets", []) + list((cfg.get("modules") or {}).values())]
token_files = [h.get("bearer_token_file") for h in http_blocks if h.get("bearer_token_file")]
if re.search(r"^\s*-?\s*bearer_token\s*:", cfg_text, re.M):
    err("configmap.yaml: a literal bearer_token in the config")
http_targets = [t for t in cfg.get("targets", []) if (t.get("http") or {}).get("url") and (t.get("http") or {}).get("bearer_token_file")]
if len(http_targets) < 2:
    err("configmap.yaml: expected at least two HTTP targets with bearer_token_file")

targets_cm = one("targets-configmap.yaml", "ConfigMap").get("metadata", {}).get("name")
for name, text in (one("targets-configmap.yaml", "ConfigMap").get("data") or {}).items():
    try:
        groups = json.loads(text)
    except ValueError as e:
        err(f"targets-configmap.yaml: {name} is not JSON: {e}"); continue
    if not isinstance(groups, list) or not all(isinstance(g, dict) and isinstance(g.get("targets"), list) for g in groups):
        err(f"targets-configmap.yaml: {name} is not a list of target groups")
for source in cfg.get("discovery") or []:
    if source.get("module") not in (cfg.get("modules") or {}):
        err(f"configmap.yaml: discovery source {source.get('name')} names no module")

svc = one("service.yaml", "Service")
svc_ports = {p.get("name"): p for p in (svc.get("spec") or {}).get("ports", [])}
if svc_ports.get("http-metrics", {}).get("port") != 9733:
    err("service.yaml: port http-metrics must be 9733")

def check_pod(rel, workload, state_claim):
    spec = workload.get("spec") or {}
    tmpl = spec.get("template") or {}
    pod = tmpl.get("spec") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    sel = (spec.get("selector") or {}).get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in sel.items()):
        err(f"{rel}: selector does not match the pod template labels")
    psc = pod.get("securityContext") or {}
    if psc.get("runAsNonRoot") is not True or psc.get("runAsUser") != 10001:
        err(f"{rel}: pod must run as non-root uid 10001")
    c = (pod.get("containers") or [{}])[0]
    csc = c.get("securityContext") or {}
    if csc.get("readOnlyRootFilesystem") is not True or csc.get("allowPrivilegeEscalation") is not False:
        err(f"{rel}: container needs readOnlyRootFilesystem and no privilege escalation")
    args = c.get("args") or []
    if any(a.startswith("--config.file") for a in args) and not c.get("command"):
        err(f"{rel}: --config.file is already in the image entrypoint")
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    if ports.get("http-metrics") != 9733:
        err(f"{rel}: containerPort http-metrics must be 9733")
    for probe, path in (("livenessProbe", "/-/healthy"), ("readinessProbe", "/-/ready")):
        if ((c.get(probe) or {}).get("httpGet") or {}).get("path") != path:
            err(f"{rel}: {probe} must GET {path}")
    if "limits" not in (c.get("resources") or {}):
        err(f"{rel}: no resource limits")
    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
    for name in mounts:
        if name not in vols and name not in claims:
            err(f"{rel}: volumeMount {name} has no volume")
    cfgm = mounts.get("config", {})
    if cfgm.get("mountPath") != "/etc/mcp-exporter" or "subPath" in cfgm:
        err(f"{rel}: config must be mounted at /etc/mcp-exporter without subPath")
    if (vols.get("config", {}).get("configMap") or {}).get("name") != cm.get("metadata", {}).get("name"):
        err(f"{rel}: config volume does not use the ConfigMap")
    tok = mounts.get("tokens", {}).get("mountPath", "")
    if (vols.get("tokens", {}).get("secret") or {}).get("secretName") != "mcp-exporter-tokens":
        err(f"{rel}: tokens volume must be the Secret mcp-exporter-tokens")
    for f in token_files:
        if not f.startswith(tok.rstrip("/") + "/"):
            err(f"{rel}: bearer_token_file {f} is not under the Secret mount {tok}")
    # Every file_sd pattern lies under a mount of the targets ConfigMap.
    for source in cfg.get("discovery") or []:
        for pattern in (source.get("file_sd") or {}).get("files", []):
            under = [m for m in mounts.values() if pattern.startswith(m.get("mountPath", "?").rstrip("/") + "/")]
            if not any((vols.get(m["name"], {}).get("configMap") or {}).get("name") == targets_cm for m in under):
                err(f"{rel}: file_sd pattern {pattern} is not under a mount of the ConfigMap {targets_cm}")
    if mounts.get("state", {}).get("mountPath") != state_dir:
        err(f"{rel}: state volume not mounted at global.state_dir ({state_dir})")
    if state_claim and (vols.get("state", {}).get("persistentVolumeClaim") or {}).get("claimName") != state_claim:
        err(f"{rel}: state volume must use the PVC {state_claim}")
    return labels, c

dep = one("deployment.yaml", "Deployment")
pvc = one("pvc.yaml", "PersistentVolumeClaim")
if (dep.get("spec") or {}).get("replicas") != 1:
    err("deployment.yaml: scheduled mode runs exactly 1 replica")
dep_labels, _ = check_pod("deployment.yaml", dep, pvc.get("metadata", {}).get("name"))
svc_sel = (svc.get("spec") or {}).get("selector") or {}
if any(dep_labels.get(k) != v for k, v in svc_sel.items()):
    err("service.yaml: selector does not match the Deployment's pods")

sm = one("servicemonitor.yaml", "ServiceMonitor")
sm_sel = ((sm.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
svc_labels = (svc.get("metadata") or {}).get("labels") or {}
if any(svc_labels.get(k) != v for k, v in sm_sel.items()):
    err("servicemonitor.yaml: selector does not match the Service")
eps = (sm.get("spec") or {}).get("endpoints") or [{}]
if eps[0].get("port") != "http-metrics" or eps[0].get("path") != "/metrics" or eps[0].get("interval") != "30s":
    err("servicemonitor.yaml: endpoint must be port http-metrics, path /metrics, interval 30s")

pr = (one("probe.yaml", "Probe").get("spec") or {})
prober = pr.get("prober") or {}
if not str(prober.get("url", "")).endswith(":9733") or prober.get("path") != "/probe":
    err("probe.yaml: prober must be <service>:9733 with path /probe")
if not str(prober.get("url", "")).startswith(svc.get("metadata", {}).get("name", "?") + "."):
    err("probe.yaml: prober url does not name the exporter Service")
module = pr.get("module")
if module not in (cfg.get("modules") or {}):
    err(f"probe.yaml: module {module!r} is not in the ConfigMap's modules")
static = ((pr.get("targets") or {}).get("staticConfig") or {}).get("static") or []
allow = ((cfg.get("modules") or {}).get(module) or {}).get("allow", [])
for t in static:
    # The exporter's rule: some allow pattern matches the URL's beginning,
    # `*` standing for any run of characters except `/`.
    if not any(re.match("".join("[^/]*" if ch == "*" else re.escape(ch) for ch in a), t) for a in allow):
        err(f"probe.yaml: static target {t} is not allowed by module {module}")
if pr.get("interval") and pr.get("scrapeTimeout") is None:
    err("probe.yaml: set scrapeTimeout")

# Sharded StatefulSet: --shard index from the pod index, count == replicas.
ss = one("sharded-statefulset.yaml", "StatefulSet")
hs = one("sharded-statefulset.yaml", "Service")
ss_labels, c = check_pod("sharded-statefulset.yaml", ss, None)
if (hs.get("spec") or {}).get("clusterIP") != "None" or (ss.get("spec") or {}).get("serviceName") != hs.get("metadata", {}).get("name"):
    err("sharded-statefulset.yaml: needs its headless Service as serviceName")
if any(ss_labels.get(k) != v for k, v in ((hs.get("spec") or {}).get("selector") or {}).items()):
    err("sharded-statefulset.yaml: headless Service selector does not match the pods")
if all(ss_labels.get(k) == v for k, v in svc_sel.items()):
    err("sharded-statefulset.yaml: pods would also match service.yaml's selector")
shard = [a for a in c.get("args", []) if a.startswith("--shard")]
m = re.fullmatch(r"--shard=\$\((\w+)\)/(\d+)", shard[0]) if shard else None
if not m:
    err("sharded-statefulset.yaml: expected --shard=$(VAR)/N in args")
else:
    if int(m.group(2)) != (ss.get("spec") or {}).get("replicas"):
        err("sharded-statefulset.yaml: N in --shard differs from replicas")
    env = {e["name"]: e for e in c.get("env", [])}
    ref = ((env.get(m.group(1), {}).get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
    if ref != "metadata.labels['apps.kubernetes.io/pod-index']":
        err(f"sharded-statefulset.yaml: {m.group(1)} must come from the pod-index label")
if not any(t["metadata"]["name"] == "state" for t in (ss.get("spec") or {}).get("volumeClaimTemplates", [])):
    err("sharded-statefulset.yaml: needs a per-pod state volumeClaimTemplate")

for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
PYEOF
then pass "kubernetes manifests parse and cross-reference"
else fail "kubernetes manifests"
fi

# ------------------------------------------------------------- kustomize
if command -v kubectl >/dev/null; then
  if kubectl kustomize "$DEPLOY/kubernetes" >"$WORK/rendered.yaml" 2>"$WORK/kustomize.err"; then
    n=$(grep -c '^kind:' "$WORK/rendered.yaml" || true)
    pass "kubectl kustomize renders the base ($n objects)"
  else
    cat "$WORK/kustomize.err"
    fail "kubectl kustomize"
  fi
else
  skip "kubectl not installed: kustomization not rendered"
fi

# ------------------------------------------------- example configs (binary)
BIN="${MCP_EXPORTER_BIN:-}"
if [[ -z "$BIN" ]]; then
  for cand in "$ROOT/target/release/mcp-exporter" "$ROOT/target/debug/mcp-exporter" "$(command -v mcp-exporter || true)"; do
    if [[ -n "$cand" && -x "$cand" ]]; then BIN="$cand"; break; fi
  done
fi
"$PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
open(sys.argv[2], "w").write(d["data"]["config.yaml"])' \
  "$DEPLOY/kubernetes/configmap.yaml" "$WORK/configmap-config.yaml"
if [[ -n "$BIN" ]]; then
  for cfg in "$WORK/configmap-config.yaml" "$DEPLOY/systemd/config.example.yaml"; do
    if out=$("$BIN" check-config --config.file "$cfg" 2>&1); then
      pass "check-config ${cfg#"$ROOT/"} (${out%%$'\n'*})"
    else
      printf '%s\n' "$out"
      fail "check-config ${cfg#"$ROOT/"}"
    fi
  done
else
  skip "no mcp-exporter binary (set MCP_EXPORTER_BIN or cargo build): example configs not checked"
fi

# ------------------------------------------------------ prometheus example
# The block after the marker comment in deploy/README.md.
"$PY" - "$DEPLOY/README.md" "$WORK/prom/prometheus.yml" <<'PYEOF'
import pathlib, sys
text = pathlib.Path(sys.argv[1]).read_text().splitlines()
marker = "<!-- check-deploy: prometheus.yml -->"
i = text.index(marker)
assert text[i + 1].startswith("```"), "a fenced block must follow the marker"
end = text.index("```", i + 2)
out = pathlib.Path(sys.argv[2]); out.parent.mkdir(parents=True, exist_ok=True)
out.write_text("\n".join(text[i + 2:end]) + "\n")
PYEOF
RULES="$ROOT/alerts/mcp-exporter.rules.yaml"
mkdir -p "$WORK/prom/rules"
if [[ -f "$RULES" ]]; then
  cp "$RULES" "$WORK/prom/rules/"
  # The PrometheusRule wrapping shown in the README must yield spec.groups.
  { printf 'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\n'
    printf 'metadata:\n  name: mcp-exporter\n  labels:\n    release: kube-prometheus-stack\nspec:\n'
    sed 's/^/  /' "$RULES"
  } >"$WORK/prometheusrule.yaml"
  if "$PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["kind"] == "PrometheusRule" and d["spec"]["groups"], "no spec.groups"' "$WORK/prometheusrule.yaml"; then
    pass "README's PrometheusRule wrapping of alerts/mcp-exporter.rules.yaml yields spec.groups"
  else
    fail "PrometheusRule wrapping"
  fi
else
  skip "alerts/mcp-exporter.rules.yaml not in this tree: rule_files glob checked empty"
fi
if command -v promtool >/dev/null; then
  if out=$(promtool check config "$WORK/prom/prometheus.yml" 2>&1); then
    pass "promtool check config on the README's scrape_configs$( [[ -f "$RULES" ]] && echo ' (with the alert rules)')"
  else
    printf '%s\n' "$out"
    fail "promtool check config"
  fi
else
  skip "promtool not installed: Prometheus example not checked"
fi

# ------------------------------------------------------------------ systemd
UNIT="$DEPLOY/systemd/mcp-exporter.service"
if command -v systemd-analyze >/dev/null; then
  # verify insists that ExecStart's binary exists; point it at one that does.
  mkdir -p "$WORK/unit"
  sed "s#^ExecStart=/usr/local/bin/mcp-exporter#ExecStart=$(command -v true)#" "$UNIT" >"$WORK/unit/mcp-exporter.service"
  # verify exits 0 on unknown keys and only prints a warning: any output fails.
  out=$(systemd-analyze verify "$WORK/unit/mcp-exporter.service" 2>&1 || echo "exit status $?")
  if [[ -z "$out" ]]; then
    pass "systemd-analyze verify (no warnings)"
  else
    printf '%s\n' "$out"
    fail "systemd-analyze verify"
  fi
  if score=$(systemd-analyze security --offline=yes "$WORK/unit/mcp-exporter.service" 2>/dev/null | grep -o 'Overall exposure level.*'); then
    pass "systemd-analyze security: $score"
  else
    skip "systemd-analyze security --offline not supported here"
  fi
else
  skip "systemd-analyze not installed: unit not verified"
fi
# The env file: comments, blank lines and KEY=VALUE only.
if grep -nvE '^(#.*|[[:space:]]*|[A-Za-z_][A-Za-z0-9_]*=.*)$' "$DEPLOY/systemd/mcp-exporter.env"; then
  fail "mcp-exporter.env has lines that are neither comments nor KEY=VALUE"
else
  pass "mcp-exporter.env is comments and KEY=VALUE lines"
fi
for key in 'DynamicUser=yes' 'StateDirectory=mcp-exporter' 'ProtectSystem=strict' 'NoNewPrivileges=yes' \
           'ExecReload=/bin/kill -HUP $MAINPID' 'Restart=on-failure' 'LoadCredential='; do
  grep -qF -- "$key" "$UNIT" || fail "unit lacks $key"
done

# ------------------------------------------------------------ Dockerfile
# Static facts only: no container engine here, the image is not built.
if "$PY" - "$DEPLOY/Dockerfile" "$ROOT" <<'PYEOF'
import json, pathlib, re, sys, tomllib
df = pathlib.Path(sys.argv[1]).read_text()
root = pathlib.Path(sys.argv[2])
# Join continuation lines so each instruction is one line.
lines = re.sub(r"\\\n", " ", df).splitlines()
ins = [l.strip() for l in lines if l.strip() and not l.strip().startswith("#")]
errors = []
def first(word):
    return [l for l in ins if l.split()[0].upper() == word]
args = {m.group(1): m.group(2) for l in first("ARG") for m in [re.match(r"ARG\s+(\w+)=(\S+)", l)] if m}
froms = [l.split()[1] for l in first("FROM")]
froms = [re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), "?"), f) for f in froms]
if froms != ["rust:1-bookworm", "debian:bookworm-slim"]:
    errors.append(f"stages {froms}, expected rust:1-bookworm then debian:bookworm-slim")
if not any("cargo build --release --locked" in l for l in first("RUN")):
    errors.append("no `cargo build --release --locked`")
if not any("ca-certificates" in l for l in first("RUN")):
    errors.append("runtime does not install ca-certificates")
if [l.split()[1] for l in first("USER")][-1:] != ["10001:10001"]:
    errors.append("last USER is not 10001:10001")
if "9733" not in " ".join(first("EXPOSE")):
    errors.append("EXPOSE 9733 missing")
for word in ("ENTRYPOINT", "CMD", "HEALTHCHECK"):
    for l in first(word):
        form = l.split(None, 1)[1]
        if word == "HEALTHCHECK":
            form = form[form.index("CMD") + 3:].strip()
        try:
            json.loads(form)
        except ValueError as e:
            errors.append(f"{word} is not valid exec-form JSON: {e}")
ep = json.loads(first("ENTRYPOINT")[-1].split(None, 1)[1])
if ep != ["/usr/local/bin/mcp-exporter", "--config.file=/etc/mcp-exporter/config.yaml"]:
    errors.append(f"ENTRYPOINT is {ep}")
# Build-stage COPY sources must exist in the build context (the repo root).
copied = []
for l in first("COPY"):
    parts = [p for p in l.split()[1:] if not p.startswith("--")]
    if "--from=" in l:
        continue
    for src in parts[:-1]:
        copied.append(src.rstrip("/"))
        if not (root / src).exists():
            errors.append(f"COPY source {src} is not in the repository")
# Every target Cargo.toml declares must be inside what was copied, or cargo
# refuses to build.
cargo = tomllib.loads((root / "Cargo.toml").read_text())
for section in ("bin", "bench", "test", "example"):
    for t in cargo.get(section, []):
        p = t.get("path") or {"bench": f"benches/{t['name']}.rs", "test": f"tests/{t['name']}.rs",
                              "example": f"examples/{t['name']}.rs", "bin": f"src/bin/{t['name']}.rs"}[section]
        if not any(p == c or p.startswith(c + "/") for c in copied):
            errors.append(f"Cargo.toml [[{section}]] {p} is not copied into the build stage")
# So must every workspace member (path dependencies included): a missing
# member's Cargo.toml fails the build before anything compiles.
members = cargo.get("workspace", {}).get("members", [])
for member in (m for pattern in members for m in sorted(root.glob(pattern))):
    rel = member.relative_to(root).as_posix()
    if (member / "Cargo.toml").exists() and not any(rel == c or rel.startswith(c + "/") for c in copied):
        errors.append(f"workspace member {rel} is not copied into the build stage")
if cargo.get("package", {}).get("build") or (root / "build.rs").exists():
    if "build.rs" not in copied:
        errors.append("build.rs exists but is not copied")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
PYEOF
then pass "Dockerfile static checks (not built: no container engine here)"
else fail "Dockerfile static checks"
fi

echo
if ((failures)); then
  echo "check-deploy: $failures check(s) failed"
  exit 1
fi
echo "check-deploy: all checks passed"
