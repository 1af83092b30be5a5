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
- TTMSIM_TEST_FAULT=shrinkable (a test-only failure of run: >= 3 threads
  and a job on buffer 2; with exactly 2 threads, a decoy failure with
  another message): exit 1, the failing workload and a shrunk one in
  --out, the shrunk one minimal for that predicate (3 buffers of 4 bytes,
  one job on thread 2 listing only buffer 2, no feature left: a shrinker
  that kept any exit 1 drifts to the decoy, thread 1), said "minimal",
  the printed replay command fails the same way (exit 1) with the fault
  and passes without it, and the JUnit <failure> names the seed;
- run --check-every: a run checked every 50 ms passes, 0 is exit 2; the
  mid-run check can fail: TTMSIM_TEST_FAULT=live-count (its snapshot of
  the counters off by one) fails a run with --check-every and not one
  without; stress reports it and shrinks it with the same --check-every
  (else every candidate passes) to one job; with too little shrink time
  it says "shrunk (time limit reached, not minimal)" on stderr, in the
  JSON and the JUnit XML;
- each case runs in a child: a sanitizer's report in a run that exits 0
  (TTMSIM_TEST_FAULT=sanitizer) and an abort() (abort) are failures kept
  in the reports; invalid UTF-8 and control bytes in run's messages
  (bad-utf8) and in the --out path give valid JSON and XML;
- a status line every --status-every while a case runs (stall holds the
  case), and SIGTERM then ends it: exit 130, reports written;
- --help names the PRIME, syncobj and range cases;
- a failure that needs a syncobj wait (no-wait), when its shrink ends
  "minimal", keeps a wait and no syncobj line that no word names;
- bad flags exit 2 naming the flag: --shard 3/2, --shard 0/2,
  --minutes -1, an unwritable --junit or --json, a file as --out.

