# The check_kubernetes driver, run by python3 in the devops image: argv = version, show, paths.
# Prints one JSON object: findings, notes, rendered YAML (when asked) and the schema version.
import json, os, sys

import yaml
import kubernetes_validate as kv
import kubernetes_validate.utils

MAX_NODES = 200000
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUPPORTED = {"apiVersion", "kind", "resources", "namePrefix", "nameSuffix", "namespace",
             "commonLabels", "commonAnnotations"}
findings, notes, rendered = [], [], []


def finding(file, line, col, sev, code, msg):
    findings.append({"file": file, "line": line, "col": col, "severity": sev, "code": code, "message": msg})


def size(node, memo):
    # Nodes after expanding aliases: a billion-laughs document is refused before it is built.
    if id(node) in memo:
        return memo[id(node)]
    memo[id(node)] = 1
    n = 1
    if isinstance(node, yaml.SequenceNode):
        n += sum(size(c, memo) for c in node.value)
    elif isinstance(node, yaml.MappingNode):
        n += sum(size(k, memo) + size(v, memo) for k, v in node.value)
    n = min(n, MAX_NODES + 1)
    memo[id(node)] = n
    return n


def mark(node, path):
    # The line and column of the deepest node the error path reaches.
    for key in path:
        if isinstance(node, yaml.MappingNode):
            nxt = [v for k, v in node.value if getattr(k, "value", None) == key]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = [node.value[key]]
        else:
            nxt = []
        if not nxt:
            break
        node = nxt[0]
    return node.start_mark.line + 1, node.start_mark.column + 1


def documents(path):
    # (node, data) per document of a file; problems become findings.
    try:
        with open(path, encoding="utf-8") as f:
            nodes = list(yaml.compose_all(f, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as e:
        m = e.problem_mark
        finding(path, m.line + 1 if m else 0, m.column + 1 if m else 0, "error", "yaml", str(e.problem or e))
        return []
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        finding(path, 0, 0, "error", "read", str(e))
        return []
    out = []
    for node in nodes:
        if node is None:
            continue
        if size(node, {}) > MAX_NODES:
            finding(path, node.start_mark.line + 1, 1, "error", "too-large",
                    "the document expands to more than %d nodes (YAML anchors and aliases); not validated" % MAX_NODES)
            continue
        loader = yaml.SafeLoader("")
        out.append((node, loader.construct_document(node)))
    return out


def kustomize(d, depth=0):
    # A Helm-free render of the common kustomize fields; anything else is named in a note.
    name = next((k for k in KUSTOMIZATIONS if os.path.isfile(os.path.join(d, k))), None)
    if name is None or depth > 10:
        finding(d, 0, 0, "error", "kustomize", "no kustomization.yaml in this directory")
        return []
    kpath = os.path.join(d, name)
    docs = documents(kpath)
    if not docs or not isinstance(docs[0][1], dict):
        return []
    k = docs[0][1]
    for key in sorted(set(k) - SUPPORTED):
        notes.append("%s: `%s` is not rendered by this check (supported: resources, namePrefix, nameSuffix, namespace, commonLabels, commonAnnotations)" % (kpath, key))
    out = []
    for res in k.get("resources") or []:
        p = os.path.normpath(os.path.join(d, str(res)))
        if "://" in str(res) or str(res).startswith(("github.com/", "git@")):
            notes.append("%s: remote resource %s is not fetched (no network); not rendered" % (kpath, res))
        elif os.path.isdir(p):
            out.extend(kustomize(p, depth + 1))
        elif os.path.isfile(p):
            out.extend((p, n, data) for n, data in documents(p))
        else:
            finding(kpath, 0, 0, "error", "kustomize", "resource %s does not exist" % res)
    for _, _, obj in out:
        if not isinstance(obj, dict):
            continue
        meta = obj.setdefault("metadata", {}) or {}
        obj["metadata"] = meta
        if "name" in meta:
            meta["name"] = "%s%s%s" % (k.get("namePrefix", ""), meta["name"], k.get("nameSuffix", ""))
        if k.get("namespace"):
            meta["namespace"] = k["namespace"]
        for field in ("commonLabels", "commonAnnotations"):
            if k.get(field):
                target = "labels" if field == "commonLabels" else "annotations"
                meta[target] = {**(meta.get(target) or {}), **k[field]}
        if k.get("commonLabels"):
            spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
            if spec and isinstance(spec.get("selector"), dict):
                sel = spec["selector"]
                if obj.get("kind") == "Service":
                    spec["selector"] = {**sel, **k["commonLabels"]}
                else:
                    sel["matchLabels"] = {**(sel.get("matchLabels") or {}), **k["commonLabels"]}
            tmpl = spec.get("template") if spec else None
            if isinstance(tmpl, dict):
                tm = tmpl.setdefault("metadata", {}) or {}
                tmpl["metadata"] = tm
                tm["labels"] = {**(tm.get("labels") or {}), **k["commonLabels"]}
    return out


def main():
    version, show, paths = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
    if version == "latest":
        version = kv.utils.latest_version()
    known = sorted({kv.utils.major_minor(v) for v in kv.utils.all_versions()}, key=lambda v: [int(p) for p in v.split(".")])
    if kv.utils.major_minor(version.lstrip("v")) not in known:
        print(json.dumps({"fatal": "kubernetes-validate does not support version %s; it has the schemas of %s to %s" % (version, known[0], known[-1])}))
        return
    objects = []
    for p in paths:
        if os.path.isdir(p):
            before = len(findings)
            objs = kustomize(p)
            objects.extend(objs)
            if show and len(findings) == before:
                rendered.append(yaml.safe_dump_all([o for _, _, o in objs], sort_keys=False))
        else:
            objects.extend((p, n, data) for n, data in documents(p))
    used = None
    for path, node, data in objects:
        if not isinstance(data, dict) or "kind" not in data or "apiVersion" not in data:
            line, col = mark(node, [])
            finding(path, line, col, "error", "not-a-resource", "the document has no apiVersion and kind")
            continue
        try:
            used = kv.validate(data, version, strict=True)
        except kv.ValidationError as e:
            line, col = mark(node, list(e.path))
            where = ".".join(str(p) for p in e.path) or "(top)"
            finding(path, line, col, "error", "schema", "%s %s: at %s: %s" % (data.get("kind"), (data.get("metadata") or {}).get("name", ""), where, e.message))
        except kv.SchemaNotFoundError as e:
            line, col = mark(node, ["kind"])
            finding(path, line, col, "warning", "unknown-kind", e.message + " (a custom resource is not checked)")
        except Exception as e:  # a malformed document must not end the whole check
            line, col = mark(node, [])
            finding(path, line, col, "error", "invalid", "%s: %s" % (type(e).__name__, e))
    print(json.dumps({"findings": findings, "notes": notes, "rendered": rendered,
                      "version": used or kv.utils.major_minor(version), "objects": len(objects)}))


main()
