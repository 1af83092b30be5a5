#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`ttmsim bench all --quick --json` end to end (suite cli).

Usage: test_bench.py TTMSIM

Checks that the output is one well-formed JSON document in the envelope of
docs/benchmarks.md (for the whole run and for every benchmark in it), and
that checks_ok is true for each. It checks no figure: on a shared machine
any threshold on a measurement is a flaky test.

Python 3 standard library only. Exits 1 if any check failed.
"""
import json
import subprocess
import sys

ENVELOPE = ("tool", "version", "benchmark", "config", "results",
            "checks_ok", "wall_s")
BENCHMARKS = ["ww", "gpu", "bo", "execbuf"]

failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)
    return ok


def check_envelope(e, name):
    if not check(isinstance(e, dict), "%s: an object" % name):
        return
    check(all(k in e for k in ENVELOPE),
          "%s: has every key of the envelope %s" % (name, ENVELOPE))
    check(e.get("tool") == "ttmsim" and e.get("benchmark") == name,
          "%s: tool ttmsim, benchmark %s" % (name, name))
    check(isinstance(e.get("config"), dict), "%s: config is an object" % name)
    check(isinstance(e.get("results"), list) and len(e["results"]) > 0,
          "%s: results is a non-empty array" % name)
    # `is True`: the boolean, never a number or a string.
    check(e.get("checks_ok") is True, "%s: checks_ok is true" % name)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_bench.py TTMSIM")
    cmd = [sys.argv[1], "bench", "all", "--quick", "--json"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        check(False, "%s ends within 240 s" % " ".join(cmd))
        return 1
    sys.stderr.write(p.stderr)
    check(p.returncode == 0, "exit status 0 (got %d)" % p.returncode)
    try:
        doc = json.loads(p.stdout)
    except ValueError as err:
        check(False, "stdout is one JSON document: %s" % err)
        return 1
    check(True, "stdout is one JSON document")
    check_envelope(doc, "all")
    results = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(results, list):
        check([e.get("benchmark") for e in results
               if isinstance(e, dict)] == BENCHMARKS,
              "all: results are the envelopes of %s" % BENCHMARKS)
        for e in results:
            if isinstance(e, dict):
                check_envelope(e, e.get("benchmark"))
                check(all(isinstance(r, dict) and "part" in r
                          for r in e.get("results", [])),
                      "%s: every record names its part"
                      % e.get("benchmark"))
    print("test_bench: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
