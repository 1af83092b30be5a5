#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of `ttmsim run` (suite cli).

Usage: test_run.py TTMSIM [SEED]   (or TTMSIM_TEST_SEED=N in the environment)

- Random workload files, generated here with a seeded RNG (the seed is
  printed), whose final buffer contents and counters are computed here
  independently of ttmsim, then compared with `run --json --dump`: both
  classes, duplicates allowed and not, a small VRAM or GTT that forces
  evictions, hang jobs, buffers that never fit (-ENOSPC), 1 to 16 threads,
  fourcc and pinned buffers.
- --save-workload of a generated run, then replay: same contents and
  counters (and both equal to what this script computes from the file).
- Every malformed input exits 2 naming FILE:LINE: (also on standard input,
  named <stdin>), a missing file exits 2 naming it, --check runs nothing,
  bad command lines exit 2; good files with CRLF, tabs and comments.
- --trace: JSON with traceEvents, slices properly nested on every track,
  one GPU slice per job that ran, submitter phases.
- SIGINT and SIGTERM mid-run: exit 130 within 5 s with a partial summary.
  (TTMSIM_TEST_BLOCK_SIGNALS=1 starts ttmsim with both blocked in every
  thread: a diagnosis aid for a signal that kills it.)
- Exact counters on a one-thread workload whose evictions and moves
  follow from the file; backoffs == restarts in every summary.
- TTMSIM_TEST_FAULT (word1, retire-twice, submit-list): the run's checks
  fail, exit 1 with the message that names what broke.
- Outputs: a summary, --dump or --trace on /dev/full exits 1 naming it;
  a replaced file keeps its mode; a 255-byte name and a writable file in
  a read-only directory (run as nobody when root) work;
  a dump replaces the old file whole; a non-UTF-8 workload path gives
  valid JSON (U+FFFD, workload_not_utf8).
