"""Python-level fuzz target (atheris, libFuzzer for Python) for what libFuzzer's C++ targets
cannot see: an error that leaves fpgaprof untyped (a TypeError, UnicodeDecodeError,
RecursionError, ...) on the way from the core to the user. Any bytes given to fpgaprof.load,
report.collect and the renderers, or hlo.analyze, must give a result or an FpgaprofError.

    pip install atheris
    FPGAPROF_FAKE_CUPTI=... python tests/fuzz/python_api_fuzzer.py -runs=100000 \
        WORK_DIR tests/fuzz/corpus/python_api_fuzzer

The first input byte picks the target (its value modulo 5): 0 a trace file (its section CRCs
recomputed, so that mutations reach the decoders, as in trace_reader_fuzzer.cpp) loaded and,
when it loads, summarised and rendered; 1 and 2 HLO text as str and as bytes; 3 an XProf
profile (XSpace protobuf bytes as a .xplane.pb) loaded, summarised and rendered the same way;
4 an FPGA card file (JSON) resolved as `--target CARD.json` is (fpgaprof.fpga.resolve_target:
the JSON, then the binding's field casts and the card's validation). Seeds: the trace reader's
and the HLO parser's corpora (tests/fuzz/corpus/*), each prefixed with its target byte, and
small XSpaces and card files (prefix 3 and 4) in tests/fuzz/corpus/python_api_fuzzer.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
import zlib

import atheris

# only fpgaprof is instrumented: coverage of numpy, protobuf or html steers nothing here and
# costs most of the time per input
with atheris.instrument_imports(include=["fpgaprof"]):
    import fpgaprof
    from fpgaprof import report
    from fpgaprof.errors import FpgaprofError
    from fpgaprof.report import digest, summary_json

_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_FILE = os.path.join(_DIR, f"python_api_fuzzer-{os.getpid()}.fpgaprof")
_XSPACE = os.path.join(_DIR, f"python_api_fuzzer-{os.getpid()}.xplane.pb")
_CARD = os.path.join(_DIR, f"python_api_fuzzer-{os.getpid()}.json")


def with_fixed_crcs(data: bytes) -> bytes:
    """docs/trace-format.md: 16-byte header, then sections of a 28-byte header (CRC last) and
    the payload; every CRC made right for what is there."""
    out = bytearray(data)
    pos = 16
    while pos + 28 <= len(out):
        (stored,) = struct.unpack_from("<Q", out, pos + 16)
        if stored > len(out) - pos - 28:
            break
        crc = zlib.crc32(out[pos + 28 : pos + 28 + stored], zlib.crc32(out[pos : pos + 24]))
        struct.pack_into("<I", out, pos + 24, crc)
        pos += 28 + stored
    return bytes(out)


def one_trace(data: bytes, path: str = _FILE) -> None:
    with open(path, "wb") as f:
        f.write(with_fixed_crcs(data) if path == _FILE else data)
    try:
        prof = fpgaprof.load(path)
    except FpgaprofError:
        return
    s = report.collect(prof)
    report.render_html(s, "fuzz")
    summary_json.dumps(s)
    digest.digest(s)


def one_hlo(data: bytes, as_str: bool) -> None:
    # as str, bytes that are not UTF-8 become lone surrogates (which a str may hold)
    text: str | bytes = data.decode("utf-8", "surrogateescape") if as_str else data
    try:
        fpgaprof.hlo.analyze(text)
    except FpgaprofError:
        pass


def one_card(data: bytes) -> None:
    with open(_CARD, "wb") as f:
        f.write(data)
    try:
        fpgaprof.fpga.resolve_target(_CARD)
    except FpgaprofError:
        pass


def one_xspace_load(data: bytes) -> None:
    """The XSpace importer alone: protobuf bytes as a .xplane.pb, through fpgaprof.load."""
    with open(_XSPACE, "wb") as f:
        f.write(data)
    try:
        fpgaprof.load(_XSPACE)
    except FpgaprofError:
        pass


# FPGAPROF_FUZZ_ONLY=xspace|xspace-load|card: every input goes to that one target (its first
# byte still skipped, so the shared corpus serves), for long runs of one target; xspace-load
# stops at fpgaprof.load (the importer), xspace goes on to summarise and render.
_ONLY = {"xspace": 3, "card": 4, "xspace-load": 5}.get(os.environ.get("FPGAPROF_FUZZ_ONLY", ""))


def test_one_input(data: bytes) -> None:
    if not data:
        return
    kind, body = (data[0] % 5 if _ONLY is None else _ONLY), data[1:]
    if kind == 0:
        one_trace(body)
    elif kind == 3:
        one_trace(body, _XSPACE)
    elif kind == 4:
        one_card(body)
    elif kind == 5:
        one_xspace_load(body)
    else:
        one_hlo(body, as_str=kind == 1)


def main() -> None:
    try:
        atheris.Setup(sys.argv, test_one_input)
        atheris.Fuzz()
    finally:
        for p in (_FILE, _XSPACE, _CARD):
            if os.path.exists(p):
                os.unlink(p)


if __name__ == "__main__":
    main()