Python 3 standard library only. Prints every check; exits 1 if any failed.
"""
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
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
    e.pop("TTMSIM_TEST_FAULT", None)
    if env:
        e.update(env)
    return subprocess.run([TTMSIM, "stress"] + args, cwd=cwd, env=e,
                          capture_output=True, text=True, errors="replace",
                          timeout=timeout)


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
    env = {"TTMSIM_TEST_FAULT": "shrinkable"}
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
    check(re.search(r"shrinkable: \d+ threads and a job", p.stderr) and
          "decoy" not in p.stderr.split("shrinking")[0],
          "the case failed on the predicate, not the decoy")
    check(re.search(r"ttmsim stress: minimal after \d+ tries", p.stderr),
          "stderr: minimal")
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
    check(words[0] == "TTMSIM_TEST_FAULT=shrinkable" and
          words[1] == "ttmsim",
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
    check(r.returncode == 1 and
          "shrinkable: 3 threads and a job on buffer 2" in r.stderr,
          "the replay fails the same way with the fault (exit %d)" %
          r.returncode)
    e.pop("TTMSIM_TEST_FAULT")
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
          rep["failed"][0]["shrunk"].endswith(mn[0]) and
          rep["failed"][0]["shrink"] == "minimal",
          "JSON names the failure, its seed and shrunk file, minimal")
    check(rep["failed"][0].get("signature") ==
          "ttmsim: invariant: TTMSIM_TEST_FAULT=shrinkable: # threads and "
          "a job on buffer # (test-only failure)",
          "JSON: the failure signature, numbers as # (%s)" %
          rep["failed"][0].get("signature"))


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


def run_fault(args, fault=None):
    e = dict(os.environ)
    e.pop("TTMSIM_TEST_FAULT", None)
    if fault:
        e["TTMSIM_TEST_FAULT"] = fault
    return subprocess.run([TTMSIM, "run"] + args, env=e,
                          capture_output=True, text=True)


def test_live_check(tmp):
    """run --check-every's mid-run check can fail, and stress reports it."""
    wl = os.path.join(tmp, "w.txt")
    with open(wl, "w") as f:
        f.write("bo a 4096\nbo b 8192\n")
        for t in range(3):
            f.write("job %d 0 100 add=%d a b\n" % (t, t + 1))
    base = ["--workload", wl, "--quiet", "--watchdog", "30"]
    p = run_fault(base + ["--check-every", "0.05"])
    check(p.returncode == 0, "run --check-every 0.05 without a fault: exit "
          "0 (got %d: %s)" % (p.returncode, p.stderr[-200:]))
    p = run_fault(base + ["--check-every", "0.05"], "live-count")
    check(p.returncode == 1 and
          "invariant: during the run" in p.stderr,
          "live-count: the mid-run check reports it, exit 1 (got %d: %s)" %
          (p.returncode, p.stderr[-300:]))
    p = run_fault(base, "live-count")
    check(p.returncode == 0, "live-count without --check-every: exit 0, "
          "only the mid-run check sees it (got %d)" % p.returncode)

    out, j = os.path.join(tmp, "out"), os.path.join(tmp, "l.json")
    p = stress(["--iterations", "1", "--seconds", "60", "--seed", "3",
                "--check-every", "0.05", "--out", out, "--json", j],
               env={"TTMSIM_TEST_FAULT": "live-count"})
    check(p.returncode == 1, "stress, live-count: exit 1 (got %d)" %
          p.returncode)
    with open(j) as f:
        rep = json.load(f)
    fl = rep["failed"]
    check(len(fl) == 1 and "invariant: during the run" in fl[0]["message"],
          "stress: the JSON failure has the mid-run check's message")
    check(len(fl) == 1 and fl[0].get("shrink") == "minimal" and
          "--check-every 0.05" in fl[0]["replay"],
          "stress: shrunk to minimal, the replay with --check-every 0.05")
    if fl and fl[0].get("shrunk"):
        bos, jobs, other = parse_workload(fl[0]["shrunk"])
        check(len(jobs) == 1 and len(bos) == 1,
              "stress: the candidates ran with --check-every: shrunk to 1 "
              "job, 1 buffer (%.100s, %.100s)" % (bos, jobs))

    # Each candidate waits for a check (100 ms or more): 0.3 s is short.
    out, j, x = (os.path.join(tmp, n) for n in ("out2", "t.json", "t.xml"))
    p = stress(["--iterations", "1", "--seconds", "60", "--seed", "3",
                "--check-every", "0.05", "--shrink-seconds", "0.3",
                "--out", out, "--json", j, "--junit", x],
               env={"TTMSIM_TEST_FAULT": "live-count"})
    want = "shrunk (time limit reached, not minimal)"
    check(p.returncode == 1 and want in p.stderr and
          "minimal after" not in p.stderr,
          "shrink time out: stderr says '%s'" % want)
    with open(j) as f:
        rep = json.load(f)
    check(rep["failed"][0].get("shrink") == want, "JSON says '%s'" % want)
    f = ET.parse(x).getroot().findall("testsuite/testcase/failure")
    check(len(f) == 1 and want in f[0].get("message"),
          "JUnit says '%s'" % want)


def test_child(tmp):
    """Each case in a child: a sanitizer report, a signal."""
    out, j, x = (os.path.join(tmp, n) for n in ("out", "s.json", "s.xml"))
    p = stress(["--iterations", "1", "--seconds", "60", "--seed", "3",
                "--shrink-seconds", "5", "--out", out, "--json", j,
                "--junit", x], env={"TTMSIM_TEST_FAULT": "sanitizer"})
    check(p.returncode == 1, "a sanitizer's report in a run that exits 0: "
          "stress exits 1 (got %d)" % p.returncode)
    with open(j) as f:
        fl = json.load(f)["failed"]
    check(len(fl) == 1 and fl[0]["status"] == 0 and fl[0]["failed"] and
          fl[0].get("sanitizer") is True and
          "runtime error:" in fl[0]["message"] and
          "runtime error:" in fl[0]["signature"],
          "JSON: status 0, failed, sanitizer, the report in the message")
    f = ET.parse(x).getroot().findall("testsuite/testcase/failure")
    check(len(f) == 1 and "sanitizer" in f[0].get("type") and
          "runtime error:" in (f[0].text or ""),
          "JUnit: a failure of type sanitizer with the report")

    out, j = os.path.join(tmp, "out2"), os.path.join(tmp, "a.json")
    p = stress(["--iterations", "1", "--seconds", "60", "--seed", "3",
                "--shrink-seconds", "5", "--out", out, "--json", j],
               env={"TTMSIM_TEST_FAULT": "abort"})
    check(p.returncode == 1 and "killed by SIGABRT" in p.stderr,
          "a case's run ends by SIGABRT: stress reports it, exit 1 (got %d)"
          % p.returncode)
    with open(j) as f:
        fl = json.load(f)["failed"]
    check(len(fl) == 1 and fl[0]["status"] == 134 and
          fl[0].get("signal") == "SIGABRT",
          "JSON: status 134, signal SIGABRT")


