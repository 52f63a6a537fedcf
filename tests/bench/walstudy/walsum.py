#!/usr/bin/env python3
"""walsum.py OUT I [--vacuum] [--bins]: the WAL of wal-study.sh's phase I (its window from win-I;
--vacuum: the manual VACUUM after it instead) summarised per record type and per relation, in bytes
per attestation (bench.out's attestations= of that phase). pg_waldump -b: each record's tot length
goes to blkref #0's relation (records without blocks: "-"); each FPW's image length (8192 - hole -
compression saved) is split out as FPI, to its own block's relation. --bins: FPI and WAL per
sampler interval (samples-I), cumulative, with the results' identity counter as attestations."""
import collections
import re
import subprocess
import sys

out, idx = sys.argv[1], int(sys.argv[2])
vac = "--vacuum" in sys.argv
bins = "--bins" in sys.argv
WALDUMP = "/usr/lib/postgresql/15/bin/pg_waldump"

win = {}
for line in open(f"{out}/win-{idx}"):
    w = line.split()
    win[w[1]] = (w[2], int(w[3]), float(w[4]))
name = open(f"{out}/win-{idx}").read().split()[0]
start, end = (win["after"][0], win["vacuum"][0]) if vac else (win["before"][0], win["after"][0])

# attestations of phase idx: the idx-th "attestations=" of bench.out
atts = [int(m) for m in re.findall(r"^attestations=(\d+)", open(f"{out}/bench.out").read(), re.M)]
n_att = atts[idx - 1]

relname = {}
for f in range(1, idx + 1):
    try:
        for line in open(f"{out}/relmap-{f}"):
            fn, owner, rel, kind = line.rstrip("\n").split("|")
            relname[fn] = (f"toast({owner})" if kind == "t" else rel)
    except FileNotFoundError:
        pass


def lsn(s):
    a, b = s.split("/")
    return (int(a, 16) << 32) | int(b, 16)


rec_re = re.compile(r"^rmgr: (\S+)\s+len \(rec/tot\):\s+(\d+)/\s*(\d+), tx:\s+(\d+), lsn: (\S+), prev \S+, desc: (\S+)")
blk_re = re.compile(r"^\s+blkref #(\d+): rel \d+/\d+/(\d+) fork (\S+) blk (\d+)(.*)$")
hole_re = re.compile(r"hole: offset: \d+, length: (\d+)(?:, compression saved: (\d+))?")

by_type = collections.defaultdict(lambda: [0, 0, 0])  # n, bytes without FPI, FPI bytes
by_rel = collections.defaultdict(lambda: [0, 0, 0, 0])  # n, bytes, FPI bytes, FPI count
by_rel_type = collections.defaultdict(lambda: [0, 0])
fpi_pages = collections.defaultdict(set)
cur = None
total_tot = 0
recs = []  # (lsn, tot, fpi) for --bins


def flush():
    if cur is None:
        return
    rmgr, rec, tot, typ, blocks, at = cur
    fpi = tot - rec
    rel = blocks[0][0] if blocks else "-"
    key = f"{rmgr}/{typ}"
    by_type[key][0] += 1
    by_type[key][1] += rec
    by_type[key][2] += fpi
    by_rel[rel][0] += 1
    by_rel[rel][1] += rec
    by_rel_type[(rel, key)][0] += 1
    by_rel_type[(rel, key)][1] += rec
    for r, fork, blk, img in blocks:
        if img:
            by_rel[r][2] += img
            by_rel[r][3] += 1
            fpi_pages[r].add((fork, blk))
    if bins:
        recs.append((at, tot, fpi))


p = subprocess.Popen([WALDUMP, "-p", f"{out}/pg/pg_wal", "-s", start, "-e", end, "-b"],
                     stdout=subprocess.PIPE, text=True)
for line in p.stdout:
    m = rec_re.match(line)
    if m:
        flush()
        rmgr, rec, tot, typ, at = m.group(1), int(m.group(2)), int(m.group(3)), m.group(6), m.group(5)
        total_tot += tot
        cur = (rmgr, rec, tot, typ, [], lsn(at))
        continue
    m = blk_re.match(line)
    if m and cur:
        r = relname.get(m.group(2), m.group(2))
        img = 0
        if "FPW" in m.group(5):
            h = hole_re.search(m.group(5))
            img = 8192 - int(h.group(1)) - int(h.group(2) or 0)
        cur[4].append((r, m.group(3), int(m.group(4)), img))
flush()
p.wait()

span = lsn(end) - lsn(start)
tot_fpi = sum(v[2] for v in by_type.values())
print(f"# phase {idx} {name}{' VACUUM after it' if vac else ''}: {start}..{end}, {span} bytes, "
      f"{n_att} attestations: {span / n_att:.1f} B/att, FPI {tot_fpi / n_att:.1f} B/att "
      f"({100 * tot_fpi / span:.1f} %), records {sum(v[0] for v in by_type.values()) / n_att:.2f}/att, "
      f"alignment padding + page headers {(span - total_tot) / n_att:.1f} B/att")
print(f"{'record type':28} {'n/att':>7} {'B/att':>8} {'FPI B/att':>9}  avg len")
for k, v in sorted(by_type.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
    print(f"{k:28} {v[0] / n_att:7.3f} {v[1] / n_att:8.1f} {v[2] / n_att:9.1f}  {v[1] / v[0]:.0f}")
print(f"{'relation':28} {'n/att':>7} {'B/att':>8} {'FPI B/att':>9}  FPIs  FPI pages")
for k, v in sorted(by_rel.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
    print(f"{k:28} {v[0] / n_att:7.3f} {v[1] / n_att:8.1f} {v[2] / n_att:9.1f}  {v[3]:5d}  {len(fpi_pages[k])}")
print("relation x record type (B/att, n/att, avg record)")
for (r, k), v in sorted(by_rel_type.items(), key=lambda kv: (kv[0][0], -kv[1][1])):
    print(f"  {r:26} {k:24} {v[1] / n_att:8.1f} {v[0] / n_att:7.3f}  {v[1] / v[0]:.0f}")
if bins:
    samples = [l.split() for l in open(f"{out}/samples-{idx}")]
    samples = [(float(t), lsn(l), int(c)) for t, l, c in samples if lsn(l) >= lsn(start)]
    t0, l0, c0 = samples[0]
    print("bins: seconds, attestations since start, WAL B, FPI B, FPI B/att cumulative, WAL B/att in the bin")
    j, cw, cf, pc, pw = 0, 0, 0, c0, 0
    for t, l, c in samples[1:]:
        while j < len(recs) and recs[j][0] < l:
            cw += recs[j][1]
            cf += recs[j][2]
            j += 1
        if c > c0:
            print(f"  {t - t0:6.1f} {c - c0:8d} {cw:11d} {cf:11d} {cf / (c - c0):9.1f} "
                  f"{(cw - pw) / max(c - pc, 1):8.1f}")
        pc, pw = c, cw
