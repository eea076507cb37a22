#!/usr/bin/env python3
"""Prints the README's table from one file of alternating rounds:
each row's chans / native within a round, median over the rounds [range],
and chans B/op at GOMAXPROCS 1 and 2 (median); batches as the per-value
time of SendMany + RecvMany over Send + Recv in the same round.

usage: table.py FILE
"""
import collections
import re
import statistics
import sys

ns = collections.defaultdict(list)
bop = collections.defaultdict(list)
cpu_pct = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if not f or not f[0].startswith("Benchmark") or "ns/op" not in f:
        continue
    ns[f[0]].append(float(f[f.index("ns/op") - 1]))
    if "B/op" in f:
        bop[f[0]].append(float(f[f.index("B/op") - 1]))
    if "cpu-%" in f:
        cpu_pct[f[0]].append(float(f[f.index("cpu-%") - 1]))

ROWS = [
    ("failing TryRecv, cap 64", "Bar/tryrecv-empty/impl={}/cap=64"),
    ("failing TrySend, cap 64", "Bar/trysend-full/impl={}/cap=64"),
    ("send+receive pair, cap 64", "Bar/pair/impl={}/cap=64"),
]
for cap, capname in [(64, "cap 64"), (1024, "cap 1024"), ("unbounded", "unbounded"), (1, "cap 1"), (0, "rendezvous")]:
    for work, g in [(100, "P"), (100, "1000"), (0, "P"), (0, "1000")]:
        label = f"P/P {capname}, " + ("work 100" if work else "no work") + (", 1000 goroutines" if g == "1000" else "")
        ROWS.append((label, f"Bar/mpmc/impl={{}}/cap={cap}/work={work}/g={g}"))
ROWS += [
    ("ping-pong", "Bar/pingpong/impl={}/cap=0"),
    ("select over work + idle quit channel, cap 64", "Bar/select-quit/impl={}/cap=64/work=0/g=P"),
]


def name(pat, impl, cpu):
    return "Benchmark" + pat.format(impl) + ("-2" if cpu == 2 else "")


def ratio(a, b):
    rs = sorted(x / y for x, y in zip(a, b))
    return statistics.median(rs), rs[0], rs[-1]


def bytes_(pat, cpu, impl="chans"):
    v = bop.get(name(pat, impl, cpu))
    return "?" if not v else "%g" % statistics.median(v)


print("| row | GOMAXPROCS 1 | GOMAXPROCS 2 | B/op at 1, 2 |")
print("| --- | --- | --- | --- |")
for label, pat in ROWS:
    cells = []
    for cpu in (1, 2):
        c, n = ns.get(name(pat, "chans", cpu)), ns.get(name(pat, "native", cpu))
        if not c or not n:
            cells.append("?")
            continue
        m, lo, hi = ratio(c, n)
        cells.append(f"{m:.2f}x [{lo:.2f}-{hi:.2f}]")
    print(f"| {label} | {cells[0]} | {cells[1]} | {bytes_(pat, 1)}, {bytes_(pat, 2)} |")
cells = []
for cpu in (1, 2):
    bt = ns.get(name("Batch/spsc/impl={}/cap=1024/batch=64", "chans-batch", cpu))
    sg = ns.get(name("Batch/spsc/impl={}/cap=1024/batch=64", "chans", cpu))
    m, lo, hi = ratio(bt, sg)
    cells.append(f"{m:.2f} [{lo:.2f}-{hi:.2f}] ({statistics.median(bt):.1f} ns against {statistics.median(sg):.1f})")
bp = "Batch/spsc/impl={}/cap=1024/batch=64"
print(f"| batches of 64, cap 1024: `SendMany` + `RecvMany`, per value, against `Send` + `Recv` | {cells[0]} | {cells[1]} | {bytes_(bp, 1, 'chans-batch')}, {bytes_(bp, 2, 'chans-batch')} |")
idle = []
for cpu in (1, 2):
    c = statistics.median(cpu_pct[name("Bar/idle/impl={}/g=1000", "chans", cpu)])
    n = statistics.median(cpu_pct[name("Bar/idle/impl={}/g=1000", "native", cpu)])
    idle.append(f"{c:.2f}% of a core (native {n:.2f}%)")
print(f"| 1000 goroutines blocked, CPU use | {idle[0]} | {idle[1]} | 0, 0 |")