def no_controls(v):
    """No control character but tab and newline in any string of @v."""
    if isinstance(v, str):
        return not re.search("[\x00-\x08\x0b-\x1f\x7f]", v)
    if isinstance(v, dict):
        return all(no_controls(k) and no_controls(x) for k, x in v.items())
    if isinstance(v, list):
        return all(no_controls(x) for x in v)
    return True


def test_utf8(tmp):
    """Invalid UTF-8 and control bytes never reach the JSON or the XML."""
    out = os.path.join(os.fsencode(tmp), b"out-\xff\x01-\xc3")
    j, x = os.path.join(tmp, "u.json"), os.path.join(tmp, "u.xml")
    e = dict(os.environ, TTMSIM_TEST_FAULT="bad-utf8")
    p = subprocess.run([os.fsencode(TTMSIM), b"stress", b"--iterations",
                        b"1", b"--seconds", b"60", b"--seed", b"3",
                        b"--shrink-seconds", b"5", b"--out", out, b"--json",
                        os.fsencode(j), b"--junit", os.fsencode(x)],
                       env=e, capture_output=True)
    check(p.returncode == 1 and b"\xff\xfe" in p.stderr,
          "bad-utf8: exit 1, the raw bytes on stderr (got %d)" %
          p.returncode)
    with open(j, "rb") as f:
        raw = f.read()
    try:
        rep = json.loads(raw.decode("utf-8", errors="strict"))
        ok = True
    except (UnicodeDecodeError, ValueError) as err:
        ok, rep = False, None
        check(False, "JSON is valid UTF-8 and parses (%s)" % err)
    if ok:
        fl = rep["failed"]
        check(len(fl) == 1 and "\ufffd" in fl[0]["message"] and
              "\ufffd" in fl[0]["workload"] and
              "<&\"'> \u00e9" in fl[0]["message"],
              "JSON: the bad bytes of the message and path are U+FFFD, "
              "the good ones kept")
        check(no_controls(rep), "JSON: no control character in a string")
    try:
        root = ET.parse(x).getroot()
        f = root.findall("testsuite/testcase/failure")
        check(len(f) == 1 and "\ufffd" in (f[0].text or "") and
              "<&\"'> \u00e9" in f[0].text,
              "JUnit parses; the failure's text has U+FFFD and the escaped "
              "<&\"'>")
    except ET.ParseError as err:
        check(False, "JUnit XML parses (%s)" % err)


