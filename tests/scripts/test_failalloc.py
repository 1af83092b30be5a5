#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`ttmsim run` when an allocation fails (suite cli).

Usage: test_failalloc.py TTMSIM LIBFAILALLOC [SANITIZE]

Runs a short `ttmsim run --json --dump D --trace T` once without
failures, counting the allocations (libfailalloc's TTMSIM_FAILALLOC_COUNT),
then once per failing allocation N (TTMSIM_FAILALLOC=N): every one
(about 1,900, most of them in making the outputs; at most MAX_POINTS,
evenly spread, should the run grow), ~20 s. Each run must end in one of
two ways:

- exit 0, every invariant checked: the summary, the dump and the trace
  complete and valid JSON, with the same keys and the same counters and
  contents as the run without failures;
- a non-zero exit status with a message on stderr ("ttmsim: ...") that
  names the allocation that failed where it failed (an errno's text, or
  "out of memory"), and then no file that is not complete: a dump or
  trace left behind parses and is the whole of it, and no temporary file
  is left. The verifier may only add what follows from such a failure at
  a call site: a job rejected with ENOMEM (or EAGAIN, a thread that could
  not start), jobs a thread could not submit after saying why. Never what
  means the library lost work after accepting it: a job that retired 0 or
  2 times, a buffer word that is not what the completed jobs make, broken
  accounting (before the scheduler's backend allocated the GPU's job at
  submission, a failed allocation in run_job lost the job that way).

Never a crash (a signal), a hang, a summary that is not JSON, or exit 0
with a key missing. SANITIZE (meson's b_sanitize) other than "none" skips
the test (exit 77): a sanitizer's runtime must own malloc itself.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

if len(sys.argv) < 3:
    sys.exit("usage: test_failalloc.py TTMSIM LIBFAILALLOC [SANITIZE]")
TTMSIM = os.path.abspath(sys.argv[1])
LIB = os.path.abspath(sys.argv[2])
if len(sys.argv) > 3 and sys.argv[3] not in ("", "none"):
    print("SKIP: built with -Db_sanitize=%s: the sanitizer's runtime owns "
          "malloc, which libfailalloc would replace" % sys.argv[3])
    sys.exit(77)

# Two threads, a buffer that never fits (-ENOSPC), evictions (64K of VRAM).
WORKLOAD = """# test_failalloc.py
bo a 4096
bo b 8192 vram
bo c 32768 vram
bo d 16x16:XR24 gtt
bo e 16384 vram
bo huge 131072 vram
job 0 0 5 add=5 a b
job 0 1 5 add=7 c e
job 1 0 5 add=1 b c d
job 1 1 0 nop a
job 0 0 5 add=3 huge a
job 1 0 5 add=2 e b
"""

TMP = tempfile.mkdtemp(prefix="ttmsim-failalloc-")
PATH = os.path.join(TMP, "w.txt")
DUMP = os.path.join(TMP, "dump.json")
TRACE = os.path.join(TMP, "trace.json")
COUNT = os.path.join(TMP, "count")
with open(PATH, "w") as f:
    f.write(WORKLOAD)
ARGS = [TTMSIM, "run", "--workload", PATH, "--vram", "64K", "--json",
        "--dump", DUMP, "--trace", TRACE, "--no-progress", "--watchdog",
        "10"]

failures = []
MAX_POINTS = 2500

# How the tool says an allocation failed: strerror(ENOMEM), its own words,
# or strerror(EAGAIN) from a thread that could not start without memory.
NOMEM = re.compile(r"Cannot allocate memory|out of memory|"
                   r"Resource temporarily unavailable")
# The verifier's lines ("ttmsim: invariant: ...") that follow from a
# failure at a call site; any other one found lost work or bad contents.
EXPLAINED = re.compile(
    r"ttmsim: invariant: the job of line \d+ was rejected: "
    r"(Cannot allocate memory|Resource temporarily unavailable) "
    r"\(not for what the workload asks\)$|"
    r"ttmsim: invariant: \d+ of \d+ jobs not submitted: a thread could "
    r"not submit \(see above\)$")


def unexplained(err):
    """What in @err is not an allocation failure at its call site."""
    bad = []
    lines = err.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("ttmsim: invariant:") and \
                not EXPLAINED.match(line):
            bad.append("the verifier found lost work or wrong contents: "
                       "%r" % line[:200])
        # "see above": a thread said which allocation failed.
        if "jobs not submitted" in line and \
                not any(NOMEM.search(x) for x in lines[:i]):
            bad.append("jobs not submitted, no failed allocation named "
                       "before")
    if not any(NOMEM.search(x) for x in lines):
        bad.append("no allocation failure named on stderr")
    return bad



def run(n, count=False):
    for p in (DUMP, TRACE):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, LD_PRELOAD=LIB, TTMSIM_FAILALLOC=str(n))
    if count:
        env["TTMSIM_FAILALLOC_COUNT"] = COUNT
    try:
        p = subprocess.run(ARGS, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def load(path):
    """The file's JSON, None if absent; ValueError if not JSON."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def gpu_slices(trace):
    return sorted(e["args"]["job"] for e in trace["traceEvents"]
                  if e.get("ph") == "X" and e.get("cat") == "gpu" and
                  "job" in e.get("args", {}))


def contents(dump):
    """The dump without placements, which depend on eviction timing."""
    if not isinstance(dump, dict) or not isinstance(dump.get("bos"), list):
        return dump
    return [{k: v for k, v in e.items() if k != "placement"}
            for e in dump["bos"]]


def skeleton(summary):
    """The keys, and the values that do not depend on timing."""
    timing = {"wall_s", "jobs_per_s", "latency", "out_of_order_retirements",
              "backoffs", "restarts", "evictions", "moves", "bytes_moved"}
    return {k: (None if k in timing else v) for k, v in summary.items()}


rc, out, err = run(0, count=True)
if rc != 0:
    sys.exit("FAIL: the run without failures exited %s:\n%s" % (rc, err))
BASE = json.loads(out)
BASE_DUMP = load(DUMP)
BASE_SLICES = gpu_slices(load(TRACE))
with open(COUNT) as f:
    TOTAL = int(f.read())
print("the run without failures: %d allocations counted, %d jobs "
      "completed, exit 0" % (TOTAL, BASE["completed"]))
if BASE["completed"] != 5 or BASE["rejected"] != 1 or \
        BASE["rejected_by_errno"] != {"ENOSPC": 1}:
    sys.exit("FAIL: the run without failures: unexpected counters %s"
             % BASE)

# Every one if they are few (a run takes ~10 ms), else evenly spread.
step = max(1, -(-TOTAL // MAX_POINTS))
points = list(range(1, TOTAL + 1, step))
outcomes = {}
for n in points:
    rc, out, err = run(n)
    what = "TTMSIM_FAILALLOC=%d" % n
    bad = []
    if not isinstance(rc, int) or rc < 0:
        bad.append("%s (a crash or a hang)" % (
            rc if not isinstance(rc, int) else "killed by signal %d" % -rc))
    files = {}
    for name, path in (("dump", DUMP), ("trace", TRACE)):
        try:
            files[name] = load(path)
        except ValueError as e:
            bad.append("the %s is left incomplete (%s)" % (name, e))
    left = [f for f in os.listdir(TMP) if f.endswith(".tmp")]
    if left:
        bad.append("temporary files left: %s" % left)
        for f in left:
            os.unlink(os.path.join(TMP, f))
    summary = None
    if out.strip():
        try:
            summary = json.loads(out)
        except ValueError as e:
            bad.append("stdout is not JSON (%s): %r" % (e, out[:200]))
    if rc == 0:
        if summary is None or skeleton(summary) != skeleton(BASE):
            bad.append("exit 0 but the summary differs: %s" % out[:300])
        if contents(files.get("dump")) != contents(BASE_DUMP):
            bad.append("exit 0 but the dump differs or is missing")
        if files.get("trace") is None or \
                gpu_slices(files["trace"]) != BASE_SLICES:
            bad.append("exit 0 but the trace lacks GPU slices")
    elif isinstance(rc, int) and rc > 0:
        if "ttmsim" not in err:
            bad.append("exit %d with no message on stderr" % rc)
        else:
            bad += ["exit %d, %s" % (rc, b) for b in unexplained(err)]
        if summary is not None and \
                (set(summary) != set(BASE) or
                 summary.get("exit_status") not in (rc, 0)):
            bad.append("exit %d with a summary that does not say so or "
                       "lacks keys: %s" % (rc, out[:300]))
        d = files.get("dump")
        if d is not None and \
                [(e.get("name"), sorted(e)) for e in d.get("bos", [])] != \
                [(e["name"], sorted(e)) for e in BASE_DUMP["bos"]]:
            bad.append("exit %d, the dump left is not whole" % rc)
    if bad:
        failures.append(what)
        print("FAIL %s: exit %s: %s\n     stderr: %s" % (
            what, rc, "; ".join(bad), err.strip()[-400:]))
    key = rc if rc == 0 else "%s %s" % (rc, (err.strip().splitlines() or
                                             [""])[-1][:70])
    outcomes[key] = outcomes.get(key, 0) + 1

print("%d failing allocations tried of %d; outcomes:" % (len(points), TOTAL))
for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1]):
    print("  %4d x %s" % (v, "exit 0, complete" if k == 0 else
                           "exit " + str(k)))
if failures:
    print("FAIL: %d of %d: %s; files kept in %s" % (
        len(failures), len(points), " ".join(failures[:20]), TMP))
    sys.exit(1)
for f in os.listdir(TMP):
    os.unlink(os.path.join(TMP, f))
os.rmdir(TMP)
print("ok: every run completed correctly or failed with a message")
