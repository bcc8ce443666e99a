"""cairn eval's unittest runner: runs the named test modules and prints one report line.

Started as `python3 -I -S runner.py WORKSPACE MODULE...` with a nonce on stdin. `-I -S` keep
site hooks (sitecustomize, usercustomize, .pth files) and the environment out; the workspace
goes last on sys.path, after the standard library is imported, so a workspace `unittest.py`
cannot stand in for it. The report line starts with the nonce, which the code under test never
sees on stdin or argv, so what a test prints cannot pose as the report; a process that ends
before the report (os._exit in a module) reports nothing and fails.
"""

import json
import os
import sys
import unittest


def main():
    nonce = sys.stdin.readline().strip()
    workspace = os.path.abspath(sys.argv[1])
    names = sys.argv[2:]
    out = os.fdopen(os.dup(1), "w")
    sys.stdin = open(os.devnull)
    sys.path.append(workspace)
    os.chdir(workspace)
    report = {"passed": [], "failed": [], "skipped": [], "error": None}

    class Result(unittest.TestResult):
        def addSuccess(self, test):
            super().addSuccess(test)
            report["passed"].append(test.id())

    try:
        suite = unittest.defaultTestLoader.loadTestsFromNames(names)
        result = Result()
        suite.run(result)
        for test, trace in result.failures + result.errors:
            report["failed"].append([test.id(), trace[-600:]])
        for test in result.unexpectedSuccesses:
            report["failed"].append([test.id(), "passed, but is marked as an expected failure"])
        for test, why in result.skipped:
            report["skipped"].append([test.id(), str(why)[:200]])
        for test, _ in result.expectedFailures:
            report["skipped"].append([test.id(), "expected failure"])
    except BaseException as e:  # noqa: B036 - SystemExit from the code under test included
        report["error"] = repr(e)[:600]
    out.write("\n" + nonce + " " + json.dumps(report) + "\n")
    out.flush()
    os._exit(0)


main()