def test_status_and_interrupt(tmp):
    """Status lines while one case runs; SIGTERM then: exit 130."""
    out, j = os.path.join(tmp, "out"), os.path.join(tmp, "i.json")
    e = dict(os.environ, TTMSIM_TEST_FAULT="stall")
    # stall holds the first case until a signal (or run's 30 s watchdog).
    p = subprocess.Popen([TTMSIM, "stress", "--seconds", "120", "--seed",
                          "3", "--status-every", "0.2", "--out", out,
                          "--json", j], env=e, stderr=subprocess.PIPE,
                         text=True, errors="replace")
    lines = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(l) for l in
                                              p.stderr] + [lines.put(None)])
    reader.start()
    seen, got = 0, []
    while seen < 2:
        try:
            line = lines.get(timeout=20)
        except queue.Empty:
            break
        if line is None:
            break
        got.append(line)
        if re.search(r"shard 1/1, 0 iterations, .* running seed", line):
            seen += 1
    check(seen == 2, "two status lines while the first case runs (%s)" %
          "".join(got)[-300:])
    p.terminate()
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    reader.join()
    rest = []
    while not lines.empty():
        rest.append(lines.get() or "")
    check(rc == 130 and "interrupted (SIGTERM)" in "".join(rest),
          "SIGTERM while a case runs: passed on, exit 130 (got %d)" % rc)
    with open(j) as f:
        rep = json.load(f)
    check(rep["iterations"] == 0 and rep["failures"] == 0,
          "the report is written: the interrupted case not counted")


def test_shrink_syncobj(tmp):
    """A failure that needs a wait (TTMSIM_TEST_FAULT=no-wait: the waits
    are not passed, the verifier sees a job start before the one it waits
    for ended) shrinks to a minimal pair: dropping a signaller's job drops
    its waits too, so the candidates do not fail to load (exit 2, another
    signature) instead, and the syncobj lines left unnamed go."""
    env = {"TTMSIM_TEST_FAULT": "no-wait"}
    p = stress(["--seconds", "240", "--shrink-seconds", "90", "--out", tmp,
                "--status-every", "1000"], env=env)
    m = re.search(r"(\S+\.min\.wl)", p.stderr)
    if not check(p.returncode == 1 and m,
                 "no-wait: a failure and a shrunk workload (got %d: %s)" %
                 (p.returncode, p.stderr.strip()[-300:])):
        return
    # The failure hangs on timing: a slow build (sanitizers) may run out
    # of shrink time; what "minimal" promises is checked when it is said.
    if not re.search(r": minimal after \d+ tries", p.stderr):
        print("note: no-wait: the shrink ran out of time (%s); its checks "
              "skipped" % p.stderr.strip()[-200:])
        return
    with open(m.group(1)) as f:
        lines = [ln.split() for ln in f if not ln.startswith("#")]
    jobs = [ln for ln in lines if ln and ln[0] == "job"]
    objs = [ln[1] for ln in lines if ln and ln[0] == "syncobj"]
    words = [w.split("=")[1].split("@")[0] for ln in jobs for w in ln
             if w.startswith(("wait=", "signal="))]
    check(any(w.startswith("wait=") for ln in jobs for w in ln),
          "no-wait: the minimal case keeps a wait (%d jobs: %s)" %
          (len(jobs), jobs[:4]))
    check(objs and set(objs) == set(words),
          "no-wait: every syncobj line is named by a word (%s vs %s)" %
          (objs, sorted(set(words))))


def test_help(tmp):
    """--help names every kind of case stress makes, the new ones too."""
    p = stress(["--help"])
    text = " ".join(p.stdout.split())
    for word in ("PRIME", "syncobj", "page ranges", "visible VRAM",
                 "priorities", "eviction", "pins", "shrinker"):
        check(p.returncode == 0 and word in text,
              "stress --help names %r (got %d)" % (word, p.returncode))


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
        (["--status-every", "0"], "--status-every"),
        (["--bogus"], "--bogus"),
    ]
    for args, flag in cases:
        p = stress(args + ["--seconds", "1"] if args[0] != "--seconds"
                   else args)
        check(p.returncode == 2 and flag in p.stderr,
              "%s: exit 2 naming %s (got %d: %s)" %
              (" ".join(args), flag, p.returncode, p.stderr.strip()[:120]))


with tempfile.TemporaryDirectory() as tmp:
    for t in (test_help, test_shrink_syncobj, test_usage, test_run_check_every, test_live_check, test_child,
              test_utf8, test_status_and_interrupt, test_clean, test_shards,
              test_failure):
        d = os.path.join(tmp, t.__name__)
        os.mkdir(d)
        t(d)

print("test_stress: %s" % ("all passed" if not failures else
                           "%d FAILED" % failures))
sys.exit(1 if failures else 0)
