"""The line reader of stdio upstreams: whole lines out of arbitrary chunks, in linear time."""

from __future__ import annotations

import random
import time

from votr_mcp.upstream._stdio import LineSplitter


def test_lines_come_out_whole_however_the_stream_is_chunked() -> None:
    rng = random.Random(8)
    lines = [bytes(rng.choice(b"ab{}\"") for _ in range(rng.randint(0, 300))) for _ in range(200)]
    stream = b"".join(line + b"\n" for line in lines) + b"unfinished"
    split, got, at = LineSplitter(), [], 0
    while at < len(stream):
        step = rng.choice([1, 2, 7, 64, 4096])
        got += split.feed(stream[at : at + step])
        at += step
    assert got == lines


def test_a_50_mb_line_in_64_kib_chunks_is_read_in_linear_time() -> None:
    # Re-splitting ``buffer + chunk`` copies the growing line for every chunk: 12.9 s here.
    chunk = b"x" * 65536
    split = LineSplitter()
    started = time.perf_counter()
    for _ in range(50_000_000 // len(chunk)):
        assert split.feed(chunk) == []
    (line,) = split.feed(b"\n")
    assert len(line) == 50_000_000 // len(chunk) * len(chunk)
    assert time.perf_counter() - started < 2.0
