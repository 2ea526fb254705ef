"""Cost of reporting a job of many ranks: `fpgaprof report JOB` over R rank traces.

    python bench/job_merge.py [--ranks 64] [--scale 0.1] [--keep DIR]

One synthetic rank trace is built as bench/report_scale.py's "iterations" case (10^5 region
instances of 10 kernels each at --scale 1: 10^6 kernels with their launch calls, an XlaModule
range, a DtoH copy and an allocation pair per instance; --scale 0.1: 10^5 kernels) and saved;
the R rank traces are copies of it whose META says process_index k of R on host node<k // 8>
(8 ranks per host), written by replacing the META section of the file (so building them costs
no analysis). Then, each in a fresh interpreter (CPU = user + sys; peak RSS = VmHWM, MiB):

  one trace   load one rank trace and reduce it to its rows (api.job.rank_summary): the
              memory a single trace takes through the job path
  job         report.write_job over the folder: every rank trace loaded, analysed and reduced
              in turn, then the job's tables, job.json, job.html, job.txt

The job's peak RSS should stay near one trace's (the traces are read one at a time), whatever
R. fpgaprof must be importable (PYTHONPATH=<build>/pkg). Figures: docs/performance.md, "Jobs of
many ranks".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RANKS_PER_HOST = 8

CHILD = r"""
import json, os, resource, sys, time
def mark():
    u = os.times()
    return time.perf_counter(), u.user + u.system
def peak_mb():
    # VmHWM: this process image's own peak (ru_maxrss keeps the forking parent's after exec)
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
def since(m):
    w, c = mark()
    return {"wall_s": round(w - m[0], 2), "cpu_s": round(c - m[1], 2), "peak_rss_mib": peak_mb()}
import fpgaprof
from fpgaprof import report
from fpgaprof.api import job
what, path = sys.argv[1], sys.argv[2]
base = peak_mb()
m = mark()
if what == "one":
    rows = job.rank_summary(fpgaprof.load(path), os.path.basename(os.path.dirname(path)))
    res = since(m)
    res["rows_bytes"] = len(json.dumps(rows))
else:
    paths = report.write_job(job.Job(path), path)
    res = since(m)
    res["job_json_bytes"] = os.path.getsize(paths["json"])
    res["missing"] = len(json.load(open(paths["json"]))["missing"])
res["import_rss_mib"] = base
print(json.dumps(res))
"""


def rewrite_meta(data: bytes, update: dict) -> bytes:
    """The trace file `data` with its META JSON's "meta" object updated (docs/trace-format.md:
    sections of tag, codec, raw and stored length, CRC-32 over those 24 bytes and the payload)."""
    magic, version, count = data[:8], *struct.unpack_from("<II", data, 8)
    out = [magic, struct.pack("<II", version, count)]
    pos = 16
    for _ in range(count):
        tag, codec, raw, stored, _crc = struct.unpack_from("<4sIQQI", data, pos)
        payload = data[pos + 28 : pos + 28 + stored]
        pos += 28 + stored
        if tag == b"META":
            text = zlib.decompress(payload) if codec == 1 else payload
            j = json.loads(text)
            j["meta"].update(update)
            text = json.dumps(j).encode()
            payload = zlib.compress(text, 6)
            codec, raw, stored = 1, len(text), len(payload)
        head = struct.pack("<4sIQQ", tag, codec, raw, stored)
        out += [head, struct.pack("<I", zlib.crc32(head + payload)), payload]
    return b"".join(out)


def child(what: str, path: str) -> dict:
    # The synthetic rank trace repeats one iteration exactly (every column a constant or a
    # constant step), so it compresses far past a recorded trace (10^6 kernels in 67 kB, where
    # recorded traces inflate 7-9x) and past the reader's bound against zlib bombs: the
    # children are allowed the memory such a trace needs (docs/trace-format.md, "Limits").
    env = dict(os.environ, FPGAPROF_MAX_TRACE_MEMORY=str(8 << 30))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, what, path],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--scale", type=float, default=0.1, help="1: 10^6 kernels per rank")
    ap.add_argument("--keep", metavar="DIR", help="build the job folder here and keep it")
    args = ap.parse_args()
    from report_scale import build_store

    folder = args.keep or tempfile.mkdtemp(prefix="fpgaprof-job-bench-")
    os.makedirs(folder, exist_ok=True)
    try:
        t = time.perf_counter()
        store = build_store("iterations", args.scale)
        kernels = len(store.kernels)
        base = os.path.join(folder, "base.fpgaprof.tmp")
        store.save(base)
        del store
        with open(base, "rb") as f:
            data = f.read()
        os.unlink(base)
        for k in range(args.ranks):
            host = f"node{k // RANKS_PER_HOST}"
            d = os.path.join(folder, f"{host}-rank{k}")
            os.makedirs(d, exist_ok=True)
            meta = {"process_index": k, "process_count": args.ranks, "host_name": host}
            with open(os.path.join(d, "trace.fpgaprof"), "wb") as f:
                f.write(rewrite_meta(data, {**meta, "process_source": "SLURM"}))
        build_s = time.perf_counter() - t
        one = child("one", os.path.join(folder, "node0-rank0", "trace.fpgaprof"))
        job = child("job", folder)
        print(
            json.dumps(
                {
                    "ranks": args.ranks,
                    "kernels_per_rank": kernels,
                    "trace_bytes": len(data),
                    "build_s": round(build_s, 1),
                    "one_trace": one,
                    "job": job,
                    "job_cpu_s_per_rank": round(job["cpu_s"] / args.ranks, 3),
                },
                indent=1,
            )
        )
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
