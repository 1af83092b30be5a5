#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`ttmsim bench` end to end (suite cli).

Usage: test_bench.py TTMSIM

Checks that `bench all --quick --json` prints one well-formed JSON document
in the envelope of docs/benchmarks.md (for the whole run and for every
benchmark in it), that checks_ok is true for each, and the records' shape
(bench hellstrom's with its counts per transaction, bo's bookkeeping and
floors, ww's named case); that bench ww --grid
--plot writes valid SVG (XML) with a curve per scheme and the grid's
records; and that bad options fail with status 2 and a message naming the
option. It checks no figure: on a shared machine any threshold on a
measurement is a flaky test.

Python 3 standard library only. Exits 1 if any check failed.
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ENVELOPE = ("tool", "version", "benchmark", "config", "results",
            "checks_ok", "wall_s")
BENCHMARKS = ["ww", "hellstrom", "gpu", "bo", "execbuf"]
ALGORITHMS = ["wound-wait", "wait-die", "sorted-pthread", "global-pthread",
              "trylock-pthread"]
SVG = "{http://www.w3.org/2000/svg}"

failures = []
TTMSIM = None


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


def run(args, timeout=240):
    """Run ttmsim with @args: (status, stdout, stderr); None on timeout."""
    cmd = [TTMSIM] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, "%s ends within %d s" % (" ".join(cmd), timeout))
        return None
    return p.returncode, p.stdout, p.stderr


def records(e, part):
    return [r for r in e.get("results", [])
            if isinstance(r, dict) and r.get("part") == part]


def check_hellstrom(e, threads):
    runs = records(e, "hellstrom")
    check(sorted((r.get("threads"), r.get("class")) for r in runs) ==
          sorted((t, c) for t in threads
                 for c in ("wound-wait", "wait-die")),
          "hellstrom: a record per thread count and class")
    check(all(isinstance(r.get("time_s"), (int, float)) and
              isinstance(r.get("rollbacks"), (int, float)) and
              "time_s" in r.get("stats", {}) and
              "rollbacks" in r.get("stats", {}) and
              len(r.get("reps", [])) == e["config"].get("reps")
              for r in runs),
          "hellstrom: time_s, rollbacks, their stats, one rep each")
    counts = ("rollbacks_per_tx", "collisions_per_tx", "lock_phase_share",
              "cpus_busy", "preempted_per_tx", "slept_per_tx")
    check(all(r.get("transactions") ==
              r.get("threads") * e["config"].get("tx_per_thread") and
              all(k in r and k in r.get("stats", {}) for k in counts) and
              all(k in rep for rep in r.get("reps", []) for k in counts)
              for r in runs),
          "hellstrom: the counts per transaction, in stats and each rep")
    counted = e["config"].get("collisions") is True
    check(all((isinstance(r.get("collisions_per_tx"), (int, float))
               if counted else r.get("collisions_per_tx", 0) is None)
              for r in runs),
          "hellstrom: collisions a number with --collisions, else null")
    ratios = records(e, "hellstrom_ratio")
    check([r.get("threads") for r in ratios] == threads,
          "hellstrom: a ratio record per thread count, in order")
    for r in ratios:
        pub = r.get("published")
        check(all(k in r for k in ("time_ratio_ww_to_wd",
                                   "rollbacks_ratio_ww_to_wd",
                                   "reproduced", "reading")) and
              isinstance(r.get("reading"), str) and r["reading"],
              "hellstrom %s threads: ratios, reproduced, a reading"
              % r.get("threads"))
        check(pub is None or (isinstance(pub, dict) and all(
            k in pub for k in ("ww_rollbacks", "ww_time_s", "wd_rollbacks",
                               "wd_time_s", "time_ratio_ww_to_wd"))),
              "hellstrom %s threads: published figures or null"
              % r.get("threads"))
        check((pub is None) == (r.get("reproduced") is None) or
              r.get("time_ratio_ww_to_wd") is None,
              "hellstrom %s threads: a verdict exactly when a reference"
              % r.get("threads"))


