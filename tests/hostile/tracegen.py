"""Hostile trace files, made by code from a valid one (docs/trace-format.md): the sections of a
trace are read into a list, changed, and written again with correct CRCs, so that a change
reaches the decoder behind the checksum. Written independently of cpp/src/core/trace_file.cpp,
from the format document only."""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

MAGIC = b"FPGAPROF"
HEADER = struct.Struct("<8sII")  # magic, format_version, section_count
SECTION = struct.Struct("<4sIQQI")  # tag, codec, raw_bytes, stored_bytes, crc32
STORED, ZLIB = 0, 1


@dataclass
class Section:
    tag: bytes
    raw: bytes  # the payload after decompression
    codec: int = ZLIB
    # Set to write these exact header fields / payload instead of the ones `raw` gives.
    raw_bytes: int | None = None
    stored: bytes | None = None
    stored_bytes: int | None = None


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, pos


def zigzag(n: int) -> bytes:
    return varint((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def parse(data: bytes) -> list[Section]:
    """The sections of a valid trace file (END included), payloads inflated."""
    magic, _version, count = HEADER.unpack_from(data, 0)
    assert magic == MAGIC
    pos = HEADER.size
    out = []
    for _ in range(count):
        tag, codec, raw_bytes, stored_bytes, _crc = SECTION.unpack_from(data, pos)
        pos += SECTION.size
        payload = data[pos : pos + stored_bytes]
        pos += stored_bytes
        raw = zlib.decompress(payload) if codec == ZLIB else payload
        assert len(raw) == raw_bytes
        out.append(Section(tag, raw, codec))
    return out


def build(sections: list[Section], version: int = 2, count: int | None = None) -> bytes:
    """A trace file of `sections`, every CRC correct for what is written."""
    parts = [HEADER.pack(MAGIC, version, len(sections) if count is None else count)]
    for s in sections:
        if s.stored is not None:
            stored = s.stored
        elif s.codec == ZLIB and s.raw:
            stored = zlib.compress(s.raw, 6)
        else:
            stored = s.raw
        raw_bytes = len(s.raw) if s.raw_bytes is None else s.raw_bytes
        stored_bytes = len(stored) if s.stored_bytes is None else s.stored_bytes
        codec = s.codec if s.raw or s.stored is not None else STORED
        head = struct.pack("<4sIQQ", s.tag, codec, raw_bytes, stored_bytes)
        crc = zlib.crc32(stored, zlib.crc32(head))
        parts.append(head + struct.pack("<I", crc) + stored)
    return b"".join(parts)


def section(sections: list[Section], tag: bytes) -> Section:
    return next(s for s in sections if s.tag == tag)


def insert_before_end(sections: list[Section], *new: Section) -> list[Section]:
    return sections[:-1] + list(new) + sections[-1:]


# --- the string table ---------------------------------------------------------------------


def strings_of(s: Section) -> list[bytes]:
    n, pos = read_varint(s.raw, 0)
    out = []
    for _ in range(n):
        length, pos = read_varint(s.raw, pos)
        out.append(s.raw[pos : pos + length])
        pos += length
    return out


def strings_section(strings: list[bytes]) -> bytes:
    return varint(len(strings)) + b"".join(varint(len(x)) + x for x in strings)


# --- HLO modules ----------------------------------------------------------------------------


def modules_of(s: Section) -> list[tuple[bytes, int, bytes]]:
    n, pos = read_varint(s.raw, 0)
    out = []
    for _ in range(n):
        length, pos = read_varint(s.raw, pos)
        name = s.raw[pos : pos + length]
        pos += length
        z, pos = read_varint(s.raw, pos)
        program_id = (z >> 1) ^ -(z & 1)
        length, pos = read_varint(s.raw, pos)
        out.append((name, program_id, s.raw[pos : pos + length]))
        pos += length
    return out


def modules_section(modules: list[tuple[bytes, int, bytes]]) -> bytes:
    out = bytearray(varint(len(modules)))
    for name, program_id, text in modules:
        out += varint(len(name)) + name + zigzag(program_id) + varint(len(text)) + text
    return bytes(out)


# --- META -----------------------------------------------------------------------------------


def meta_of(s: Section) -> dict:
    return json.loads(s.raw)


def with_meta(sections: list[Section], change) -> list[Section]:
    """`sections` with META's JSON object passed through change(obj) (which edits it in place)."""
    out = [Section(s.tag, s.raw, s.codec) for s in sections]
    m = section(out, b"META")
    obj = meta_of(m)
    change(obj)
    m.raw = json.dumps(obj).encode()
    return out


def fix_crcs(data: bytes) -> bytes:
    """`data` with every whole section's CRC made right for what is there (a fuzzer's input)."""
    out = bytearray(data)
    pos = HEADER.size
    while pos + SECTION.size <= len(out):
        stored = struct.unpack_from("<Q", out, pos + 16)[0]
        if stored > len(out) - pos - SECTION.size:
            break
        body = out[pos + SECTION.size : pos + SECTION.size + stored]
        struct.pack_into("<I", out, pos + 24, zlib.crc32(body, zlib.crc32(out[pos : pos + 24])))
        pos += SECTION.size + stored
    return bytes(out)
