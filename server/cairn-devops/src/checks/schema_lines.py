# Adds the line and column of each check-jsonschema error (it gives a JSON path only), found
# by walking the file's YAML nodes; argv = the JSON report. Prints the report, changed or not.
import json, re, sys

import yaml

TOKEN = re.compile(r'\.([^.\[\]]+)|\[(\d+)\]|\[["\']((?:[^"\'\\]|\\.)*)["\']\]')


def place(filename, path, cache):
    if filename not in cache:
        try:
            with open(filename, encoding="utf-8") as f:
                cache[filename] = yaml.compose(f, Loader=yaml.SafeLoader)
        except Exception:
            cache[filename] = None
    node = cache[filename]
    if node is None or not path.startswith("$"):
        return 0, 0
    for m in TOKEN.finditer(path[1:]):
        key, index, quoted = m.group(1), m.group(2), m.group(3)
        if isinstance(node, yaml.MappingNode):
            want = quoted if quoted is not None else key if key is not None else index
            found = [v for k, v in node.value if getattr(k, "value", None) == want]
        elif isinstance(node, yaml.SequenceNode) and index is not None and int(index) < len(node.value):
            found = [node.value[int(index)]]
        else:
            found = []
        if not found:
            break
        node = found[0]
    return node.start_mark.line + 1, node.start_mark.column + 1


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        report = json.loads(text)
        cache = {}
        for e in report.get("errors", []):
            e["line"], e["col"] = place(e.get("filename", ""), e.get("path", "$"), cache)
        print(json.dumps(report))
    except Exception:
        print(text)


main()