def check_all():
    res = run(["bench", "all", "--quick", "--json"])
    if res is None:
        return
    status, out, err = res
    sys.stderr.write(err)
    check(status == 0, "bench all: exit status 0 (got %d)" % status)
    try:
        doc = json.loads(out)
    except ValueError as e:
        check(False, "bench all: stdout is one JSON document: %s" % e)
        return
    check(True, "bench all: stdout is one JSON document")
    check_envelope(doc, "all")
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        return
    check([e.get("benchmark") for e in results
           if isinstance(e, dict)] == BENCHMARKS,
          "all: results are the envelopes of %s" % BENCHMARKS)
    by_name = {}
    for e in results:
        if isinstance(e, dict):
            by_name[e.get("benchmark")] = e
            check_envelope(e, e.get("benchmark"))
            check(all(isinstance(r, dict) and "part" in r
                      for r in e.get("results", [])),
                  "%s: every record names its part" % e.get("benchmark"))
    hs = by_name.get("hellstrom")
    if hs:
        cpus = hs["config"].get("online_cpus")
        check(hs["config"].get("threads") == [cpus, 4 * cpus],
              "hellstrom: default threads are the CPUs and 4x them")
        check(hs["config"].get("locks") == 800 and
              hs["config"].get("pool") == 100000,
              "hellstrom: default 800 locks of 100000")
        check_hellstrom(hs, [cpus, 4 * cpus])
    bo = by_name.get("bo")
    if bo:
        check(all("bookkeeping_bytes_per_buffer" in r and
                  "ratio_single_to_touch" in r
                  for r in records(bo, "per_buffer")),
              "bo: bookkeeping bytes and the ratio to the floor per count")
        parts = ("rmw_ns_per_buffer", "rmw_prefetch_ns_per_buffer",
                 "reserve_unreserve_ns_per_buffer",
                 "single_prefetch_ns_per_buffer",
                 "single_pinned_ns_per_buffer")
        check(all(all(k in r and k in r.get("stats", {}) and
                      all(k in rep for rep in r.get("reps", []))
                      for k in parts) and
                  "ratio_single_to_rmw" in r and
                  "ratio_single_prefetch_to_touch" in r and
                  r.get("prefetch_ahead", 0) > 0
                  for r in records(bo, "per_buffer")),
              "bo: the floors and parts of the per-buffer time, per count")
    ww = by_name.get("ww")
    if ww:
        case = records(ww, "case")
        check([r.get("algorithm") for r in case] == ALGORITHMS and
              all(r.get("case") == "T4-K8-N64-work-2us" and
                  r.get("threads") == 4 and r.get("per_tx") == 8 and
                  r.get("locks") == 64 and r.get("hold_us") == 2 and
                  r.get("hold_kind") == "work" for r in case),
              "ww: the named case, every scheme")
        check(all(r.get("hold_kind") == "wall" and
                  "median_ratio_to_sorted" in r
                  for r in records(ww, "contended")),
              "ww: contended records say their hold kind and medians")


def check_hellstrom_options():
    res = run(["bench", "hellstrom", "--threads", "1,2", "--tx", "3",
               "--locks", "8", "--pool", "64", "--reps", "1", "--gap-us",
               "1", "--collisions", "--json"])
    if res is None:
        return
    status, out, err = res
    check(status == 0, "hellstrom small: exit status 0 (got %d: %s)"
          % (status, err.strip()))
    try:
        e = json.loads(out)
    except ValueError as err:
        check(False, "hellstrom small: one JSON document: %s" % err)
        return
    check_envelope(e, "hellstrom")
    check(e["config"].get("threads") == [1, 2] and
          e["config"].get("tx_per_thread") == 3 and
          e["config"].get("locks") == 8 and e["config"].get("pool") == 64 and
          e["config"].get("gap_us") == 1 and
          e["config"].get("collisions") is True,
          "hellstrom small: config echoes the options")
    check_hellstrom(e, [1, 2])
    # A reading whatever the figures: a time can round to 0 (no ratio).
    res = run(["bench", "hellstrom", "--threads", "1", "--tx", "20",
               "--locks", "4", "--pool", "16", "--reps", "1"])
    if res:
        check(res[0] == 0 and "WW/WD" in res[1] and any(
            r in res[1] for r in ("pattern reproduced",
                                  "pattern NOT reproduced",
                                  "no published figure", "no reading")),
              "hellstrom text: the ratios and a reading")


