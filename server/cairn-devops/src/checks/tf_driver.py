# The check_terraform driver, run by python3 in the devops image: argv = module directories.
# Parses every .tf file with python-hcl2 (syntax errors with their place), then checks that
# each reference (var., local., module., data., resource) is declared in its module.
import glob, json, os, re, sys

import hcl2

MAX_FILES = 500
REF = re.compile(r'(?<![\w.\-"])([A-Za-z_][\w-]*)\.([A-Za-z_][\w-]*)(?:\.([A-Za-z_][\w-]*))?')
BUILTIN = {"each", "count", "path", "self", "terraform"}
findings, files_checked = [], []


def finding(file, line, col, sev, code, msg):
    findings.append({"file": file, "line": line, "col": col, "severity": sev, "code": code, "message": msg})


def unq(s):
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s


def exprs(value):
    # The ${...} expressions of every string in a parsed value.
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "__is_block__":
                yield from exprs(v)
    elif isinstance(value, list):
        for v in value:
            yield from exprs(v)
    elif isinstance(value, str) and "${" in value:
        yield value


def check_module(d):
    tfs = sorted(glob.glob(os.path.join(d, "*.tf")))[:MAX_FILES]
    declared = {"var": set(), "local": set(), "module": set(), "data": set(), "resource": set()}
    parsed = []
    for f in tfs:
        files_checked.append(f)
        try:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            doc = hcl2.loads(text)
        except UnicodeDecodeError as e:
            finding(f, 0, 0, "error", "read", str(e))
            continue
        except Exception as e:  # lark's parse errors carry the place
            msg = str(e).split("\n")[0]
            finding(f, getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0, "error", "syntax", msg)
            continue
        parsed.append((f, text, doc))
        for block in doc.get("variable", []):
            declared["var"].update(unq(k) for k in block if k != "__is_block__")
        for block in doc.get("locals", []):
            declared["local"].update(k for k in block if k != "__is_block__")
        for block in doc.get("module", []):
            declared["module"].update(unq(k) for k in block if k != "__is_block__")
        for kind in ("resource", "data"):
            for block in doc.get(kind, []):
                for t, names in block.items():
                    if isinstance(names, dict):
                        declared[kind].update("%s.%s" % (unq(t), unq(n)) for n in names if n != "__is_block__")
    for f, text, doc in parsed:
        reported = set()
        for e in exprs(doc):
            for m in REF.finditer(e):
                a, b, c = m.group(1), m.group(2), m.group(3)
                if a in BUILTIN:
                    continue
                if a in ("var", "local", "module"):
                    ok, ref = b in declared[a], "%s.%s" % (a, b)
                elif a == "data":
                    if c is None:
                        continue
                    ok, ref = "%s.%s" % (b, c) in declared["data"], "data.%s.%s" % (b, c)
                elif "_" in a and a[0].islower():
                    ok, ref = "%s.%s" % (a, b) in declared["resource"], "%s.%s" % (a, b)
                else:
                    continue
                if ok or ref in reported:
                    continue
                reported.add(ref)
                at = re.search(r'(?<![\w.\-])' + re.escape(ref) + r'(?![\w-])', text)
                line = text.count("\n", 0, at.start()) + 1 if at else 0
                col = at.start() - text.rfind("\n", 0, at.start()) if at else 0
                what = {"var": "variable", "local": "local value", "module": "module call", "data": "data source"}.get(a, "resource")
                finding(f, line, col, "error", "undeclared", "reference to undeclared %s %s (not declared in any .tf file of %s)" % (what, ref, d or "."))
    if not tfs:
        finding(d, 0, 0, "error", "no-files", "no .tf files in this directory")


def main():
    for d in sys.argv[1:]:
        check_module(d)
    print(json.dumps({"findings": findings, "files": len(files_checked)}))


main()
