#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of `ttmsim stress` (suite stress-cli).

Usage: test_stress.py TTMSIM

- a 3-second run exits 0 and writes well-formed JUnit XML (testsuites /
  testsuite / testcase, counts that agree) and a JSON report whose counts
  add up (iterations, jobs, features, no failure);
- shards: the same seed and shard run the same workloads (seeds and
  checksums of the files); shards 1/3, 2/3 and 3/3 share no seed, and
  together are shard 1/1's sequence, interleaved;
- TTMSIM_TEST_STRESS_FAIL=1 (a test-only failure of run: >= 3 threads and
  a job on buffer 2): exit 1, the failing workload and a shrunk one in
  --out, the shrunk one minimal for that predicate (3 buffers of 4 bytes,
  one job on thread 2 listing only buffer 2, no feature left), the
  printed replay command fails (exit 1) with the hook and passes without
  it, and the JUnit <failure> names the seed;
- run --check-every: a run checked every 50 ms passes, 0 is exit 2;
- bad flags exit 2 naming the flag: --shard 3/2, --shard 0/2,
  --minutes -1, an unwritable --junit or --json, a file as --out.

Python 3 standard library only. Prints every check; exits 1 if any failed.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

if len(sys.argv) < 2:
    sys.exit("usage: test_stress.py TTMSIM")
TTMSIM = os.path.abspath(sys.argv[1])
failures = 0


def check(cond, what):
    global failures
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    sys.stdout.flush()
    if not cond:
        failures += 1
    return cond


def stress(args, env=None, cwd=None, timeout=300):
    e = dict(os.environ)
    e.pop("TTMSIM_TEST_STRESS_FAIL", None)
    if env:
        e.update(env)
    return subprocess.run([TTMSIM, "stress"] + args, cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=timeout)


def junit_ok(path, want_tests, want_failures):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        return check(False, "JUnit %s parses (%s)" % (path, e))
    suites = root.findall("testsuite")
    cases = root.findall("testsuite/testcase")
    fails = root.findall("testsuite/testcase/failure")
    return check(root.tag == "testsuites" and len(suites) == 1 and
                 int(root.get("tests")) == len(cases) == want_tests and
                 int(suites[0].get("tests")) == len(cases) and
                 int(root.get("failures")) == len(fails) == want_failures,
                 "JUnit %s: testsuites/testsuite/testcase, %d tests, %d "
                 "failures" % (path, want_tests, want_failures))


def test_clean(tmp):
    j, x, out = (os.path.join(tmp, n) for n in ("r.json", "r.xml", "out"))
    p = stress(["--seconds", "3", "--seed", "5", "--json", j, "--junit", x,
                "--out", out])
    check(p.returncode == 0, "3 s run exits 0 (got %d: %s)" %
          (p.returncode, p.stderr[-400:]))
    check("iterations" in p.stderr, "a status line on stderr")
    with open(j) as f:
        r = json.load(f)
    it = r["iteration_list"]
    check(r["iterations"] == len(it) > 0 and r["failures"] == 0 and
          r["failed"] == [], "JSON: %d iterations, no failure" %
          r["iterations"])
    check(r["jobs"] == sum(i["jobs"] for i in it), "JSON: jobs add up")
    for name, n in r["features"].items():
        check(n == sum(name in i["features"] for i in it),
              "JSON: feature %s counted %d times" % (name, n))
    check(all(i["status"] == 0 for i in it), "JSON: every status 0")
    junit_ok(x, len(it), 0)
    check(os.listdir(out) == [], "no workload left in --out after a clean "
          "run")


def seeds(tmp, shard, n):
    j = os.path.join(tmp, "s.json")
    p = stress(["--seconds", "600", "--iterations", str(n), "--seed", "77",
                "--shard", shard, "--json", j, "--out", tmp])
    check(p.returncode == 0, "--shard %s --iterations %d exits 0" %
          (shard, n))
    with open(j) as f:
        return [(i["seed"], i["workload_fnv1a"])
                for i in json.load(f)["iteration_list"]]


def test_shards(tmp):
    a = seeds(tmp, "2/3", 4)
    b = seeds(tmp, "2/3", 4)
    check(len(a) == 4 and a == b, "same seed and shard: same workloads "
          "(seeds and file checksums)")
    s1, s3 = seeds(tmp, "1/3", 4), seeds(tmp, "3/3", 4)
    all_seeds = [s for s, _ in s1 + a + s3]
    check(len(set(all_seeds)) == 12, "shards 1/3, 2/3, 3/3: disjoint seeds")
    whole = seeds(tmp, "1/1", 12)
    inter = [x for t in zip(s1, a, s3) for x in t]
    check(whole == inter, "the three shards interleave to shard 1/1")


def parse_workload(path):
    bos, jobs, other = [], [], []
    with open(path) as f:
        for line in f:
            w = line.split("#")[0].split()
            if not w:
                continue
            if w[0] == "bo":
                bos.append(w[1:])
            elif w[0] == "job":
                jobs.append(w[1:])
            else:
                other.append(w)
    return bos, jobs, other