def check_grid_plot(tmp):
    svg = os.path.join(tmp, "grid.svg")
    res = run(["bench", "ww", "--grid", "--grid-threads", "1,2",
               "--grid-per-tx", "2,32", "--grid-locks", "16",
               "--duration-ms", "5", "--reps", "1", "--iterations", "1000",
               "--plot", svg, "--json"])
    if res is None:
        return
    status, out, err = res
    check(status == 0, "ww --grid: exit status 0 (got %d: %s)"
          % (status, err.strip()))
    try:
        e = json.loads(out)
    except ValueError as err:
        check(False, "ww --grid: one JSON document: %s" % err)
        return
    grid = records(e, "grid")
    # per-tx 32 > 16 locks: skipped.
    check(sorted((r.get("threads"), r.get("algorithm")) for r in grid) ==
          sorted((t, a) for t in (1, 2) for a in ALGORITHMS) and
          all(r.get("per_tx") == 2 and r.get("locks") == 16 and
              r.get("hold_us") == 2 and "tx_per_s" in r for r in grid),
          "ww --grid: a record per point and scheme, K > N skipped, "
          "hold 2 us by default")
    check(not records(e, "contended") and not records(e, "case"),
          "ww --grid: no single-point records")
    check(e["config"].get("plot") == svg and
          e["config"].get("grid_threads") == [1, 2],
          "ww --grid: config echoes --plot and the axes")
    try:
        root = ET.parse(svg).getroot()
    except (OSError, ET.ParseError) as err:
        check(False, "ww --plot: the SVG is well-formed XML: %s" % err)
        return
    check(root.tag == SVG + "svg", "ww --plot: an <svg> in the SVG "
          "namespace")
    texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    check(len(list(root.iter(SVG + "path"))) == len(ALGORITHMS) and
          all(a in texts for a in ALGORITHMS),
          "ww --plot: one panel, a curve and a legend entry per scheme")
    res = run(["bench", "ww", "--grid", "--grid-threads", "1",
               "--grid-per-tx", "2", "--grid-locks", "16",
               "--duration-ms", "1", "--reps", "1", "--iterations", "10",
               "--plot", os.path.join(tmp, "no", "such", "dir.svg")])
    if res:
        check(res[0] == 1 and "--plot" in res[2],
              "ww --plot into a missing folder: status 1, names --plot "
              "(got %d: %s)" % (res[0], res[2].strip()))


BAD = [
    (["bench", "hellstrom", "--threads", "0"], "--threads"),
    (["bench", "hellstrom", "--threads", "1,x"], "--threads"),
    (["bench", "hellstrom", "--tx", "0"], "--tx"),
    (["bench", "hellstrom", "--locks", "10", "--pool", "5"], "--locks"),
    (["bench", "hellstrom", "--pool", "-1"], "--pool"),
    (["bench", "hellstrom", "--gap-us", "x"], "--gap-us"),
    (["bench", "hellstrom", "--gap-us", "1000001"], "--gap-us"),
    (["bench", "hellstrom", "--gap-us"], "--gap-us"),
    (["bench", "hellstrom", "--bogus"], "--bogus"),
    (["bench", "hellstrom", "extra"], "extra"),
    (["bench", "ww", "--plot", "x.svg"], "--plot"),
    (["bench", "ww", "--grid", "--plot", ""], "--plot"),
    (["bench", "ww", "--hold-kind", "cpu"], "--hold-kind"),
    (["bench", "ww", "--grid-threads", "2"], "--grid-threads"),
    (["bench", "ww", "--grid", "--grid-per-tx", "65"], "--grid-per-tx"),
    (["bench", "ww", "--grid", "--grid-locks", "1,2,3,4,5,6,7,8,9"],
     "--grid-locks"),
    (["bench", "all", "--threads", "2"], "--threads"),
]


def check_bad_options():
    for args, flag in BAD:
        res = run(args, timeout=30)
        if res is None:
            continue
        status, out, err = res
        check(status == 2 and flag in err and not out.strip(),
              "%s: status 2, message names %s (got %d: %s)"
              % (" ".join(args), flag, status, err.strip()))
    res = run(["bench", "hellstrom", "--help"], timeout=30)
    if res:
        check(res[0] == 0 and all(o in res[1] for o in (
            "--threads", "--tx", "--locks", "--pool", "--gap-us",
            "--collisions", "--json")),
              "hellstrom --help: every option")


def main():
    global TTMSIM
    if len(sys.argv) != 2:
        sys.exit("usage: test_bench.py TTMSIM")
    TTMSIM = sys.argv[1]
    check_bad_options()
    check_hellstrom_options()
    with tempfile.TemporaryDirectory() as tmp:
        check_grid_plot(tmp)
    check_all()
    print("test_bench: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