- examples/*.txt, if any, run as the `ttmsim run` lines of their header
  comments show, with exit 0 and the contents and counters computed here.
- --shrink-ms: random workloads (both classes, a small VRAM or GTT,
  several threads) with a shrinker swapping buffers out every 1 ms: the
  same contents and counters, the shrinker's counters > 0; a `shrink`
  line in a file, overridden by --shrink-ms; --save-workload keeps it;
  bad values exit 2 naming the flag.

Python 3 standard library only. Prints every check; exits 1 if any failed.
"""
import glob
import shutil
import json
import os
import random
import resource
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

U32 = 1 << 32

if len(sys.argv) < 2:
    sys.exit("usage: test_run.py TTMSIM [SEED]")
TTMSIM = os.path.abspath(sys.argv[1])
if len(sys.argv) > 2:
    SEED = int(sys.argv[2])
elif os.environ.get("TTMSIM_TEST_SEED"):
    SEED = int(os.environ["TTMSIM_TEST_SEED"])
else:
    SEED = random.SystemRandom().randrange(1, 1 << 31)
print("test_run: seed %d (replay: test_run.py TTMSIM %d)" % (SEED, SEED))
sys.stdout.flush()

SRCDIR = os.environ.get("TTMSIM_SRCDIR") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

TMP = tempfile.mkdtemp(prefix="ttmsim-test-run-")
passed = 0
failed = 0
failures = []


def ok(what):
    global passed
    passed += 1
    print("ok   %s" % what)
    sys.stdout.flush()


def fail(what, expected=None, got=None, extra=None):
    global failed
    failed += 1
    failures.append(what)
    print("FAIL %s" % what)
    if expected is not None or got is not None:
        print("     expected: %s" % (expected,))
        print("     got:      %s" % (got,))
    if extra:
        for line in str(extra).rstrip().splitlines()[:40]:
            print("     | %s" % line)
    sys.stdout.flush()


def check(cond, what, expected=None, got=None, extra=None):
    if cond:
        ok(what)
    else:
        fail(what, expected, got, extra)
    return cond


def check_eq(got, expected, what, extra=None):
    return check(got == expected, what, expected, got, extra)


def tmp(name):
    return os.path.join(TMP, name)


def write(name, data):
    path = tmp(name)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


class Result:
    def __init__(self, args, rc, out, err, secs):
        self.args, self.rc, self.out, self.err, self.secs = \
            args, rc, out, err, secs

    def cmd(self):
        return "ttmsim " + " ".join(self.args)

    def tail(self):
        return ("stderr:\n" + self.err[-3000:] +
                "\nstdout:\n" + self.out[-2000:])


def ttmsim(args, stdin=None, timeout=60):
    t0 = time.monotonic()
    try:
        p = subprocess.run([TTMSIM] + args, input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        rc = p.returncode
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout after %ds" % timeout
        out, err = e.stdout or b"", e.stderr or b""
    dec = lambda b: b.decode("utf-8", "replace")
    return Result(args, rc, dec(out), dec(err), time.monotonic() - t0)


def load_json(text, what):
    try:
        return json.loads(text)
    except ValueError as e:
        fail("%s: output is JSON" % what, "JSON", "%s: %r" % (e, text[:300]))
        return None


# --------------------------------------------------------------------------
# The model: parse a workload file (the subset this script and ttmsim's
# --save-workload write) and compute what a run must give.

FOURCC_CPP = {"XR24": 4, "AR24": 4, "XB24": 4, "AB24": 4, "RG16": 2,
              "R8": 1}


class Bo:
    def __init__(self, name, size, place, pinned):
        self.name, self.size, self.place, self.pinned = \
            name, size, place, pinned


class Job:
    def __init__(self, thread, engine, us, op, value, names):
        self.thread, self.engine, self.us = thread, engine, us
        self.op, self.value, self.names = op, value, names


def parse_workload(text):
    bos, jobs = [], []
    for line in text.splitlines():
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "bo":
            name, size = line[1], line[2]
            m = re.fullmatch(r"(\d+)x(\d+):(\w+)", size)
            if m:
                size = (int(m.group(1)) * int(m.group(2)) *
                        FOURCC_CPP[m.group(3)])
            else:
                size = int(size)
            rest = line[3:]
            pinned = "pinned" in rest
            place = [w for w in rest if w != "pinned"]
            bos.append(Bo(name, size, place[0] if place else "default",
                          pinned))
        elif line[0] == "shrink":
            pass  # the run's shrinker: contents and counters unchanged
        elif line[0] == "job":
            op = line[4]
            value = 0
            if op.startswith("add="):
                value = int(op[4:], 0) % U32
                op = "add"
            jobs.append(Job(int(line[1]), int(line[2]), int(line[3]), op,
                            value, line[5:]))
        else:
            raise ValueError("model: unknown line %r" % line)
    return bos, jobs


def expect_run(bos, jobs, allow_dups, never_fit):
    """What the run must give: per-buffer word value, counters."""
    value = {b.name: 0 for b in bos}
    counts = {"submitted": len(jobs), "rejected": 0, "completed": 0,
              "failed": 0}
    by_errno = {}
    for j in jobs:
        distinct = list(dict.fromkeys(j.names))
        if len(distinct) != len(j.names) and not allow_dups:
            err = "EINVAL"
        elif any(n in never_fit for n in distinct):
            err = "ENOSPC"
        else:
            err = None
        if err:
            counts["rejected"] += 1
            by_errno[err] = by_errno.get(err, 0) + 1
        elif j.op == "hang":
            counts["failed"] += 1
        else:
            counts["completed"] += 1
            if j.op == "add":
                for n in distinct:
                    value[n] = (value[n] + j.value) % U32
    return value, counts, by_errno


def compare_dump(what, dump, bos, value, never_fit=(), placements=None):
    """The dump against the model: names, sizes, first word, sum."""
    if dump is None:
        return
    entries = dump.get("bos") if isinstance(dump, dict) else None
    if not isinstance(entries, list):
        fail("%s: dump has a bos list" % what, "list", type(entries))
        return
    names = [e.get("name") for e in entries]
    if not check_eq(names, [b.name for b in bos],
                    "%s: dump lists every buffer in file order" % what):
        return
    bad = []
    for b, e in zip(bos, entries):
        v = value[b.name]
        want = {"size": b.size, "first_word": v,
                "words_sum": v * (b.size // 4)}
        got = {k: e.get(k) for k in want}
        if got != want:
            bad.append("%s: expected %s, got %s" % (b.name, want, got))
        pl = e.get("placement")
        if b.name in never_fit:
            if pl not in ("system", None):
                bad.append("%s (never fits): placement %r, expected "
                           "system" % (b.name, pl))
        elif pl not in ("vram", "gtt", "system"):
            bad.append("%s: placement %r" % (b.name, pl))
        elif placements and b.name in placements and \
                pl != placements[b.name]:
            bad.append("%s: placement %r, expected %r (pinned)" %
                       (b.name, pl, placements[b.name]))
    check(not bad, "%s: dump contents of %d buffers (first_word, "
          "words_sum, size, placement)" % (what, len(bos)),
          "all as computed", "%d differ" % len(bad), "\n".join(bad))


def compare_counters(what, summary, counts, by_errno, extra_keys=None):
    if summary is None:
        return
    got = {k: summary.get(k) for k in counts}
    check_eq(got, counts, "%s: counters submitted/rejected/completed/failed"
             % what)
    check_eq(summary.get("rejected_by_errno"), by_errno,
             "%s: rejected_by_errno" % what)
    s = summary
    try:
        check(s["submitted"] == s["rejected"] + s["completed"] + s["failed"],
              "%s: submitted == rejected + completed + failed" % what,
              "equal", "%s != %s + %s + %s" % (s["submitted"], s["rejected"],
                                               s["completed"], s["failed"]))
    except (KeyError, TypeError) as e:
        fail("%s: summary has the counters" % what, "keys", repr(e))
    # Every -EDEADLK (from a lock or an eviction) restarts the pass once.
    check(s.get("backoffs") == s.get("restarts") and
          isinstance(s.get("backoffs"), int),
          "%s: backoffs == restarts (%s)" % (what, s.get("backoffs")),
          "equal", "backoffs %s, restarts %s" % (s.get("backoffs"),
                                                 s.get("restarts")))
    for k, v in (extra_keys or {}).items():
        check_eq(s.get(k), v, "%s: summary %s" % (what, k))


# --------------------------------------------------------------------------
# Random workload files.

PAGE = 4096  # the device's default page: the allocation granularity


def pages(size):
    return -(-size // PAGE)


def never_fragmented(free, job_pages):
    """Whether buffers of @job_pages pages each always find a hole in
    @free contiguous free pages, wherever the others of the job sit: k
    buffers of which k - 1 are resident cut the free run into at most k
    holes, and the pages left free, spread over k holes, leave one of at
    least p pages if there are more than k * (p - 1)."""
    k, total = len(job_pages), sum(job_pages)
    return all(free - (total - p) > k * (p - 1) for p in job_pages)

def gen_workload(rng, threads, small, hangs, n_jobs, n_plain):
    """A random workload file's text, and what the model needs.

    @small: None, "vram" (64K of VRAM) or "gtt" (64K of GTT); either way a
    buffer "huge" that never fits its only domain there.
    """
    cap = {"vram": 256 << 20, "gtt": 1 << 30}
    if small:
        cap[small] = 64 * 1024
    lines = ["# test_run.py: random workload, threads=%d small=%s" %
             (threads, small)]
    bos = []

    def bo(name, spec, size, place="default", pinned=False):
        words = ["bo", name, spec]
        if place != "default":
            words.append(place)
        if pinned:
            words.append("pinned")
        lines.append(" ".join(words))
        bos.append(Bo(name, size, place, pinned))

    # The one domain a placement allows, if only one.
    def only(place):
        return {"vram": "vram", "gtt": "gtt", "system": "gtt"}.get(place)

    # Pinned first, while the domains are empty: they stay in their first
    # domain, which their dump placement must show.
    placements = {}
    pinned = {"vram": 0, "gtt": 0}
    for i in range(rng.randint(1, 2)):
        size = rng.randrange(4, 4097, 4)
        bo("pin%d" % i, str(size), size, rng.choice(["default", "vram"]),
           True)
        placements["pin%d" % i] = "vram"
        pinned["vram"] += size
    size = rng.randrange(4, 8193, 4)
    bo("pingtt", str(size), size, "gtt", True)
    placements["pingtt"] = "gtt"
    pinned["gtt"] += size
    # fourcc buffers.
    for i, (w, h, code) in enumerate(rng.sample(
            [(32, 32, "XR24"), (64, 32, "AR24"), (64, 64, "R8"),
             (32, 64, "RG16"), (16, 16, "XR24"), (40, 30, "AR24")], 2)):
        bo("fb%d" % i, "%dx%d:%s" % (w, h, code), w * h * FOURCC_CPP[code],
           rng.choice(["default", "vram", "gtt"]))
    # Plain buffers of every placement; 4K..16K, multiples of 4.
    # With a small domain, its first 6 are bound to it, 12K..16K each:
    # more than fits at once, which forces evictions.
    for i in range(n_plain):
        if small and i < 6:
            size = rng.randrange(12288, 16385, 4)
            place = small if small == "vram" else rng.choice(["gtt",
                                                              "system"])
        else:
            size = rng.randrange(4096, 16385, 4)
            place = rng.choices(["default", "vram", "gtt", "system"],
                                [5, 3, 2, 2])[0]
        bo("b%d" % i, str(size), size, place)
    never_fit = set()
    if small:
        bo("huge", str(2 * cap[small]), 2 * cap[small], small)
        never_fit.add("huge")

    # Jobs: never more bytes bound to one domain in a job than half what
    # the pinned buffers leave there, and never a set of buffers that
    # could fragment it (so no -ENOSPC but for "huge"): a domain is a
    # range of 4 KiB pages, a buffer a run of whole pages placed first fit;
    # the pinned ones came first, at its bottom, and a job's own buffers
    # cannot be evicted for each other, so resident anywhere they may cut
    # the free pages into holes too small for the one being validated.
    budget = {d: (cap[d] - pinned[d]) // 2 for d in cap}
    free_pages = {d: cap[d] // PAGE - sum(pages(b.size) for b in bos
                                          if b.pinned and
                                          placements[b.name] == d)
                  for d in cap}
    usable = [b for b in bos if b.name not in never_fit]
    jobs = []
    hang_left = hangs
    for k in range(n_jobs):
        thread = k % threads if k < threads else rng.randrange(threads)
        engine = rng.randrange(3)
        us = rng.randint(0, 30)
        r = rng.random()
        if hang_left and r < 0.01:
            op, value, text = "hang", 0, "hang"
            hang_left -= 1
        elif r < 0.11:
            op, value, text = "nop", 0, "nop"
        else:
            op = "add"
            value = rng.choice([rng.randrange(1, 1000),
                                rng.randrange(U32), U32 - 1])
            text = ("add=0x%x" % value if rng.random() < 0.2
                    else "add=%d" % value)
        names = []
        used = {"vram": 0, "gtt": 0}
        own = {"vram": [], "gtt": []}
        for b in rng.sample(usable, rng.randint(1, 6)):
            d = only(b.place)
            if d:
                if used[d] + b.size > budget[d]:
                    continue
            # Default buffers may be in VRAM (GTT has room for them).
            m = d or "vram"
            if not b.pinned and \
                    not never_fragmented(free_pages[m],
                                         own[m] + [pages(b.size)]):
                continue
            if d:
                used[d] += b.size
            if not b.pinned:
                own[m].append(pages(b.size))
            names.append(b.name)
        if not names:
            names = ["pin0"]
        special = rng.random()
        if special < 0.06:
            names.insert(rng.randrange(len(names) + 1), rng.choice(names))
        elif special < 0.08 and never_fit:
            names.insert(rng.randrange(len(names) + 1), "huge")
        jobs.append(Job(thread, engine, us, op, value, names))
        lines.append("job %d %d %d %s %s" % (thread, engine, us, text,
                                             " ".join(names)))
    return "\n".join(lines) + "\n", bos, jobs, never_fit, placements, cap


def random_case(name, rng, cls, dups, threads, small, hangs, n_jobs,
                n_plain, extra=()):
    text, bos, jobs, never_fit, placements, cap = gen_workload(
        rng, threads, small, hangs, n_jobs, n_plain)
    path = write(name + ".txt", text)
    dump = tmp(name + ".dump.json")
    args = ["run", "--workload", path, "--json", "--dump", dump,
            "--no-progress", "--class", cls, "--hang-timeout-ms", "20"]
    if small:
        args += ["--" + small, "64K"]
    if dups:
        args.append("--allow-duplicates")
    args += list(extra)
    r = ttmsim(args)
    what = "%s (%s, dups %s, %d threads, %s, %d buffers, %d jobs, " \
           "%d hangs%s)" % (name, cls, "on" if dups else "off", threads,
                            "64K of " + small.upper() if small else
                            "default sizes", len(bos), len(jobs),
                            sum(j.op == "hang" for j in jobs),
                            ", " + " ".join(extra) if extra else "")
    if not check_eq(r.rc, 0, "%s: exit status (%.1f s)" % (what, r.secs),
                    r.tail()):
        print("     workload kept in %s; command: %s" % (path, r.cmd()))
    summary = load_json(r.out, what)
    value, counts, by_errno = expect_run(bos, jobs, dups, never_fit)
    compare_counters(what, summary, counts, by_errno, {
        "class": cls, "threads": threads, "engines": 3,
        "allow_duplicates": dups, "jobs": len(jobs), "not_submitted": 0,
        "vram": cap["vram"], "gtt": cap["gtt"],
        "in_flight": 0, "checker_reports": 0, "interrupted": False,
        "exit_status": 0})
    try:
        with open(dump) as f:
            d = load_json(f.read(), what + " dump")
    except OSError as e:
        fail("%s: dump written" % what, dump, repr(e))
        d = None
    compare_dump(what, d, bos, value, never_fit, placements)
    # Evictions are certain if the buffers bound to the small domain that
    # accepted jobs use cannot all be there at once.
    if small and summary:
        d = small
        only = {"vram": ("vram",), "gtt": ("gtt", "system")}[d]
        used = set()
        for j in jobs:
            if (len(set(j.names)) == len(j.names) or dups) and \
                    not never_fit.intersection(j.names):
                used.update(j.names)
        need = sum(b.size for b in bos if b.name in used and
                   b.place in only)
        need += sum(b.size for b in bos if b.pinned and
                    placements.get(b.name) == d)
        ev = summary.get("evictions")
        if need > cap[d]:
            check(isinstance(ev, int) and ev > 0,
                  "%s: the small %s forced evictions (%s; %d bytes bound "
                  "there)" % (what, d.upper(), ev, need), "> 0", ev)
        else:
            print("     (evictions not forced: %d bytes bound to %s)" %
                  (need, d.upper()))
    if summary and counts["failed"]:
        check(summary.get("gpu_resets", 0) >= counts["failed"],
              "%s: a GPU reset per hang" % what, ">= %d" % counts["failed"],
              summary.get("gpu_resets"))
    if summary:
        print("     (backoffs %s, restarts %s, evictions %s, bytes_moved "
              "%s)" % tuple(summary.get(k) for k in (
                  "backoffs", "restarts", "evictions", "bytes_moved")))
    return summary


def test_random(rng):
    print("== random workloads against the model")
    cases = [
        # name, class, dups, threads, small, hangs, jobs, plain buffers
        ("r1", "wait-die", False, 1, "vram", 3, 1000, 24),
        ("r2", "wound-wait", False, 16, "vram", 3, 3000, 24),
        ("r3", "wait-die", True, 16, "vram", 2, 3000, 24),
        ("r4", "wound-wait", True, 1, "vram", 2, 1000, 20),
        ("r5", "wait-die", False, 4, None, 1, 1500, 24),
        ("r6", "wound-wait", True, 8, None, 0, 1500, 24),
        ("r7", "wound-wait", False, 16, "vram", 0, 3000, 6),
        ("r8", "wait-die", True, 16, "vram", 2, 3000, 6),
        ("r9", "wait-die", False, 4, "gtt", 2, 1500, 20),
        ("r10", "wound-wait", True, 16, "gtt", 2, 2000, 20),
    ]
    for c in cases:
        random_case(c[0], random.Random(rng.getrandbits(64)), *c[1:])


# --------------------------------------------------------------------------

def test_fixed():
    """A small hand-written workload, every rule once."""
    print("== a fixed workload, every rule once")
    text = """# every rule once
bo pin 4096 pinned
bo a 4096
bo b 8192 vram
bo c 4096 gtt
bo d 4096 system
bo e 64x64:XR24
bo f 64x64:R8 vram
bo g 32x32:RG16 gtt
bo big 131072 vram
job 0 0 10 add=5 a b   # 5 to a and b
job 0 1 10 add=7 a a   # duplicate: EINVAL, or 7 once
job 1 0 10 hang c      # fails, changes nothing
job 1 0 10 add=0xffffffff c d e f g pin
job 2 0 10 add=1 big a # ENOSPC
job 2 1 10 nop a b c
job 3 1 0 add=2 e
"""
    bos, jobs = parse_workload(text)
    path = write("fixed.txt", text)
    for dups in (False, True):
        dump = tmp("fixed-%d.json" % dups)
        args = ["run", "--workload", path, "--json", "--dump", dump,
                "--no-progress", "--vram", "64K", "--hang-timeout-ms", "20"]
        if dups:
            args.append("--allow-duplicates")
        r = ttmsim(args)
        what = "fixed workload, dups %s" % ("on" if dups else "off")
        check_eq(r.rc, 0, "%s: exit status" % what, r.tail())
        s = load_json(r.out, what)
        value, counts, by_errno = expect_run(bos, jobs, dups, {"big"})
        compare_counters(what, s, counts, by_errno, {"workload": path})
        try:
            d = load_json(open(dump).read(), what)
        except OSError as e:
            fail("%s: dump written" % what, dump, repr(e))
            d = None
        compare_dump(what, d, bos, value, {"big"}, {"pin": "vram"})


# --------------------------------------------------------------------------

def dump_sums(d):
    return [(e.get("name"), e.get("size"), e.get("first_word"),
             e.get("words_sum")) for e in (d or {}).get("bos", [])]


def test_save_replay():
    print("== --save-workload, then replay")
    saved = tmp("saved.txt")
    d1, d2 = tmp("saved-run.json"), tmp("replay-run.json")
    gen = ["--threads", "3", "--jobs", "200", "--seed", "7", "--bos", "64",
           "--vram", "512K", "--job-us", "0:20"]
    r1 = ttmsim(["run"] + gen + ["--save-workload", saved, "--json",
                                 "--dump", d1, "--no-progress"])
    check_eq(r1.rc, 0, "generated run with --save-workload: exit status",
             r1.tail())
    s1 = load_json(r1.out, "generated run")
    if s1:
        check_eq(s1.get("seed"), 7, "generated run: the seed is echoed")
    try:
        text = open(saved).read()
    except OSError as e:
        fail("--save-workload wrote the file", saved, repr(e))
        return
    m = re.search(r"--engines (\d+)", text)
    engines = m.group(1) if m else "2"
    r2 = ttmsim(["run", "--workload", saved, "--engines", engines, "--vram",
                 "512K", "--json", "--dump", d2, "--no-progress"])
    check_eq(r2.rc, 0, "replay of the saved workload: exit status",
             r2.tail())
    s2 = load_json(r2.out, "replay")
    try:
        j1 = load_json(open(d1).read(), "generated dump")
        j2 = load_json(open(d2).read(), "replay dump")
    except OSError as e:
        fail("both dumps written", "files", repr(e))
        return
    check(dump_sums(j1) == dump_sums(j2) and dump_sums(j1),
          "replay: the same contents (%d buffers)" % len(dump_sums(j1)),
          "identical dumps",
          "differ at %s" % [a for a, b in zip(dump_sums(j1), dump_sums(j2))
                            if a != b][:3])
    keys = ("jobs", "submitted", "rejected", "rejected_by_errno",
            "completed", "failed")
    if s1 and s2:
        check_eq({k: s2.get(k) for k in keys}, {k: s1.get(k) for k in keys},
                 "replay: the same counters")
    bos, jobs = parse_workload(text)
    check_eq((len(bos), len(jobs)), (64, 600),
             "saved workload: 64 buffers and 3 x 200 jobs")
    value, counts, by_errno = expect_run(bos, jobs, False, set())
    compare_counters("generated run vs model", s1, counts, by_errno)
    compare_dump("generated run vs model", j1, bos, value)
    # The same seed generates the same file; another seed another one.
    again = tmp("saved-again.txt")
    r3 = ttmsim(["run"] + gen + ["--save-workload", again, "--check"])
    check(r3.rc == 0 and os.path.exists(again) and
          open(again).read() == text,
          "the same seed saves the same workload (with --check)",
          "identical file", "rc %s" % r3.rc, r3.tail())


# --------------------------------------------------------------------------

GOOD_HEAD = "# a comment\nbo a 4096\nbo b 64x64:XR24 gtt\n"

# name, body after GOOD_HEAD (the bad line is line 4 unless said),
# bad line number.
MALFORMED = [
    ("unknown directive", "frob a 4096\n", 4),
    ("unknown directive (BO)", "BO c 4096\n", 4),
    ("bad number (size)", "bo c 12ab\n", 4),
    ("bad number (thread)", "job x 0 10 add=1 a\n", 4),
    ("bad number (engine)", "job 0 one 10 add=1 a\n", 4),
    ("bad number (duration)", "job 0 0 1.5 add=1 a\n", 4),
    ("bad number (add value)", "job 0 0 10 add=12q a\n", 4),
    ("size not a multiple of 4", "bo c 4098\n", 4),
    ("fourcc size not a multiple of 4", "bo c 3x1:R8\n", 4),
    ("zero size", "bo c 0\n", 4),
    ("zero fourcc dimension", "bo c 0x16:XR24\n", 4),
    ("negative size", "bo c -4096\n", 4),
    ("overflowing size (2^64+)", "bo c 99999999999999999999999\n", 4),
    ("size over 1 GiB", "bo c 1073741828\n", 4),
    ("overflowing fourcc size", "bo c 65536x65536:XR24\n", 4),
    ("unknown fourcc", "bo c 64x64:ZZZZ\n", 4),
    ("unknown buffer name", "job 0 0 10 add=1 a nosuch\n", 4),
    ("buffer used before its bo line", "job 0 0 10 add=1 c\nbo c 4096\n",
     4),
    ("duplicate buffer name", "bo c 4096\nbo a 8192\n", 5),
    ("bad op", "job 0 0 10 mul=3 a\n", 4),
    ("add value out of range", "job 0 0 10 add=4294967296 a\n", 4),
    ("unknown placement", "bo c 4096 vrm\n", 4),
    ("missing fields (bo without size)", "bo c\n", 4),
    ("missing fields (bo alone)", "bo\n", 4),
    ("missing fields (job without op)", "job 0 0 10\n", 4),
    ("missing fields (job alone)", "job\n", 4),
    ("job without buffers", "job 0 0 10 add=1\n", 4),
    ("job without buffers (comment)", "job 0 0 10 nop # a\n", 4),
    ("non-text byte (NUL)", b"bo c\x00 4096\n", 4),
    ("non-text byte (ESC)", b"job 0 0 10 nop a\x1b\n", 4),
    ("invalid UTF-8", b"bo c 4096 # \xff\n", 4),
    ("thread out of range (1024)", "job 1024 0 10 add=1 a\n", 4),
    ("engine out of range (64)", "job 0 64 10 add=1 a\n", 4),
    ("duration out of range (> 60 s)", "job 0 0 60000001 add=1 a\n", 4),
    ("bad buffer name", "bo c/d 4096\n", 4),
    ("shrink 0", "shrink 0\n", 4),
    ("shrink out of range", "shrink 60001\n", 4),
    ("shrink not a number", "shrink 5ms\n", 4),
    ("shrink without MS", "shrink\n", 4),
    ("a second shrink line", "shrink 5\njob 0 0 10 add=1 a\nshrink 5\n",
     6),
    ("a late error: nothing runs", "job 0 0 10 add=1 a\n" * 5 + "frob\n",
     9),
]


def test_malformed():
    print("== malformed workloads: exit 2 naming FILE:LINE:")
    for i, (name, body, line) in enumerate(MALFORMED):
        data = (GOOD_HEAD.encode() + body if isinstance(body, bytes)
                else GOOD_HEAD + body)
        path = write("bad%02d.txt" % i, data)
        dump = tmp("bad%02d.dump" % i)
        r = ttmsim(["run", "--workload", path, "--no-progress", "--dump",
                    dump, "--json"])
        want = "%s:%d:" % (path, line)
        good = (r.rc == 2 and want in r.err and r.out == "" and
                not os.path.exists(dump))
        check(good, "malformed (%s): exit 2, stderr names %s, nothing ran"
              % (name, os.path.basename(path) + ":%d:" % line),
              "exit 2, %r in stderr, empty stdout, no dump" % want,
              "exit %s, stderr %r, stdout %r, dump %s" % (
                  r.rc, r.err.strip()[:200], r.out[:100],
                  os.path.exists(dump)))
    # The same through --check.
    path = tmp("bad00.txt")
    r = ttmsim(["run", "--workload", path, "--check"])
    check(r.rc == 2 and path + ":4:" in r.err,
          "malformed with --check: exit 2 naming the line",
          "exit 2, %s:4:" % path, "exit %s, %r" % (r.rc, r.err.strip()))
    # Standard input.
    data = GOOD_HEAD + "job 0 0 10 add=1 a\nbo c -1\n"
    r = ttmsim(["run", "--workload", "-", "--no-progress"],
               stdin=data.encode())
    check(r.rc == 2 and "<stdin>:5:" in r.err,
          "malformed on standard input: exit 2 naming <stdin>:5:",
          "exit 2, <stdin>:5:", "exit %s, %r" % (r.rc, r.err.strip()))
    missing = tmp("no-such-dir/missing.txt")
    r = ttmsim(["run", "--workload", missing, "--no-progress"])
    check(r.rc == 2 and missing in r.err,
          "missing workload file: exit 2 naming it",
          "exit 2, %r in stderr" % missing,
          "exit %s, %r" % (r.rc, r.err.strip()))
    r = ttmsim(["run", "--workload", TMP, "--no-progress"])
    check(r.rc == 2 and TMP in r.err,
          "a directory as the workload: exit 2 naming it",
          "exit 2, %r in stderr" % TMP, "exit %s, %r" % (r.rc, r.err.strip()))


def test_stdin_check_and_options():
    print("== standard input, --check, bad command lines")
    text = ("bo a 4096\nbo b 32x32:AR24 vram\n"
            "job 0 0 5 add=3 a b\njob 1 2 5 add=4 b\n")
    dump = tmp("stdin.dump")
    r = ttmsim(["run", "--workload", "-", "--json", "--dump", dump,
                "--no-progress"], stdin=text.encode())
    check_eq(r.rc, 0, "--workload - reads standard input: exit status",
             r.tail())
    s = load_json(r.out, "stdin run")
    if s:
        check_eq((s.get("workload"), s.get("completed"), s.get("engines"),
                  s.get("threads")), ("<stdin>", 2, 3, 2),
                 "stdin run: workload <stdin>, 2 completed, 3 engines, "
                 "2 threads")
    try:
        d = load_json(open(dump).read(), "stdin dump")
        bos, jobs = parse_workload(text)
        compare_dump("stdin run", d, bos, expect_run(bos, jobs, False,
                                                     set())[0])
    except OSError as e:
        fail("stdin run: dump written", dump, repr(e))

    # --check parses only: a hang job with a 1 h timeout would take 1 h.
    path = write("check.txt", text + "job 0 1 5 hang a\n")
    dump = tmp("check.dump")
    r = ttmsim(["run", "--workload", path, "--check", "--dump", dump,
                "--hang-timeout-ms", "3600000", "--no-progress"],
               timeout=20)
    check(r.rc == 0 and not os.path.exists(dump) and r.secs < 5 and
          "ok" in r.out,
          "--check exits 0 without running (no dump, %.2f s)" % r.secs,
          "exit 0, 'ok', no dump", "exit %s, dump %s, out %r" % (
              r.rc, os.path.exists(dump), r.out.strip()))

    # More engines than the workload uses are fine; fewer are not.
    r = ttmsim(["run", "--workload", path, "--engines", "5", "--json",
                "--no-progress", "--hang-timeout-ms", "20"])
    s = load_json(r.out, "--engines 5") if r.rc == 0 else None
    check(r.rc == 0 and s and s.get("engines") == 5,
          "--engines 5 with a workload using 3: exit 0, engines 5",
          "exit 0, engines 5", "exit %s, %s" % (r.rc, s and s.get("engines")),
          r.tail())
    r = ttmsim(["run", "--workload", path, "--engines", "2",
                "--no-progress"])
    check(r.rc == 2 and "--engines" in r.err,
          "--engines 2 with a workload using 3: exit 2 naming --engines",
          "exit 2", "exit %s, %r" % (r.rc, r.err.strip()))

    bad = [
        ["--threads", "2"], ["--bos", "10"], ["--bo-size", "4:8"],
        ["--bos-per-job", "1:2"], ["--jobs", "5"], ["--order", "sorted"],
        ["--job-us", "1:2"], ["--seed", "3"],
    ]
    for flags in bad:
        r = ttmsim(["run", "--workload", path, "--no-progress"] + flags)
        check(r.rc == 2 and r.err.strip() and r.out == "",
              "generator flag %s with --workload: exit 2 with a message"
              % " ".join(flags), "exit 2",
              "exit %s, %r" % (r.rc, r.err.strip()))
    options = [
        ["--threads", "0"], ["--threads", "zero"], ["--threads", "-1"],
        ["--threads", "1025"], ["--vram", "-1"], ["--vram", "0"],
        ["--vram", "12X"], ["--vram", ""], ["--gtt", "-1"], ["--frob"],
        ["--class", "wait-wound"], ["--order", "up"], ["--jobs", "0"],
        ["--bo-size", "8:4"], ["--bos-per-job", "4"], ["--seed", "-1"],
        ["--engines", "0"], ["--engines", "65"], ["--hang-timeout-ms", "x"],
        ["--watchdog", "-5"], ["--json=1"], ["extra-argument"],
        ["--bos", "2", "--bos-per-job", "3:3"],
    ]
    for flags in options:
        r = ttmsim(["run", "--no-progress", "--jobs", "1"] + flags)
        check(r.rc == 2 and r.err.strip() and r.out == "",
              "bad option %s: exit 2 with a message" % " ".join(
                  repr(f) if not f else f for f in flags),
              "exit 2, a message, no summary",
              "exit %s, stderr %r, stdout %r" % (r.rc, r.err.strip()[:150],
                                                 r.out[:100]))


def test_good_syntax():
    print("== good files: CRLF, tabs, comments, hex; --quiet")
    text = ("# UTF-8 in a comment: \u00e9\u00e8 \u2014 ok\r\n"
            "bo\ta_1\t4096   # trailing comment\r\n"
            "\r\n"
            "   bo b.2 8x8:AR24 gtt pinned\r\n"
            "bo c-3 16x16:R8 vram\r\n"
            "job 0 1 0 add=0x10 a_1 b.2 c-3#comment right after\r\n"
            "job 2 0 3 add=4294967295 a_1\r\n"
            "job 1 0 3 nop c-3\r\n")
    path = write("good.txt", text.encode("utf-8"))
    dump = tmp("good.dump")
    r = ttmsim(["run", "--workload", path, "--json", "--dump", dump,
                "--no-progress", "--quiet"])
    check_eq(r.rc, 0, "CRLF, tabs, comments, UTF-8 comment, hex add: exit "
             "status", r.tail())
    s = load_json(r.out, "good syntax (--quiet --json)")
    bos, jobs = parse_workload(text.replace("\r", ""))
    value, counts, by_errno = expect_run(bos, jobs, False, set())
    compare_counters("good syntax", s, counts, by_errno,
                     {"threads": 3, "engines": 2})
    try:
        compare_dump("good syntax", load_json(open(dump).read(), "dump"),
                     bos, value, (), {"b.2": "gtt"})
    except OSError as e:
        fail("good syntax: dump written", dump, repr(e))
    r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet"])
    check(r.rc == 0 and r.out == "", "--quiet without --json: no summary",
          "exit 0, empty stdout", "exit %s, %r" % (r.rc, r.out[:200]))
    r = ttmsim(["run", "--workload", path, "--no-progress"])
    m = re.search(r"^completed: (\d+)$", r.out, re.M)
    check(r.rc == 0 and m and int(m.group(1)) == 3 and
          re.search(r"^submitted: 3$", r.out, re.M),
          "text summary: key: value lines (submitted: 3, completed: 3)",
          "submitted: 3, completed: 3", r.out[:300])


# --------------------------------------------------------------------------

def check_nesting(events, eps=1e-3):
    """Slices per (pid, tid), properly nested. Return a list of problems."""
    tracks = {}
    problems = []
    for e in events:
        if e.get("ph") != "X":
            continue
        try:
            ts, dur = float(e["ts"]), float(e["dur"])
        except (KeyError, TypeError, ValueError):
            problems.append("slice without ts/dur: %r" % e)
            continue
        if dur < 0:
            problems.append("negative dur: %r" % e)
        tracks.setdefault((e.get("pid"), e.get("tid")), []).append(
            (ts, -dur, ts + dur, e))
    for key, sl in tracks.items():
        sl.sort(key=lambda x: (x[0], x[1]))
        stack = []
        for ts, _, end, e in sl:
            while stack and stack[-1][0] <= ts + eps:
                stack.pop()
            if stack and end > stack[-1][0] + eps:
                p = stack[-1][1]
                problems.append(
                    "track %s: %s [%.3f, %.3f] overlaps %s [%.3f, %.3f]" % (
                        key, e.get("name"), ts, end, p.get("name"),
                        float(p["ts"]), stack[-1][0]))
                continue
            stack.append((end, e))
    return tracks, problems


def test_trace(rng):
    print("== --trace: Chrome trace-event JSON, nested slices")
    trace_one("generated run", tmp("trace.json"), [
        "--threads", "4", "--jobs", "150", "--bos", "48", "--bo-size",
        "4096:32768", "--vram", "192K", "--seed", "11", "--job-us", "0:30",
        "--class", "wound-wait"])
    # A workload file with hangs, rejections and evictions (moves).
    text = gen_workload(random.Random(rng.getrandbits(64)), 8, "vram", 3,
                        600, 20)[0]
    path = write("traced.txt", text)
    trace_one("workload with hangs and evictions", tmp("trace2.json"), [
        "--workload", path, "--vram", "64K", "--hang-timeout-ms", "20",
        "--class", "wait-die"])


def trace_one(what, trace, run_args):
    r = ttmsim(["run"] + run_args + ["--json", "--trace", trace,
                                     "--no-progress"])
    check_eq(r.rc, 0, "traced %s: exit status" % what, r.tail())
    s = load_json(r.out, "traced " + what)
    w = "trace of the " + what
    try:
        t = load_json(open(trace).read(), w)
    except OSError as e:
        fail("%s: written" % w, trace, repr(e))
        return
    if not isinstance(t, dict) or not isinstance(t.get("traceEvents"), list):
        fail("%s: an object with a traceEvents list" % w, "list",
             type(t.get("traceEvents")) if isinstance(t, dict) else type(t))
        return
    ev = t["traceEvents"]
    ok("%s: parses as JSON with traceEvents (%d events)" % (w, len(ev)))
    bad = [e for e in ev if not isinstance(e, dict) or "ph" not in e or
           "pid" not in e or "tid" not in e or "name" not in e]
    check(not bad, "%s: every event has name, ph, pid, tid" % w,
          "none bad", bad[:3])
    tracks, problems = check_nesting(ev)
    check(not problems, "%s: slices properly nested on each of %d tracks"
          % (w, len(tracks)), "no overlap", "%d problems" % len(problems),
          "\n".join(problems[:10]))
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "gpu" and
           isinstance(e.get("args"), dict) and "job" in e["args"]]
    phases = [e for e in ev if e.get("ph") == "X" and
              e.get("cat") == "execbuf"]
    check(gpu, "%s: GPU job slices (%d)" % (w, len(gpu)), "> 0", len(gpu))
    names = set(e.get("name") for e in phases)
    check({"submit", "lock", "validate"} <= names,
          "%s: submitter phases (submit, lock, validate) on %d tracks" %
          (w, len(set(e.get("tid") for e in phases))),
          "submit, lock, validate", sorted(names))
    if s:
        check_eq(len(gpu), s.get("completed", 0) + s.get("failed", 0),
                 "%s: one GPU slice per job that ran (completed + failed)"
                 % w)
        jobs = [e["args"]["job"] for e in gpu]
        check_eq(len(set(jobs)), len(jobs), "%s: no job twice" % w)
        check_eq(len([e for e in phases if e.get("name") == "submit"]),
                 s.get("submitted"), "%s: one submit slice per submission"
                 % w)
        hangs = [e for e in gpu if e["args"].get("op") == "hang"]
        if s.get("failed"):
            check(len(hangs) == s["failed"] and all(
                e["args"].get("status") == -110 for e in hangs),
                "%s: each hang job's slice has status -ETIMEDOUT" % w,
                "%d with status -110" % s["failed"],
                [e["args"].get("status") for e in hangs])
    pids = set(e.get("pid") for e in ev if e.get("ph") == "X")
    check(len(pids) >= 2 and 0 not in set(e.get("tid") for e in ev),
          "%s: GPU and submitters in their own processes, no tid 0" % w,
          ">= 2 pids", sorted(pids))


# --------------------------------------------------------------------------

def interrupt(json_out, rng, sig=signal.SIGINT, extra=()):
    """Start a long generated run, SIGINT it once running."""
    args = [TTMSIM, "run", "--threads", "4", "--jobs", "100000",
            "--bos", "256", "--job-us", "50:100", "--seed",
            str(rng.randrange(1, 1 << 30)), "--progress"] + list(extra)
    if json_out:
        args.append("--json")
    # TTMSIM_TEST_BLOCK_SIGNALS=1: start ttmsim with SIGINT and SIGTERM
    # blocked in every thread (a diagnosis aid: it tells a signal taken by
    # a thread that does not block it from the rest).
    pre = None
    if os.environ.get("TTMSIM_TEST_BLOCK_SIGNALS") == "1":
        pre = lambda: signal.pthread_sigmask(signal.SIG_BLOCK,
                                             [signal.SIGINT, signal.SIGTERM])
    p = subprocess.Popen(args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=pre)
    # The progress bar appears once the run has started (the signals are
    # then handled); give up waiting after 10 s.
    started = False
    deadline = time.monotonic() + 10
    errbuf = b""
    while time.monotonic() < deadline and p.poll() is None:
        rl, _, _ = select.select([p.stderr], [], [], 0.1)
        if rl:
            chunk = os.read(p.stderr.fileno(), 4096)
            errbuf += chunk
            if b"jobs" in errbuf:
                started = True
                break
    time.sleep(0.5)
    alive = p.poll() is None
    what = "%s mid-run (%s)" % (signal.Signals(sig).name,
                                " ".join(["--json" if json_out else "text"] +
                                         list(extra)))
    check(started and alive, "%s: the run started and is running" % what,
          "running", "started %s, alive %s" % (started, alive))
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail("%s: exits within 40 s" % what, "exit 130", "still running")
        return
    secs = time.monotonic() - t0
    out = out.decode("utf-8", "replace")
    err = (errbuf + err).decode("utf-8", "replace")
    how = ("killed by signal %d" % -p.returncode if p.returncode < 0 else
           "exit %d" % p.returncode)
    if check_eq(how, "exit 130", "%s: exit status 130" % what,
                err[-500:].replace("\r", "\n")):
        check(secs < 5, "%s: exits within 5 s (%.2f s)" % (what, secs),
              "< 5 s", "%.2f s" % secs)
    if json_out:
        s = load_json(out, what)
        if s:
            check_eq(s.get("interrupted"), True, "%s: interrupted true" %
                     what)
            sub, total = s.get("submitted", 0), s.get("jobs", 0)
            check(0 < sub < total and
                  sub == s.get("rejected", -1) + s.get("completed", -1) +
                  s.get("failed", -1) and s.get("in_flight") == 0 and
                  s.get("not_submitted") == total - sub,
                  "%s: a partial summary (%d of %d submitted, submitted == "
                  "rejected + completed + failed)" % (what, sub, total),
                  "0 < submitted < jobs, the sum", {k: s.get(k) for k in (
                      "jobs",
                      "submitted", "rejected", "completed", "failed",
                      "in_flight", "not_submitted", "rejected_by_errno")})
            if "--shrink-ms" in extra:
                check_shrinker(what, s, int(
                    extra[list(extra).index("--shrink-ms") + 1]))
    else:
        check("interrupted: yes" in out and re.search(r"^submitted: \d+",
                                                     out, re.M),
              "%s: a text summary with 'interrupted: yes'" % what,
              "summary", out[-500:])


def check_shrinker(what, s, period):
    """The shrinker's counters in summary @s: it ran, it swapped."""
    if not s:
        return
    sh = {k: s.get(k) for k in ("shrink_ms", "shrink_passes",
                                "shrink_buffers", "shrink_bytes",
                                "shrink_busy", "shrink_errors")}
    check(sh["shrink_ms"] == period and
          all(isinstance(sh[k], int) and sh[k] > 0 for k in (
              "shrink_passes", "shrink_buffers", "shrink_bytes")) and
          sh["shrink_errors"] == 0 and
          sh["shrink_bytes"] >= 4 * sh["shrink_buffers"],
          "%s: the shrinker ran every %d ms and swapped buffers out (%s "
          "passes, %s buffers, %s bytes)" % (
              what, period, sh["shrink_passes"], sh["shrink_buffers"],
              sh["shrink_bytes"]),
          "shrink_ms %d, passes/buffers/bytes > 0, no errors" % period, sh)


def test_shrink(rng):
    print("== --shrink-ms: a shrinker swapping buffers out mid-run")
    # Small domains, so that buffers are resident to swap out; the jobs
    # last long enough (~0.1 s or more) for many 1 ms passes.
    cases = [
        # name, class, dups, threads, small, hangs, jobs, plain buffers
        ("s1", "wait-die", False, 4, "vram", 1, 600, 20),
        ("s2", "wound-wait", True, 8, "gtt", 1, 600, 20),
        ("s3", "wound-wait", False, 4, "vram", 0, 600, 20),
        ("s4", "wait-die", True, 8, None, 0, 600, 20),
    ]
    for c in cases:
        s = random_case(c[0], random.Random(rng.getrandbits(64)), *c[1:],
                        extra=("--shrink-ms", "1"))
        check_shrinker("%s (%s, %d threads, %s)" % (
            c[0], c[1], c[3], "64K of " + c[4].upper() if c[4] else
            "default sizes"), s, 1)

    # A `shrink` line in the file; --shrink-ms overrides it, 0 turns it off.
    text, bos, jobs, never_fit, placements, cap = gen_workload(
        random.Random(rng.getrandbits(64)), 4, "vram", 0, 400, 16)
    path = write("shrink-line.txt", "shrink 1\n" + text)
    value, counts, by_errno = expect_run(bos, jobs, False, never_fit)
    for over, period in ((None, 1), ("2", 2), ("0", None)):
        dump = tmp("shrink-line.dump.json")
        args = ["run", "--workload", path, "--vram", "64K", "--json",
                "--dump", dump, "--no-progress"]
        if over is not None:
            args += ["--shrink-ms", over]
        r = ttmsim(args)
        what = "workload with 'shrink 1'%s" % (
            ", --shrink-ms " + over if over is not None else "")
        check_eq(r.rc, 0, "%s: exit status" % what, r.tail())
        s = load_json(r.out, what)
        compare_counters(what, s, counts, by_errno, {
            "checker_reports": 0, "exit_status": 0})
        try:
            compare_dump(what, load_json(open(dump).read(), what + " dump"),
                         bos, value, never_fit, placements)
        except OSError as e:
            fail("%s: dump written" % what, dump, repr(e))
        if period:
            check_shrinker(what, s, period)
        elif s:
            check_eq(sorted(k for k in s if k.startswith("shrink")), [],
                     "%s: no shrinker, no shrink keys" % what)
    r = ttmsim(["run", "--workload", path, "--check"])
    check(r.rc == 0 and "shrink every 1 ms: ok" in r.out,
          "--check names the file's shrinker", "shrink every 1 ms: ok",
          r.out.strip())
    bad = write("shrink-twice.txt", "shrink 1\n" + text + "shrink 2\n")
    n = len(("shrink 1\n" + text).splitlines()) + 1
    r = ttmsim(["run", "--workload", bad, "--shrink-ms", "3", "--check"])
    check(r.rc == 2 and "%s:%d:" % (bad, n) in r.err,
          "a second shrink line: exit 2 naming it, even with --shrink-ms",
          "exit 2, %s:%d:" % (bad, n), "exit %s, %r" % (r.rc, r.err))

    # A generated run with --shrink-ms: saved, replayed with the shrinker.
    saved = tmp("shrink-saved.txt")
    gen = ["--threads", "4", "--jobs", "150", "--bos", "48", "--bo-size",
           "4096:16384", "--seed", "5", "--job-us", "0:30", "--vram",
           "96K", "--gtt", "128K", "--shrink-ms", "1"]
    r1 = ttmsim(["run"] + gen + ["--save-workload", saved, "--json",
                                 "--no-progress"])
    check_eq(r1.rc, 0, "generated run with --shrink-ms 1: exit status",
             r1.tail())
    check_shrinker("generated run", load_json(r1.out, "generated run"), 1)
    try:
        text = open(saved).read()
    except OSError as e:
        fail("--save-workload with --shrink-ms wrote the file", saved,
             repr(e))
        return
    check(re.search(r"^shrink 1$", text, re.M),
          "the saved workload has its 'shrink 1' line", "shrink 1",
          text[:300])
    m = re.search(r"--engines (\d+)", text)
    r2 = ttmsim(["run", "--workload", saved, "--engines",
                 m.group(1) if m else "2", "--vram", "96K", "--gtt", "128K",
                 "--json", "--no-progress"])
    check_eq(r2.rc, 0, "replay with the saved shrink line: exit status",
             r2.tail())
    s2 = load_json(r2.out, "replay")
    check_shrinker("replay of the saved workload", s2, 1)
    bos, jobs = parse_workload(text)
    value, counts, by_errno = expect_run(bos, jobs, False, set())
    compare_counters("replay with the shrinker", s2, counts, by_errno)

    # The shrinker stops at once when the jobs are done: a period of a
    # minute does not keep a short run alive (and no pass ran).
    r = ttmsim(["run", "--threads", "2", "--jobs", "20", "--bos", "8",
                "--shrink-ms", "60000", "--json", "--no-progress"])
    s = load_json(r.out, "--shrink-ms 60000") if r.rc == 0 else None
    check(r.rc == 0 and r.secs < 10 and s and s.get("shrink_ms") == 60000
          and s.get("shrink_passes") == 0,
          "--shrink-ms 60000 on a short run: exit 0 at once (%.2f s), no "
          "pass" % r.secs, "exit 0, < 10 s, shrink_ms 60000, 0 passes",
          "exit %s, %s" % (r.rc, s and {k: v for k, v in s.items()
                                        if k.startswith("shrink")}),
          r.tail())

    # Bad values: exit 2 naming the flag, nothing run.
    for v in ("-1", "60001", "abc", "", "1.5", "18446744073709551616"):
        r = ttmsim(["run", "--shrink-ms", v, "--threads", "1", "--jobs",
                    "1", "--json", "--no-progress"])
        check(r.rc == 2 and "--shrink-ms" in r.err and r.out == "",
              "--shrink-ms %r: exit 2 naming the flag" % v,
              "exit 2, --shrink-ms in stderr", "exit %s, %r" % (
                  r.rc, r.err.strip()[:200]))


# --------------------------------------------------------------------------

def test_exact_counters():
    """One thread, three VRAM-only buffers of 8K in 8K of VRAM: exactly
    one is resident at a time, so every count follows from the file."""
    print("== exact counters: one thread, one buffer's room of VRAM")
    names = ["a", "b", "c"]
    uses = ["a", "b", "c", "a", "a", "b", "b", "c"]
    text = "".join("bo %s 8192 vram\n" % n for n in names)
    text += "".join("job 0 %d 5 add=%d %s\n" % (k % 2, k + 1, n)
                    for k, n in enumerate(uses))
    path = write("exact.txt", text)
    # Creating each buffer after the first evicts the one before it; each
    # job whose buffer is not the resident one evicts that (a move out)
    # and moves its own back in. Nothing else moves, nothing backs off.
    evictions = len(names) - 1
    moves = len(names) - 1
    resident = names[-1]
    for n in uses:
        if n != resident:
            evictions += 1
            moves += 2
            resident = n
    want = {"evictions": evictions, "moves": moves,
            "bytes_moved": 8192 * moves, "backoffs": 0, "restarts": 0,
            "completed": len(uses), "rejected": 0, "failed": 0,
            "not_submitted": 0, "exit_status": 0}
    for cls in ("wait-die", "wound-wait"):
        r = ttmsim(["run", "--workload", path, "--vram", "8K", "--class",
                    cls, "--json", "--no-progress"])
        s = load_json(r.out, "exact counters") if r.rc == 0 else None
        got = {k: s.get(k) for k in want} if s else r.tail()
        check_eq(got, want, "%s, %d jobs on 3 buffers: evictions %d, "
                 "moves %d, bytes_moved, backoffs == restarts == 0" % (
                     cls, len(uses), evictions, moves))
        r = ttmsim(["run", "--workload", path, "--vram", "8K", "--class",
                    cls, "--no-progress"])
        check(r.rc == 0 and re.search(r"^evictions: %d$" % evictions, r.out,
                                      re.M),
              "%s, text summary: evictions: %d" % (cls, evictions),
              "evictions: %d" % evictions, r.out[-600:])


def test_faults():
    """The run's own checks fail when they must (TTMSIM_TEST_FAULT)."""
    print("== the run fails when a check must fail (TTMSIM_TEST_FAULT)")
    text = ("bo a 4096\nbo b 64\n"
            "job 0 0 5 add=5 a b\njob 0 1 5 add=7 a\njob 1 0 5 add=1 b\n")
    path = write("faults.txt", text)
    cases = [
        # fault, what stderr must say, what the summary must say
        ("word1", r"invariant: buffer 'a' word 1 is 13, the completed "
         r"adds make 12", {"completed": 3, "not_submitted": 0}),
        ("retire-twice", r"invariant: the job of line 3 retired 2 times, "
         r"not 1", {"completed": 3, "not_submitted": 0}),
        ("submit-list", r"thread 0: cannot allocate its list of 2 buffers"
         r": out of memory.*\n.*invariant: 2 of 3 jobs not submitted: a "
         r"thread could not submit",
         {"completed": 1, "submitted": 1, "not_submitted": 2}),
    ]
    for fault, err, counts in cases:
        dump = tmp("faults-%s.json" % fault)
        env = dict(os.environ, TTMSIM_TEST_FAULT=fault)
        p = subprocess.run([TTMSIM, "run", "--workload", path, "--json",
                            "--dump", dump, "--no-progress"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        out = p.stdout.decode("utf-8", "replace")
        serr = p.stderr.decode("utf-8", "replace")
        s = load_json(out, "fault " + fault) if out.strip() else None
        want = dict(counts, exit_status=1)
        check(p.returncode == 1 and re.search(err, serr) and s and
              {k: s.get(k) for k in want} == want,
              "TTMSIM_TEST_FAULT=%s: exit 1, stderr says /%s/, summary %s"
              % (fault, err, want), "exit 1",
              "exit %s, %s" % (p.returncode, s and {k: s.get(k)
                                                    for k in want}),
              serr)
    # The same workload without a fault: exit 0, so that the cases above
    # fail because of their fault.
    r = ttmsim(["run", "--workload", path, "--quiet", "--no-progress"])
    check_eq(r.rc, 0, "the faults' workload without a fault: exit 0",
             r.tail())


def test_outputs():
    """Outputs that cannot be written fail the run; JSON stays JSON."""
    print("== outputs: write errors, non-UTF-8 workload path, atomic files")
    text = "bo a 4096\njob 0 0 5 add=5 a\n"
    path = write("out.txt", text)
    if os.path.exists("/dev/full"):
        for flags in ([], ["--json"]):
            with open("/dev/full", "w") as full:
                p = subprocess.run([TTMSIM, "run", "--workload", path,
                                    "--no-progress"] + flags, stdout=full,
                                   stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode("utf-8", "replace")
            check(p.returncode == 1 and "standard output" in err,
                  "summary%s to /dev/full: exit 1 naming standard output"
                  % (" (--json)" if flags else ""),
                  "exit 1, 'standard output' on stderr",
                  "exit %s, %r" % (p.returncode, err))
        for flag in ("--dump", "--trace"):
            r = ttmsim(["run", "--workload", path, "--no-progress",
                        "--quiet", flag, "/dev/full"])
            check(r.rc == 1 and "/dev/full" in r.err,
                  "%s /dev/full: exit 1 naming it" % flag,
                  "exit 1, /dev/full in stderr",
                  "exit %s, %r" % (r.rc, r.err))
        r = ttmsim(["run", "--seed", "3", "--jobs", "20", "--no-progress",
                    "--quiet", "--save-workload", "/dev/full"])
        check(r.rc == 1 and "/dev/full" in r.err,
              "--save-workload /dev/full: exit 1 naming it",
              "exit 1, /dev/full in stderr", "exit %s, %r" % (r.rc, r.err))
    # A dump that cannot be written leaves the old file as it was, and
    # no temporary file in its directory.
    d = os.path.join(TMP, "ro")
    os.mkdir(d)
    old = os.path.join(d, "dump.json")
    with open(old, "w") as f:
        f.write("old\n")
    r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet",
                "--dump", os.path.join(d, "no-such-dir", "x.json")])
    check(r.rc == 1 and "no-such-dir" in r.err,
          "--dump into a missing directory: exit 1 naming it", "exit 1",
          "exit %s, %r" % (r.rc, r.err))
    r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet",
                "--dump", old])
    check(r.rc == 0 and json.load(open(old)).get("bos") and
          os.listdir(d) == ["dump.json"],
          "--dump over an old file: replaced whole, no temporary left",
          "exit 0, the dump, one file", "exit %s, %s" % (r.rc,
                                                       os.listdir(d)))
    # Replacing a file keeps its permission bits (the temporary file is
    # made 0666 less the umask, then given the old file's mode).
    os.chmod(old, 0o600)
    r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet",
                "--dump", old])
    mode = os.stat(old).st_mode & 0o7777
    check(r.rc == 0 and mode == 0o600,
          "--dump over a 0600 file: still 0600", "exit 0, 0600",
          "exit %s, %o" % (r.rc, mode))
    # A new file gets 0666 less the umask, as any new file.
    new_file = os.path.join(TMP, "new-dump.json")
    mask = os.umask(0o022)
    try:
        r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet",
                    "--dump", new_file])
    finally:
        os.umask(mask)
    mode = os.stat(new_file).st_mode & 0o7777 if r.rc == 0 else None
    check(mode == 0o644, "--dump to a new file with umask 022: 0644",
          "0644", "exit %s, mode %s" % (r.rc, mode is not None and
                                        "%o" % mode))
    # A 255-byte file name: the temporary name must not be longer.
    long_name = os.path.join(d, "d" * 255)
    r = ttmsim(["run", "--workload", path, "--no-progress", "--quiet",
                "--dump", long_name])
    check(r.rc == 0 and os.path.exists(long_name) and
          sorted(os.listdir(d)) == sorted(["dump.json", "d" * 255]),
          "--dump to a 255-byte file name: written, no temporary left",
          "exit 0", "exit %s, %r" % (r.rc, r.err))
    # --save-workload goes through the same helper: whole, mode kept.
    saved = os.path.join(d, "saved.txt")
    with open(saved, "w") as f:
        f.write("old\n")
    os.chmod(saved, 0o600)
    r = ttmsim(["run", "--seed", "3", "--jobs", "20", "--no-progress",
                "--quiet", "--save-workload", saved])
    text_saved = open(saved).read()
    check(r.rc == 0 and text_saved.startswith("# ttmsim workload") and
          os.stat(saved).st_mode & 0o7777 == 0o600 and
          sorted(os.listdir(d)) == sorted(["dump.json", "d" * 255,
                                           "saved.txt"]),
          "--save-workload over a 0600 file: replaced whole, still 0600, "
          "no temporary left", "exit 0",
          "exit %s, %r, %o" % (r.rc, text_saved[:40],
                               os.stat(saved).st_mode & 0o7777))
    outputs_readonly_dir(path)
    # A workload path that is not UTF-8: the JSON is still JSON, the path
    # shown with U+FFFD and workload_not_utf8 saying so.
    raw = os.path.join(TMP.encode(), b"w\xff\xfex.txt")
    with open(raw, "w") as f:
        f.write(text)
    p = subprocess.run([TTMSIM.encode(), b"run", b"--workload", raw,
                        b"--json", b"--no-progress"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    try:
        s = json.loads(p.stdout.decode("utf-8"))
    except ValueError as e:
        s = None
        fail("non-UTF-8 workload path: the summary is UTF-8 JSON", "JSON",
             "%s: %r" % (e, p.stdout[:300]))
    if s is not None:
        check(p.returncode == 0 and
              s.get("workload", "").endswith("w\ufffd\ufffdx.txt") and
              s.get("workload_not_utf8") is True,
              "non-UTF-8 workload path: valid JSON, U+FFFD for each bad "
              "byte, workload_not_utf8 true", "w\ufffd\ufffdx.txt, true",
              "exit %s, %r, %r" % (p.returncode, s.get("workload"),
                                   s.get("workload_not_utf8")))
    r = ttmsim(["run", "--workload", path, "--json", "--no-progress"])
    s = load_json(r.out, "UTF-8 path") if r.rc == 0 else None
    check(s and "workload_not_utf8" not in s,
          "a UTF-8 workload path: no workload_not_utf8 key", "absent",
          s and s.get("workload_not_utf8"))


def staged_for_nobody():
    """Copy the binary and its libttmsim where nobody may read them.

    The build tree may sit in a directory only root can enter (a clone
    in a mktemp -d directory is 0700), so nobody could not load the
    library from there: stage both in a world-readable directory and
    point LD_LIBRARY_PATH at it (the binary's RUNPATH does not outrank
    it). Returns (directory, command prefix, binary).
    """
    stage = tempfile.mkdtemp(prefix="ttmsim-nobody-")
    os.chmod(stage, 0o755)
    out = subprocess.run(["ldd", TTMSIM], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout.decode()
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("libttmsim") and "=>" in parts:
            lib = parts[parts.index("=>") + 1]
            shutil.copy(lib, os.path.join(stage, parts[0]))
    prog = os.path.join(stage, "ttmsim")
    shutil.copy(TTMSIM, prog)
    for f in os.listdir(stage):
        os.chmod(os.path.join(stage, f), 0o755)
    return stage, ["env", "LD_LIBRARY_PATH=" + stage], prog


def outputs_readonly_dir(path):
    """A writable file in a directory we may not write is written in place.

    Root may write any directory, so as root the run is made as nobody
    (setpriv), in a directory nobody may not write, on a file it may.
    """
    workload = path
    d = tempfile.mkdtemp(prefix="ttmsim-ro-")
    os.chmod(d, 0o755)
    target = os.path.join(d, "dump.json")
    with open(target, "w") as f:
        f.write("old\n")
    os.chmod(target, 0o666)
    pre = []
    stage = None
    prog = TTMSIM
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            print("SKIP: read-only directory: root, and no setpriv to run "
                  "as nobody")
            return
        stage, env, prog = staged_for_nobody()
        pre = [setpriv, "--reuid=65534", "--regid=65534",
               "--clear-groups"] + env
        # nobody must reach the binary and the workload.
        with open(path) as f:
            wl = os.path.join(d, "w.txt")
            with open(wl, "w") as g:
                g.write(f.read())
        os.chmod(wl, 0o644)
        path = wl
    os.chmod(d, 0o555)
    try:
        p = subprocess.run(pre + [prog, "run", "--workload", path,
                                  "--no-progress", "--quiet", "--dump",
                                  target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        try:
            got = json.load(open(target)).get("bos")
        except ValueError:
            got = None
        check(p.returncode == 0 and got,
              "--dump to a writable file in a read-only directory: "
              "written in place", "exit 0, the dump",
              "exit %s, %r" % (p.returncode, err))
        # An output that fails there (a write past RLIMIT_FSIZE: EFBIG)
        # leaves the old file as it was, not emptied at open.
        with open(target, "w") as f:
            f.write("old\n")

        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
        p = subprocess.run(pre + [prog, "run", "--workload", path,
                                  "--no-progress", "--quiet", "--dump",
                                  target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60, preexec_fn=small_files)
        err = p.stderr.decode("utf-8", "replace")
        kept = open(target).read()
        check(p.returncode == 1 and "dump.json" in err and kept == "old\n",
              "--dump failing in a read-only directory: exit 1 naming it, "
              "the old file as it was", "exit 1, 'old\\n'",
              "exit %s, %r, %r" % (p.returncode, kept[:40], err))
    finally:
        os.chmod(d, 0o755)
        shutil.rmtree(d)
    try:
        outputs_readonly_file(workload, pre, prog)
    finally:
        if stage:
            shutil.rmtree(stage)


def outputs_readonly_file(path, pre, prog):
    """A 0444 output file in a writable directory is refused, not replaced.

    As fopen(path, "w") would; run as nobody when root (who may write it).
    """
    d = tempfile.mkdtemp(prefix="ttmsim-ro-file-")
    os.chmod(d, 0o777)
    target = os.path.join(d, "dump.json")
    with open(target, "w") as f:
        f.write("old\n")
    os.chmod(target, 0o444)
    wl = os.path.join(d, "w.txt")
    shutil.copyfile(path, wl)
    os.chmod(wl, 0o644)
    try:
        p = subprocess.run(pre + [prog, "run", "--workload", wl,
                                  "--no-progress", "--quiet", "--dump",
                                  target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        kept = open(target).read()
        check(p.returncode == 1 and "dump.json" in err and
              "Permission denied" in err and kept == "old\n" and
              sorted(os.listdir(d)) == ["dump.json", "w.txt"],
              "--dump over a 0444 file in a writable directory: refused, "
              "the file as it was, no temporary left", "exit 1, 'old\\n'",
              "exit %s, %r, %r, %s" % (p.returncode, kept[:40], err,
                                       os.listdir(d)))
    finally:
        shutil.rmtree(d)


def test_sigint(rng):
    print("== SIGINT and SIGTERM mid-run")
    interrupt(True, rng)
    interrupt(False, rng)
    interrupt(True, rng, signal.SIGTERM)
    # With a shrinker swapping out of 2 MiB of VRAM: it stops at once too.
    interrupt(True, rng, signal.SIGINT, ("--shrink-ms", "1", "--vram", "2M"))


def example_commands(path, text):
    """The `ttmsim run` lines of an example's header comment, as argument
    lists with the workload made @path and --trace/--dump made temporary;
    [[--workload path]] if there are none."""
    cmds = []
    for line in text.splitlines():
        m = re.match(r"#\s*(?:run:)?\s*ttmsim run (.*)$", line)
        if not m:
            continue
        words = m.group(1).split()
        args = []
        i = 0
        while i < len(words):
            w = words[i]
            if w in ("--workload", "--trace", "--dump") and \
                    i + 1 < len(words):
                args += [w, path if w == "--workload" else
                         tmp("example" + w.replace("-", "_") + ".json")]
                i += 2
                continue
            if w in ("--json", "--quiet", "--progress", "--no-progress"):
                i += 1
                continue
            args.append(w)
            i += 1
        if "--workload" in args:
            cmds.append(args)
    return cmds or [["--workload", path]]


def test_examples():
    print("== examples/*.txt (the commands their headers show)")
    files = sorted(glob.glob(os.path.join(SRCDIR, "examples", "*.txt")))
    if not files:
        print("skip examples: none in %s" % os.path.join(SRCDIR, "examples"))
        return
    for path in files:
        text = open(path, encoding="utf-8", errors="replace").read()
        try:
            bos, jobs = parse_workload(text)
        except (ValueError, KeyError, IndexError):
            bos = jobs = None
        for args in example_commands(path, text):
            dump = tmp("example.dump.json")
            if os.path.exists(dump):
                os.unlink(dump)
            r = ttmsim(["run"] + args + ["--json", "--no-progress",
                                         "--dump", dump], timeout=120)
            what = "example %s %s" % (os.path.relpath(path, SRCDIR),
                                      " ".join(os.path.basename(a)
                                               if a.startswith(TMP) else a
                                               for a in args
                                               if a != path and
                                               a != "--workload"))
            s = load_json(r.out, what) if r.rc == 0 else None
            check(r.rc == 0 and s and s.get("submitted") == s.get("jobs") ==
                  s.get("rejected", 0) + s.get("completed", 0) +
                  s.get("failed", 0),
                  "%s: exit 0, every job accounted for (%.1f s)" % (
                      what.strip(), r.secs),
                  "exit 0", "exit %s" % r.rc, r.tail())
            if not s or bos is None:
                continue
            # Never fits: bigger than the only domain it may use.
            cap = {"vram": s.get("vram"), "gtt": s.get("gtt")}
            only = {"vram": "vram", "gtt": "gtt", "system": "gtt"}
            never_fit = {b.name for b in bos if b.place in only and
                         b.size > cap[only[b.place]]}
            value, counts, by_errno = expect_run(
                bos, jobs, "--allow-duplicates" in args, never_fit)
            compare_counters(what.strip(), s, counts, by_errno)
            try:
                d = load_json(open(dump).read(), what + " dump")
            except OSError as e:
                fail("%s: dump written" % what.strip(), dump, repr(e))
                continue
            compare_dump(what.strip(), d, bos, value, never_fit)
            if "--trace" in args:
                trace = args[args.index("--trace") + 1]
                try:
                    t = json.loads(open(trace).read())
                    problems = check_nesting(t["traceEvents"])[1]
                except (OSError, ValueError, KeyError, TypeError) as e:
                    problems = [repr(e)]
                check(not problems, "%s: the trace parses, slices nested"
                      % what.strip(), "no problem", problems[:5])


def main():
    rng = random.Random(SEED)
    t0 = time.monotonic()
    r = ttmsim(["run", "--help"])
    check(r.rc == 0 and "usage" in r.out.lower(), "ttmsim run --help",
          "exit 0 and usage", r.rc)
    test_fixed()
    test_random(rng)
    test_save_replay()
    test_malformed()
    test_stdin_check_and_options()
    test_good_syntax()
    test_trace(rng)
    test_exact_counters()
    test_faults()
    test_outputs()
    test_shrink(rng)
    test_sigint(rng)
    test_examples()
    print("test_run: seed %d: %d passed, %d failed (%.1f s)" % (
        SEED, passed, failed, time.monotonic() - t0))
    if failed:
        print("failed checks:")
        for f in failures:
            print("  " + f)
        print("temporary files kept in %s" % TMP)
        return 1
    shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
