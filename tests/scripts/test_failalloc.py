#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`ttmsim run` when a call fails for want of a resource (suites cli, stress).

Usage: test_failalloc.py TTMSIM LIBFAILALLOC [SANITIZE] [--full]
                         [--kinds K,K...] [--every K]

The fault injection walk. libfailalloc (tests/lib/failalloc.c, preloaded)
fails the Nth call of one kind: alloc (malloc and friends, ENOMEM), thread
(pthread_create, EAGAIN), pipe (EMFILE), dup (dup*, fcntl(F_DUPFD*),
EMFILE), open (open, openat, fopen: EMFILE). For each case (a short
`ttmsim run`: the fixed workload below with --json --dump --trace and the
watchdog thread; the same with the shrinker's thread, --shrink-ms 1; a
small generated workload; a workload of PRIME buffers and syncobjs,
whose exports are the pipe kind's points) it runs once without failures,
counting the calls of each kind (TTMSIM_FAILALLOC_COUNT), then once per
failing call N of each kind (TTMSIM_FAILALLOC_KIND=K TTMSIM_FAILALLOC=N),
and with every call from the Nth on failing (TTMSIM_FAILALLOC=N+).
Each run must end in one of two ways:

- exit 0, every invariant checked: the summary, the dump and the trace
  complete and valid JSON, with the same keys and the same counters and
  contents as the run without failures;
- a non-zero exit status with a message on stderr ("ttmsim: ...") that
  names the call that failed where it failed (its errno's text, or "out of
  memory"), and then no file that is not complete: a dump or trace left
  behind parses and is the whole of it, and no temporary file is left.
  The verifier may only add what follows from such a failure at a call
  site: a job rejected with that errno, jobs a thread could not submit
  after saying why. Never what means the library lost work after
  accepting it: a job that retired 0 or 2 times, a buffer word that is
  not what the completed jobs make, broken accounting.

Never a crash (a signal), a hang (TIMEOUT s a run), a summary that is not
JSON, exit 0 with a key missing, or a sanitizer's report. It ends with the
matrix of outcomes: per case and kind, the points, how many completed,
the error exits by message, and the failures.

By default (suite cli, ~15 s, ~90 s under ASan) a bounded, deterministic
sample: every point of the non-alloc kinds and of the generated case,
every K-th allocation of the others (--every, default so that at most
ALLOC_SAMPLE are tried a case), and PERSIST_SAMPLE "N+" points a case
and kind. --full (suite stress): every
point of every kind. SANITIZE (meson's b_sanitize): under address, the
walk runs with ASAN_OPTIONS=verify_asan_link_order=0 (libfailalloc then
comes before the runtime and calls on into its interceptors) and any
AddressSanitizer, LeakSanitizer or UBSan report fails it; under thread it
is skipped (77): TSan's runtime cannot be preceded so.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

KINDS = ("alloc", "thread", "pipe", "dup", "open")
# What the tool must say: the errno's text each kind's failure sets.
NAMED = {
    "alloc": r"Cannot allocate memory|out of memory|"
             r"Resource temporarily unavailable",
    "thread": r"Resource temporarily unavailable",
    "pipe": r"Too many open files",
    "dup": r"Too many open files",
    "open": r"Too many open files",
}
ALLOC_SAMPLE = 80
PERSIST_SAMPLE = 40
TIMEOUT = 30

ap = argparse.ArgumentParser()
ap.add_argument("ttmsim")
ap.add_argument("lib")
ap.add_argument("sanitize", nargs="?", default="none")
ap.add_argument("--full", action="store_true")
ap.add_argument("--kinds", default=",".join(KINDS))
ap.add_argument("--every", type=int, default=0)
ARGV = ap.parse_args()
TTMSIM = os.path.abspath(ARGV.ttmsim)
LIB = os.path.abspath(ARGV.lib)
SAN = ARGV.sanitize if ARGV.sanitize not in ("", "none") else ""
if "thread" in SAN or "memory" in SAN:
    print("SKIP: built with -Db_sanitize=%s: the runtime must come first "
          "and own the calls libfailalloc would replace" % SAN)
    sys.exit(77)
TMP = tempfile.mkdtemp(prefix="ttmsim-failalloc-")
ENV = dict(os.environ, LD_PRELOAD=LIB)
if "address" in SAN:
    ENV["ASAN_OPTIONS"] = ":".join(
        x for x in (os.environ.get("ASAN_OPTIONS", ""),
                    "verify_asan_link_order=0") if x)
# json-c 0.16's json_object_object_add_ex() leaks its copy of the key
# when growing the table fails (lh_table_insert_w_hash() returns -1 and
# nobody frees it): not ours to fix, and nothing of ours can free it
# (fixed upstream by json-c pull request 962, not in Debian 12's 0.16).
SUPP = os.path.join(TMP, "lsan.supp")
with open(SUPP, "w") as f:
    f.write("leak:json_object_object_add_ex\n")
ENV["LSAN_OPTIONS"] = ":".join(
    x for x in (os.environ.get("LSAN_OPTIONS", ""),
                "suppressions=" + SUPP, "print_suppressions=0") if x)
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|"
                              r"runtime error:|ERROR: UndefinedBehavior")

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

# PRIME and syncobjs: the owner exports `prime` buffers to fds (a pipe
# each: the pipe kind's points), the threads import them; a binary and a
# timeline syncobj order the jobs across the threads.
PRIME_WORKLOAD = """# test_failalloc.py, PRIME
bo a 4096 prime
bo b 8192 vram prime
bo c 16384 gtt
syncobj s
syncobj t timeline
job 0 0 5 add=5 a b signal=s
job 1 0 5 add=7 b c wait=s signal=t@1
job 0 1 5 add=1 a c wait=t@1
job 1 1 5 add=2 b
"""

PATH = os.path.join(TMP, "w.txt")
PRIME_PATH = os.path.join(TMP, "prime.txt")
DUMP = os.path.join(TMP, "dump.json")
TRACE = os.path.join(TMP, "trace.json")
COUNT = os.path.join(TMP, "count")
with open(PATH, "w") as f:
    f.write(WORKLOAD)
with open(PRIME_PATH, "w") as f:
    f.write(PRIME_WORKLOAD)
FIXED = [TTMSIM, "run", "--workload", PATH, "--vram", "64K", "--json",
         "--dump", DUMP, "--trace", TRACE, "--no-progress", "--watchdog",
         "10"]
CASES = [
    # name, argv, whether the sample walks every point of it (the short
    # case: its dump and summary end the run, so each failing call in
    # them is tried), the counters the run without failures must have
    ("fixed", FIXED, False, {"completed": 5, "rejected": 1,
                             "rejected_by_errno": {"ENOSPC": 1}}),
    ("shrink", FIXED + ["--shrink-ms", "1"], False,
     {"completed": 5, "rejected": 1}),
    ("generated", [TTMSIM, "run", "--threads", "2", "--jobs", "8", "--bos",
                   "12", "--seed", "3", "--json", "--no-progress",
                   "--vram", "256K", "--bo-size", "4096:32768",
                   "--dump", DUMP, "--watchdog", "10"], True,
     {"completed": 16, "rejected": 0}),
    ("prime", [TTMSIM, "run", "--workload", PRIME_PATH, "--vram", "64K",
               "--json", "--dump", DUMP, "--trace", TRACE, "--no-progress",
               "--watchdog", "10"], False,
     {"completed": 4, "rejected": 0, "prime_buffers": 2,
      "prime_imports": 3, "syncobjs": 2}),
]

# The verifier's lines ("ttmsim: invariant: ...") that follow from a
# failure at a call site; any other one found lost work or bad contents.
EXPLAINED = re.compile(
    r"ttmsim: invariant: the job of line \d+ was rejected: "
    r"(Cannot allocate memory|Resource temporarily unavailable|"
    r"Too many open files) \(not for what the workload asks\)$|"
    r"ttmsim: invariant: \d+ of \d+ jobs not submitted: a thread could "
    r"not submit \(see above\)$")


def unexplained(err, kind):
    """What in @err is not a failure of @kind at its call site."""
    named = re.compile(NAMED[kind])
    bad = []
    lines = err.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("ttmsim: invariant:") and \
                not EXPLAINED.match(line):
            bad.append("the verifier found lost work or wrong contents: "
                       "%r" % line[:200])
        # "see above": a thread said which call failed.
        if "jobs not submitted" in line and \
                not any(named.search(x) for x in lines[:i]):
            bad.append("jobs not submitted, no failed call named before")
    if not any(named.search(x) for x in lines):
        bad.append("no %s failure named on stderr" % kind)
    return bad


def run(argv, kind, n, count=False):
    """@n: TTMSIM_FAILALLOC's value ("N" or "N+")."""
    for p in (DUMP, TRACE):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(ENV, TTMSIM_FAILALLOC_KIND=kind, TTMSIM_FAILALLOC=str(n))
    if count:
        env["TTMSIM_FAILALLOC_COUNT"] = COUNT
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        return "timeout", "", (e.stderr or b"").decode("utf-8", "replace")
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
              "backoffs", "restarts", "evictions", "moves", "bytes_moved",
              "shrink_passes", "shrink_buffers", "shrink_bytes",
              "shrink_busy",
              # submissions that found their syncobj dependency not yet
              # submitted: which thread gets there first
              "syncobj_held"}
    return {k: (None if k in timing else v) for k, v in summary.items()}


class Base:
    """A case's run without failures: what every run must match."""

    def __init__(self, name, argv, want):
        rc, out, err = run(argv, "alloc", 0, count=True)
        if rc != 0 or SANITIZER_REPORT.search(err):
            sys.exit("FAIL: %s: the run without failures exited %s:\n%s"
                     % (name, rc, err))
        self.summary = json.loads(out)
        self.dump = load(DUMP)
        trace = load(TRACE) if TRACE in argv else None
        self.slices = gpu_slices(trace) if trace else None
        with open(COUNT) as f:
            self.counts = {k: int(v) for k, v in
                           (line.split() for line in f)}
        for k, v in want.items():
            if self.summary.get(k) != v:
                sys.exit("FAIL: %s: the run without failures: %s is %s, "
                         "not %s" % (name, k, self.summary.get(k), v))


def judge(base, argv, kind, rc, out, err):
    """What is wrong with one run's ending (empty: nothing)."""
    bad = []
    if not isinstance(rc, int) or rc < 0:
        bad.append("%s (a crash or a hang)" % (
            rc if not isinstance(rc, int) else "killed by signal %d" % -rc))
    if SANITIZER_REPORT.search(err):
        bad.append("a sanitizer's report")
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
        # A shrinker pass that failed is counted, said, and the run goes
        # on: its counter may differ when stderr names the failure.
        if summary is not None and re.search(
                r"^ttmsim: shrinker: .*(%s) \(counted; the run goes on\)$"
                % NAMED[kind], err, re.M):
            summary = dict(summary, shrink_errors=base.summary.get(
                "shrink_errors"))
        if summary is None or skeleton(summary) != skeleton(base.summary):
            bad.append("exit 0 but the summary differs: %s" % out[:300])
        if contents(files.get("dump")) != contents(base.dump):
            bad.append("exit 0 but the dump differs or is missing")
        if base.slices is not None and (
                files.get("trace") is None or
                gpu_slices(files["trace"]) != base.slices):
            bad.append("exit 0 but the trace lacks GPU slices")
    elif isinstance(rc, int) and rc > 0:
        if "ttmsim" not in err:
            bad.append("exit %d with no message on stderr" % rc)
        else:
            bad += ["exit %d, %s" % (rc, b) for b in unexplained(err, kind)]
        if summary is not None and \
                (set(summary) != set(base.summary) or
                 summary.get("exit_status") not in (rc, 0)):
            bad.append("exit %d with a summary that does not say so or "
                       "lacks keys: %s" % (rc, out[:300]))
        d = files.get("dump")
        if d is not None and \
                [(e.get("name"), sorted(e)) for e in d.get("bos", [])] != \
                [(e["name"], sorted(e)) for e in base.dump["bos"]]:
            bad.append("exit %d, the dump left is not whole" % rc)
    return bad


def message_class(rc, err):
    """An error exit's kind of message: its status, its last line's
    words without numbers or names (for the matrix)."""
    last = (err.strip().splitlines() or [""])[-1]
    last = re.sub(r"\d+", "N", last)
    last = re.sub(r"'[^']*'|\"[^\"]*\"|/\S+", "X", last)
    return "exit %d: %s" % (rc, last[:72])


def points(total, kind, every_one):
    """The values of TTMSIM_FAILALLOC to try: "N" (the Nth call fails),
    then "N+" (every call from the Nth on: memory stays short, so what
    retries must give up; a spinning retry hangs)."""
    if ARGV.full or kind != "alloc" or every_one:
        once = list(range(1, total + 1))
    else:
        step = ARGV.every or max(1, -(-total // ALLOC_SAMPLE))
        # Deterministic, and not always the same phase: the last one too.
        once = sorted(set(range(1, total + 1, step)) | {total} - {0})
    step = 1 if ARGV.full else max(1, -(-total // PERSIST_SAMPLE))
    return [str(n) for n in once] + \
        ["%d+" % n for n in range(1, total + 1, step)]


# The interposer itself: the last call of each kind by a small Python
# program (`ttmsim run` makes no dup call today, and pipe calls only for
# PRIME) fails as said.
SELF = {
    "pipe": "os.pipe()",
    "dup": "os.dup(0)",           # fcntl(F_DUPFD_CLOEXEC)
    "open": "open(sys.argv[1])",
    "thread": "threading.Thread(target=print).start()",
}


def selfcheck(kind):
    code = ("import os, sys, threading\ntry:\n    %s\n"
            "except (OSError, RuntimeError) as e:\n"
            "    print(getattr(e, 'errno', None) or 'EAGAIN')\n"
            "else:\n    print('none')\n" % SELF[kind])
    argv = [sys.executable, "-c", code, PATH]

    def go(n, count):
        env = dict(ENV, TTMSIM_FAILALLOC_KIND=kind, TTMSIM_FAILALLOC=str(n))
        if count:
            env["TTMSIM_FAILALLOC_COUNT"] = COUNT
        return subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                              timeout=TIMEOUT).stdout.decode().strip()

    clean = go(0, True)
    with open(COUNT) as f:
        last = {k: int(v) for k, v in (line.split() for line in f)}[kind]
    got = go(last, False) if last else "no call counted"
    want = "EAGAIN" if kind == "thread" else str(__import__("errno").EMFILE)
    if clean != "none" or got != want:
        sys.exit("FAIL: libfailalloc's %s kind: without failure %r, failing "
                 "the last of %d calls %r, not %r" % (kind, clean, last, got,
                                                       want))


kinds = [k for k in ARGV.kinds.split(",") if k]
for kind in kinds:
    if kind in SELF:
        selfcheck(kind)
print("libfailalloc fails the last call of each of %s as said" %
      ", ".join(k for k in kinds if k in SELF))
failures = []
matrix = []
for name, argv, every_one, want in CASES:
    base = Base(name, argv, want)
    print("%s: the run without failures: %s; %d jobs completed" % (
        name, ", ".join("%s %d" % kv for kv in base.counts.items()),
        base.summary["completed"]))
    for kind in kinds:
        pts = points(base.counts.get(kind, 0), kind, every_one)
        ok = 0
        errors = {}
        fails = 0
        for n in pts:
            rc, out, err = run(argv, kind, n)
            bad = judge(base, argv, kind, rc, out, err)
            if bad:
                fails += 1
                what = "%s %s=%s" % (name, kind, n)
                failures.append(what)
                print("FAIL %s: exit %s: %s\n     stderr: %s" % (
                    what, rc, "; ".join(bad), err.strip()[-600:]))
            elif rc == 0:
                ok += 1
            else:
                c = message_class(rc, err)
                errors[c] = errors.get(c, 0) + 1
        matrix.append((name, kind, base.counts.get(kind, 0), len(pts), ok,
                       errors, fails))

print("\noutcome matrix (case, kind: runs (N and N+) for the points "
      "counted; exit 0 complete; error exits by message; failures):")
for name, kind, total, tried, ok, errors, fails in matrix:
    print("  %-9s %-6s %5d runs, %5d points: %5d ok, %5d error exits, "
          "%d FAILED" % (
        name, kind, tried, total, ok, sum(errors.values()), fails))
    for c, v in sorted(errors.items(), key=lambda kv: -kv[1]):
        print("  %22s %5d x %s" % ("", v, c))
if failures:
    print("FAIL: %d runs: %s; files kept in %s" % (
        len(failures), " ".join(failures[:20]), TMP))
    sys.exit(1)
for f in os.listdir(TMP):
    os.unlink(os.path.join(TMP, f))
os.rmdir(TMP)
print("ok: every run completed correctly or failed with a message")
