#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of the PRIME, placement-range and syncobj words of the
`ttmsim run` workload format (suite cli).

Usage: test_run_features.py TTMSIM

- Each new word parses, and each kind of bad input exits 2 with
  FILE:LINE: and a message naming what is wrong (a wait no job signals,
  a cycle of waits, a second signal of a binary syncobj, a range in the
  wrong order or too small, ...); a range beyond --vram exits 2 naming
  the flag.
- A workload using every feature runs with exit 0, the buffers hold the
  adds computed here, and the summary counts the features.
- A waiter on another engine than a long signaller: exit 0; with
  TTMSIM_TEST_FAULT=no-wait (the waits dropped) the verifier must see it
  start before the signaller ended: exit 1.
- A hang job a waiter depends on: the waiter fails without running
  (failed 2), and the run verifies.
- A ranged or visible buffer ends inside its window; with
  TTMSIM_TEST_FAULT=no-range (the ranges dropped) the verifier says it
  is outside: exit 1.
- --seconds stops a run whose waiter is held for a signaller that is
  never submitted: exit 0, both counted not submitted.
- --save-workload then --workload: the same lines (file and generated
  with --prime, --syncobjs, --ranges); the generator's flags turn the
  features on (summary counts > 0), keep the rest of the workload of a
  seed, and are refused with --workload or out of range.

Python 3 standard library only. Prints every check; exits 1 if any failed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

if len(sys.argv) < 2:
    sys.exit("usage: test_run_features.py TTMSIM")
TTMSIM = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="ttmsim-test-features-")
failures = []
passed = 0


