#!/usr/bin/env python3
"""Compares two fpgaprof traces of the same program taken through different libcupti releases
(CUDA 12.x's, as jax[cuda12] loads it, and CUDA 13.x's): the same kernels (name and count),
copies (kind, count, bytes) and attribution (each kernel name to the same HLO op and Python
line, the same attribution methods). Run by tests/gpu/run_on_gpu.sh's cupti12 step.

    compare_cupti_runs.py A.fpgaprof B.fpgaprof   (exit 0: equal; 1: a difference, listed)
"""

from __future__ import annotations

import collections
import sys

import fpgaprof


def facts(path: str) -> dict:
    p = fpgaprof.load(path)
    k = p.kernels.columns()
    t = p.transfers.columns()
    att = p.attribution
    names = [str(n) for n in k["name"]]
    ops = collections.defaultdict(set)
    for name, a in zip(names, att.kernels):
        ops[name].add((a.module_name, a.hlo_op, a.source_file, int(a.source_line)))
    copies = collections.Counter()
    copy_bytes = collections.Counter()
    for kind, b in zip(t["copy_kind"], t["bytes"]):
        copies[str(kind)] += 1
        copy_bytes[str(kind)] += int(b)
    return {
        "cupti": f"{p.meta['cupti_path']} (API {p.meta['cupti_version']})",
        "cupti_version": int(p.meta["cupti_version"] or 0),
        "kernels": collections.Counter(names),
        "copies": copies,
        "copy_bytes": copy_bytes,
        "ops": {n: sorted(v) for n, v in ops.items()},
        "methods": dict(att.count_by_method),
        "dropped": int(p.meta["dropped_records"]),
    }


def main(a_path: str, b_path: str) -> int:
    a, b = facts(a_path), facts(b_path)
    print(f"A: {a_path}: {a['cupti']}\nB: {b_path}: {b['cupti']}")
    bad = []
    # The point of the comparison: A through CUDA 13's libcupti (API 130000 and up), B through
    # CUDA 12's (API 26 for 12.8, 28 for 12.9). A process whose JAX loaded libcupti.so.13 first
    # keeps it for fpgaprof too, and would compare 13 with 13.
    if a["cupti_version"] < 130000:
        bad.append(f"A did not go through a CUDA 13 libcupti: {a['cupti']}")
    if not 0 < b["cupti_version"] < 130000:
        bad.append(f"B did not go through a CUDA 12 libcupti: {b['cupti']}")
    for key in ("kernels", "copies", "copy_bytes", "ops", "methods"):
        if a[key] != b[key]:
            keys = sorted(set(a[key]) | set(b[key]), key=str)
            diff = [f"{x}: {a[key].get(x)} vs {b[key].get(x)}" for x in keys if a[key].get(x) != b[key].get(x)]
            bad.append(f"{key} differ ({len(diff)}): " + "; ".join(diff[:8]))
    print(f"kernels {sum(a['kernels'].values())} / {sum(b['kernels'].values())}, "
          f"{len(a['kernels'])} names; copies {sum(a['copies'].values())} / {sum(b['copies'].values())}; "
          f"attribution {a['methods']} / {b['methods']}; dropped {a['dropped']} / {b['dropped']}")
    for line in bad:
        print("DIFFERENT:", line)
    print("RESULT:", "same kernels, copies and attribution" if not bad else "DIFFERENT")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
