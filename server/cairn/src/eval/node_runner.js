// cairn eval's Node runner: runs the named test files and prints one report line.
//
// Started as `node --disallow-code-generation-from-strings runner.js WORKSPACE FILE...` with a
// nonce on stdin. Each file is compiled as a function whose `test(name, fn)` is this runner's own
// closure, passed as a parameter, so code under test can neither replace it nor reach the list of
// results; `node:assert` is frozen before any of it loads, so it cannot be neutered. The report
// line starts with the nonce, which only this closure holds (no frame of it is reachable from the
// code under test), so what a test prints cannot pose as the report; a process that exits before
// the report (process.exit in a module) reports nothing and fails.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { createRequire } = require('node:module');

const writeSync = fs.writeSync;
const stringify = JSON.stringify;
const exit = process.exit.bind(process);

for (const name of ['node:assert', 'node:assert/strict']) {
  const assert = require(name);
  Object.freeze(assert);
  Object.freeze(assert.AssertionError.prototype);
}

async function main() {
  const nonce = fs.readFileSync(0, 'utf8').split('\n')[0].trim();
  const workspace = path.resolve(process.argv[2]);
  const files = process.argv.slice(3);
  process.chdir(workspace);
  const report = { passed: [], failed: [], skipped: [], error: null };
  const cut = (e) => String(e && e.stack ? e.stack : e).slice(-600);
  try {
    for (const rel of files) {
      const file = path.join(workspace, rel);
      const tests = [];
      const test = (name, fn) => {
        tests.push([`${rel}: ${String(name)}`, fn]);
      };
      const source = fs.readFileSync(file, 'utf8');
      const body = vm.compileFunction(
        source,
        ['test', 'require', 'module', 'exports', '__filename', '__dirname'],
        { filename: file },
      );
      const module = { exports: {} };
      body(test, createRequire(file), module, module.exports, file, path.dirname(file));
      for (const [id, fn] of tests) {
        try {
          if (typeof fn !== 'function') throw new TypeError('the test is not a function');
          await fn();
          report.passed.push(id);
        } catch (e) {
          report.failed.push([id, cut(e)]);
        }
      }
    }
  } catch (e) {
    report.error = cut(e);
  }
  writeSync(1, '\n' + nonce + ' ' + stringify(report) + '\n');
  exit(0);
}

main();