def test_failure(tmp):
    out, x, j = (os.path.join(tmp, n) for n in ("fout", "f.xml", "f.json"))
    env = {"TTMSIM_TEST_STRESS_FAIL": "1"}
    p = stress(["--seconds", "30", "--seed", "3", "--out", out, "--junit", x,
                "--json", j], env=env)
    check(p.returncode == 1, "injected failure: exit 1 (got %d)" %
          p.returncode)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    wl = [f for f in files if re.fullmatch(r"stress-\d+\.wl", f)]
    mn = [f for f in files if re.fullmatch(r"stress-\d+\.min\.wl", f)]
    check(len(wl) == 1 and len(mn) == 1 and len(files) == 2,
          "the failing workload and a shrunk one in --out: %s" % files)
    if not (wl and mn):
        return
    seed = wl[0].split("-")[1].split(".")[0]
    check("seed %s" % seed in p.stderr, "stderr names the seed")
    bos, jobs, other = parse_workload(os.path.join(out, mn[0]))
    check(bos == [["b0", "4"], ["b1", "4"], ["b2", "4"]] or
          (len(bos) == 3 and all(b[1:] == ["4"] for b in bos)),
          "shrunk: 3 plain 4-byte buffers (%.200s)" % bos)
    check(len(jobs) == 1 and jobs[0][:4] == ["2", "0", "0", jobs[0][3]] and
          jobs[0][3].startswith("add=") and jobs[0][4:] == [bos[2][0]],
          "shrunk: one add job on thread 2, engine 0, 0 us, buffer 2 only "
          "(%.200s)" % jobs)
    check(other == [], "shrunk: no shrink line (%s)" % other)
    m = re.search(r"replay: (.*)", p.stderr)
    check(m is not None, "the replay command is printed")
    if not m:
        return
    words = shlex.split(m.group(1))
    check(words[0] == "TTMSIM_TEST_STRESS_FAIL=1" and words[1] == "ttmsim",
          "replay: %s" % m.group(1))
    check(not any(w in words for w in ("--vram", "--priorities",
                                       "wound-wait", "--hang-timeout-ms")),
          "shrunk: the run flags' features are off too")
    check(" --watchdog 30" in m.group(1) and
          re.search(r" --check-every [0-9.e-]+", m.group(1)) is not None,
          "replay: stress's --watchdog and --check-every (%s)" % m.group(1))
    cmd = [TTMSIM] + words[2:]
    e = dict(os.environ, **env)
    r = subprocess.run(cmd, env=e, capture_output=True, text=True)
    check(r.returncode == 1 and "TTMSIM_TEST_STRESS_FAIL" in r.stderr,
          "the replay fails with the hook (exit %d)" % r.returncode)
    e.pop("TTMSIM_TEST_STRESS_FAIL")
    r = subprocess.run(cmd + ["--quiet"], env=e, capture_output=True,
                       text=True)
    check(r.returncode == 0, "the replay passes without the hook")
    root = ET.parse(x).getroot()
    f = root.findall("testsuite/testcase/failure")
    check(len(f) == 1 and seed in f[0].get("message"),
          "JUnit failure names the seed")
    with open(j) as fp:
        rep = json.load(fp)
    check(rep["failures"] == 1 and str(rep["failed"][0]["seed"]) == seed and
          rep["failed"][0]["shrunk"].endswith(mn[0]),
          "JSON names the failure, its seed and shrunk file")


def test_run_check_every(tmp):
    p = subprocess.run([TTMSIM, "run", "--check-every", "0.05", "--jobs",
                        "300", "--bos", "64", "--vram", "256K", "--quiet"],
                       capture_output=True, text=True)
    check(p.returncode == 0, "run --check-every 0.05 exits 0 (got %d: %s)" %
          (p.returncode, p.stderr[-200:]))
    p = subprocess.run([TTMSIM, "run", "--check-every", "0"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "--check-every" in p.stderr,
          "run --check-every 0: exit 2 naming it")


def test_usage(tmp):
    cases = [
        (["--shard", "3/2"], "--shard"),
        (["--shard", "0/2"], "--shard"),
        (["--shard", "2"], "--shard"),
        (["--minutes", "-1"], "--minutes"),
        (["--seconds", "0"], "--seconds"),
        (["--junit", "/nonexistent/dir/x.xml"], "--junit"),
        (["--json", "/nonexistent/dir/x.json"], "--json"),
        (["--out", "/proc/version"], "--out"),
        (["--bogus"], "--bogus"),
    ]
    for args, flag in cases:
        p = stress(args + ["--seconds", "1"] if args[0] != "--seconds"
                   else args)
        check(p.returncode == 2 and flag in p.stderr,
              "%s: exit 2 naming %s (got %d: %s)" %
              (" ".join(args), flag, p.returncode, p.stderr.strip()[:120]))


with tempfile.TemporaryDirectory() as tmp:
    for t in (test_usage, test_run_check_every, test_clean, test_shards, test_failure):
        d = os.path.join(tmp, t.__name__)
        os.mkdir(d)
        t(d)

print("test_stress: %s" % ("all passed" if not failures else
                           "%d FAILED" % failures))
sys.exit(1 if failures else 0)