def check(cond, what, extra=""):
    global passed
    if cond:
        passed += 1
        print("ok: " + what)
    else:
        failures.append(what)
        print("FAIL: %s\n%s" % (what, extra))


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(args, env=None):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([TTMSIM, "run", "--no-progress"] + args, env=e,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def body(path):
    """The lines of a workload file but comments."""
    with open(path) as f:
        return [l for l in f.read().splitlines() if not l.startswith("#")]


def test_errors():
    print("== bad input: exit 2, FILE:LINE: and what is wrong")
    pre = "syncobj s\nsyncobj t timeline\nbo a 4\n"
    cases = [
        ("bo x 4096 vram@5-5\n", 1, r"empty range 'vram@5-5'"),
        ("bo x 8192 vram@0-1\n", 1, r"range 'vram@0-1' holds 1 pages"),
        ("bo x 4096 vram@1-x\n", 1, r"bad range 'vram@1-x'"),
        ("bo x 4096 system@0-9\n", 1, r"bad range 'system@0-9'"),
        ("bo x 4096 vram@0-4294967296\n", 1, r"bad range"),
        ("bo x 4096 pinned visible\n", 1, r"extra word 'visible'"),
        ("bo x 4096 prime pinned\n", 1, r"extra word 'pinned'"),
        ("bo x 4096 prime prime\n", 1, r"extra word 'prime'"),
        ("bo x 4096 shared\n", 1, r"unknown word 'shared'"),
        ("syncobj s\nsyncobj s\n", 2, r"duplicate syncobj name 's'"),
        ("syncobj s binary\n", 1, r"unknown word 'binary'"),
        ("syncobj s timeline x\n", 1, r"extra word 'x'"),
        ("syncobj\n", 1, r"syncobj: missing NAME"),
        ("syncobj a/b\n", 1, r"bad character '/'"),
        (pre + "job 0 0 0 nop wait=s a\n", 4,
         r"wait on binary syncobj 's', which no job signals"),
        (pre + "job 0 0 0 nop wait=t@3 a\njob 1 0 0 nop signal=t@2 a\n", 4,
         r"wait on syncobj 't' point 3, which no job signals"),
        (pre + "job 0 0 0 nop wait=s@1 a\n", 4, r"'wait=s@1': syncobj 's' "
         r"is binary"),
        (pre + "job 0 0 0 nop signal=t a\n", 4, r"is a timeline: name a "
         r"point \(signal=t@POINT\)"),
        (pre + "job 0 0 0 nop wait=t@0 a\n", 4, r"bad point in 'wait=t@0'"),
        (pre + "job 0 0 0 nop wait=t@x a\n", 4, r"bad point in 'wait=t@x'"),
        (pre + "job 0 0 0 nop wait=u a\n", 4, r"unknown syncobj 'u'"),
        (pre + "job 0 0 0 nop post=s a\n", 4, r"bad word 'post=s'"),
        (pre + "job 0 0 0 nop signal=s signal=s a\n", 4,
         r"names that syncobj point twice"),
        (pre + "job 0 0 0 nop signal=t@1 signal=t@2 signal=t@3 "
         "signal=t@4 signal=t@5 a\n", 4, r"more than 4 wait= and signal="),
        (pre + "job 0 0 0 nop signal=s a\njob 1 0 0 nop signal=s a\n", 5,
         r"a second signal of binary syncobj 's' \(the first: the job of "
         r"line 4\)"),
        (pre + "job 0 0 0 nop signal=t@2 a\njob 1 0 0 nop signal=t@2 a\n",
         5, r"a second signal of syncobj 't' point 2"),
        (pre + "job 0 0 0 nop wait=t@1 signal=t@1 a\n", 4,
         r"'signal=t@1': the job names that syncobj point twice"),
        # Thread 0 waits for its own later job: a deadlock.
        (pre + "job 0 0 0 nop wait=s a\njob 0 0 0 nop signal=s a\n", 4,
         r"could never be submitted: .* make a cycle"),
        # Two threads waiting for each other.
        ("syncobj s\nsyncobj r\nbo a 4\n"
         "job 0 0 0 nop wait=s signal=r a\njob 1 0 0 nop wait=r signal=s a\n",
         4, r"make a cycle"),
        # A timeline's points go in order: 2 after 1, which waits on 2.
        (pre + "job 0 0 0 nop signal=t@2 a\n"
         "job 1 0 0 nop wait=t@2 signal=t@1 a\n", 4, r"make a cycle"),
    ]
    for text, line, msg in cases:
        path = write("bad.txt", text)
        rc, out, err = run(["--workload", path, "--check"])
        want = r"%s:%d: .*%s" % (re.escape(path), line, msg)
        check(rc == 2 and re.search(want, err),
              "%r: exit 2, /%s/" % (text[-60:], msg),
              "exit %s, stderr %r" % (rc, err))
    # The line named is on the cycle (6 <-> 7), not line 5, which only
    # waits on a job (8) behind it: the first job left in file order.
    path = write("down.txt", "syncobj s\nsyncobj r\nsyncobj q\nbo a 4\n"
                 "job 2 0 0 nop wait=q a\n"
                 "job 0 0 0 nop wait=s signal=r a\n"
                 "job 1 0 0 nop wait=r signal=s a\n"
                 "job 1 0 0 nop signal=q a\n")
    rc, out, err = run(["--workload", path, "--check"])
    check(rc == 2 and re.search(r"down.txt:[67]: .*make a cycle", err),
          "a cycle behind a waiter: exit 2 naming a line on the cycle",
          "exit %s, stderr %r" % (rc, err))
    path = write("far.txt", "bo a 4096 vram@0-70000\njob 0 0 0 nop a\n")
    rc, out, err = run(["--workload", path, "--quiet"])
    check(rc == 2 and re.search(r"far.txt:1: buffer 'a': range "
                                r"vram@0-70000 ends beyond the VRAM's "
                                r"65536 pages \(--vram\)", err),
          "a range beyond the VRAM: exit 2 naming --vram", err)
    rc, out, err = run(["--workload", path, "--quiet", "--vram", "512M"])
    check(rc == 0, "the same range fits in --vram 512M", err)
    for args, msg in ((["--prime", "101"], "--prime"),
                      (["--syncobjs", "x"], "--syncobjs"),
                      (["--workload", path, "--ranges"], "--ranges")):
        rc, out, err = run(args + ["--quiet"])
        check(rc == 2 and msg in err, "%s: exit 2 naming %s" % (args, msg),
              err)


ALL = """# every feature
syncobj s1
syncobj t timeline
bo a 8192 vram@0-100 prime
bo b 4096 visible pinned
bo c 4096 gtt@10-20
bo d 64x64:XR24 prime
bo e 4096 system prime
job 0 0 100 add=1 signal=s1 signal=t@1 a b
job 1 1 50 add=2 wait=s1 a c
job 2 0 10 add=3 wait=t@1 signal=t@2 d a
job 0 1 10 add=4 wait=t@2 d e
job 3 1 0 add=5 wait=s1 wait=t@2 e b
"""


def test_all_features():
    print("== every feature: runs, verifies, contents, counts")
    path = write("all.txt", ALL)
    dump = os.path.join(TMP, "all.json")
    rc, out, err = run(["--workload", path, "--json", "--dump", dump])
    s = json.loads(out) if out.strip() else {}
    check(rc == 0 and s.get("completed") == 5, "exit 0, 5 jobs completed",
          err)
    want = {"prime_buffers": 3, "prime_imports": 7, "ranged_buffers": 3,
            "syncobjs": 2, "syncobj_words": 8}
    got = {k: s.get(k) for k in want}
    check(got == want, "summary counts %s" % want, got)
    with open(dump) as f:
        d = json.load(f)
    first = {e["name"]: e["first_word"] for e in d["bos"]}
    check(first == {"a": 6, "b": 6, "c": 2, "d": 7, "e": 9},
          "contents: the adds of every job", first)
    rc, out, err = run(["--workload", path, "--save-workload",
                        os.path.join(TMP, "all2.txt"), "--quiet"])
    check(rc == 0 and body(os.path.join(TMP, "all2.txt")) ==
          [l for l in ALL.splitlines() if not l.startswith("#")],
          "save -> the same lines", body(os.path.join(TMP, "all2.txt")))
    rc, out, err = run(["--workload", os.path.join(TMP, "all2.txt"),
                        "--quiet"])
    check(rc == 0, "the saved copy runs and verifies", err)


def test_order():
    print("== a waiter does not start before its signaller ended")
    path = write("order.txt", "syncobj s\nbo a 4\nbo b 4\n"
                 "job 0 0 300000 add=1 signal=s a\n"
                 "job 1 1 0 add=2 wait=s b\n")
    rc, out, err = run(["--workload", path, "--json"])
    s = json.loads(out) if out.strip() else {}
    check(rc == 0 and s.get("completed") == 2, "exit 0, both completed",
          err)
    rc, out, err = run(["--workload", path, "--quiet"],
                       env={"TTMSIM_TEST_FAULT": "no-wait"})
    check(rc == 1 and re.search(r"invariant: the job of line 5 started at "
                                r"\d+ us, before the job of line 4 it "
                                r"waits for \(syncobj 's'\) ended", err),
          "TTMSIM_TEST_FAULT=no-wait: exit 1, the verifier says so", err)
    print("== a waiter on a failed (hung) job fails without running")
    path = write("hang.txt", "syncobj t timeline\nbo a 4\nbo b 4\n"
                 "job 0 0 10 hang signal=t@1 a\n"
                 "job 1 1 0 add=2 wait=t@1 b\n")
    rc, out, err = run(["--workload", path, "--json", "--hang-timeout-ms",
                        "20"])
    s = json.loads(out) if out.strip() else {}
    check(rc == 0 and s.get("failed") == 2 and s.get("completed") == 0,
          "exit 0, both failed (the waiter cancelled)", (s, err))


def test_range_check():
    print("== a ranged buffer lies in its window (the verifier checks)")
    path = write("range.txt", "bo a 4096 vram@100-200\nbo b 4096 visible\n"
                 "bo c 8192 gtt@7-9 pinned\njob 0 0 0 add=1 a b c\n")
    rc, out, err = run(["--workload", path, "--quiet"])
    check(rc == 0, "exit 0", err)
    rc, out, err = run(["--workload", path, "--quiet"],
                       env={"TTMSIM_TEST_FAULT": "no-range"})
    check(rc == 1 and re.search(r"invariant: buffer 'a' lies at bytes "
                                r"\[0, 4096\) of its domain, outside its "
                                r"window \[409600, 819200\)", err),
          "TTMSIM_TEST_FAULT=no-range: exit 1, the verifier says so", err)


def test_stop():
    print("== --seconds ends a run whose waiter is still held")
    text = "syncobj s\nbo a 4\nbo b 4\n" + \
        "job 0 0 20000 add=1 a\n" * 200 + \
        "job 0 0 0 add=1 signal=s a\njob 1 1 0 add=2 wait=s b\n"
    path = write("stop.txt", text)
    rc, out, err = run(["--workload", path, "--seconds", "0.2", "--json"])
    s = json.loads(out) if out.strip() else {}
    check(rc == 0 and s.get("not_submitted", 0) >= 2 and
          s.get("syncobj_held") == 1,
          "exit 0, the signaller and its waiter not submitted", (s, err))


def test_generator():
    print("== the generator's --prime, --syncobjs, --ranges")
    base = ["--threads", "3", "--jobs", "60", "--bos", "24", "--seed", "9"]
    plain = os.path.join(TMP, "plain.txt")
    feat = os.path.join(TMP, "feat.txt")
    rc, out, err = run(base + ["--save-workload", plain, "--quiet"])
    check(rc == 0, "plain generated run", err)
    rc, out, err = run(base + ["--prime", "50", "--syncobjs", "4",
                               "--ranges", "--save-workload", feat,
                               "--json"])
    s = json.loads(out) if out.strip() else {}
    check(rc == 0 and s.get("prime_buffers", 0) > 0 and
          s.get("prime_imports", 0) > 0 and s.get("ranged_buffers", 0) > 0
          and s.get("syncobjs") == 4 and s.get("syncobj_words", 0) > 0,
          "generated with the features: exit 0, counts > 0", (s, err))
    strip = lambda lines: [
        " ".join(w for w in l.split() if w not in ("prime", "visible") and
                 not w.startswith(("wait=", "signal=", "vram@")))
        for l in lines if not l.startswith("syncobj ")]
    check(strip(body(feat)) == [l.replace(" vram", "") for l in
                                body(plain)] or
          strip(body(feat)) == body(plain),
          "the same seed makes the same buffers and jobs otherwise")
    again = os.path.join(TMP, "feat2.txt")
    rc, out, err = run(["--workload", feat, "--engines", "2",
                        "--save-workload", again, "--quiet"])
    check(rc == 0 and body(again) == body(feat),
          "generated -> save -> load -> save: the same lines", err)


def main():
    test_errors()
    test_all_features()
    test_order()
    test_stop()
    test_range_check()
    test_generator()
    print("test_run_features: %d passed, %d failed" % (passed, len(failures)))
    for f in failures:
        print("FAILED: " + f)
    sys.exit(1 if failures else 0)


main()
