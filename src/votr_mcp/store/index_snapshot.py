"""The built search index saved beside the store, so a restart loads it instead of rebuilding it.

At 100k tools a restart spent its time rebuilding what the previous run had built: BM25 and
TF-IDF over every tool, each tool's name features, the dense and SPLADE matrices read back from
the store's vectors, and the abstention scores of the null requests (eval/SCALE.md has the
profile). None of it changes unless the catalog, the models or the retrieval code change, so the
whole retriever (less its models and cache) is written to ``<store>.index`` after it is built,
and read back (a fraction of a second) when its fingerprint still matches:

- the catalog's state in the store (:func:`catalog_token`: counts and the latest change ids, one
  small query, so a restart need not read 100k tool rows to know nothing changed);
- the embedding model id, and a digest of the retrieval code and its shipped fits (every file
  of ``votr_mcp.index`` and ``votr_mcp.retrieval``): new code never reads an old snapshot.

A loaded retriever is the one that was saved (same arrays, same scores; a test compares results).
The file is a magic line, a header line (fingerprint, the pickle's length, where each array's
bytes lie), a pickle (protocol 5) and then the arrays' bytes, out of band on 64-byte boundaries:
a load maps the file and numpy reads them in place (read-only), with no copy. The catalog's tools
are records made into tools when first read (:class:`PackedTools`). The pickle is read with an
unpickler that constructs only classes of votr_mcp, numpy, scipy and the standard containers, and
the file is written with owner-only permissions; a snapshot that does not load is ignored and
rebuilt, never trusted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import io
import json
import logging
import marshal
import mmap
import os
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

import votr_mcp
from votr_mcp.catalog.models import Catalog, Tool

__all__ = ["PackedTools", "catalog_token", "code_digest", "load_index", "save_index", "lexical_part", "attach_models", "paused_gc", "settle"]

log = logging.getLogger(__name__)

_MAGIC = b"votr-index-2\n"
_ALIGN = 64  # each array's bytes start on a cache line (numpy reads them in place)
_ALLOWED_ROOTS = ("votr_mcp", "numpy", "scipy", "collections", "builtins", "copyreg", "re", "types", "mappingproxy")
# Functions a pickle of arrays needs; anything else callable must be a class.
_FUNCTIONS = {("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
              ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
              ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
              ("copyreg", "_reconstructor"), ("re", "_compile"), ("votr_mcp.store.index_snapshot", "_restore"),
              ("votr_mcp.store.index_snapshot", "_restore_catalog")}
_digest: str | None = None


def code_digest() -> str:
    """SHA-256 over every file of ``votr_mcp.index`` and ``votr_mcp.retrieval`` (code and shipped fits)."""
    global _digest
    if _digest is None:
        root = Path(votr_mcp.__file__).parent
        sha = hashlib.sha256(votr_mcp.__version__.encode())
        for folder in ("index", "retrieval", "catalog"):
            for file in sorted((root / folder).rglob("*")):
                if file.is_file() and file.suffix in (".py", ".json", ".npz", ".txt"):
                    sha.update(file.relative_to(root).as_posix().encode())
                    sha.update(file.read_bytes())
        _digest = sha.hexdigest()
    return _digest


def catalog_token(store: Any) -> str:
    """What identifies the store's catalog now (tool and server rows, their last changes), in one query."""
    row = store.conn.execute(
        "SELECT (SELECT count(*) FROM tools), (SELECT max(id) FROM tool_decisions), (SELECT max(updated_at) FROM tools), "
        "(SELECT count(*) FROM servers), (SELECT max(updated_at) FROM servers)").fetchall()[0]
    return json.dumps([str(v) for v in row])


def _fingerprint(token: str, model_id: str | None) -> str:
    return hashlib.sha256(json.dumps([token, model_id or "", code_digest()]).encode()).hexdigest()


def snapshot_path(store_path: str | Path) -> Path:
    return Path(f"{store_path}.index")


def save_index(retriever: Any, path: Path, token: str) -> None:
    """Write ``retriever`` (without its models and cache) for the catalog state ``token``; atomic."""
    state = {k: v for k, v in vars(retriever).items() if k not in ("embedder", "cache")}
    model_id = getattr(retriever.embedder, "model_id", None) if retriever.dense_ready else None
    stream = io.BytesIO()
    buffers: list[pickle.PickleBuffer] = []
    _Pickler(stream, protocol=5, buffer_callback=buffers.append).dump(state)
    raws = [b.raw() for b in buffers]
    places, at = [], 0  # each array's offset after the pickle
    for raw in raws:
        at = -(-at // _ALIGN) * _ALIGN
        places.append([at, raw.nbytes])
        at += raw.nbytes
    header = json.dumps({"fingerprint": _fingerprint(token, model_id), "model_id": model_id,
                         "pickle": stream.tell(), "buffers": places}).encode()
    # Padded so that the pickle ends, and the arrays start, on a 64-byte boundary of the file.
    header = header + b" " * (-(len(_MAGIC) + len(header) + 1 + stream.tell()) % _ALIGN) + b"\n"
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(_MAGIC)
        out.write(header)
        out.write(stream.getbuffer())
        base = out.tell()
        for (offset, _), raw in zip(places, raws):
            out.write(b"\0" * (base + offset - out.tell()))
            out.write(raw)
    os.replace(temporary, path)


def load_index(path: Path, token: str, model_id: str | None) -> Any | None:
    """The retriever saved at ``path`` for this catalog state and model (no models attached), or None."""
    from votr_mcp.retrieval.pipeline import Retriever

    try:
        with open(path, "rb") as file:
            if file.readline() != _MAGIC:
                return None
            header = json.loads(file.readline())
            if header.get("fingerprint") != _fingerprint(token, model_id):
                return None
            start = file.tell()
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)  # stays open as the arrays' memory
        whole = memoryview(mapped)
        base = start + int(header["pickle"])
        buffers = [whole[base + offset:base + offset + size] for offset, size in header["buffers"]]
        if any(len(b) != size for b, (_, size) in zip(buffers, header["buffers"])):
            raise ValueError("the file is shorter than its header says")
        with paused_gc():
            state = _Unpickler(io.BytesIO(whole[start:base]), buffers=buffers).load()
            # Frozen before the collector runs again: its first passes after a paused load walked
            # every object just made (at 100k tools 2-3 s, landing in the first search once the
            # models loaded beside the load rather than after it). They live as long as the server.
            settle()
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file is rebuilt, never trusted
        log.warning("ignoring the index snapshot %s (%s); it will be rebuilt", path, exc)
        return None
    retriever = object.__new__(Retriever)
    retriever.__dict__.update(state)
    retriever.__dict__.update(embedder=None, cache=None)
    return retriever


def lexical_part(retriever: Any, cache: Any) -> Any:
    """The loaded retriever without its dense part: what answers while the models load."""
    lexical = object.__new__(type(retriever))
    lexical.__dict__.update(vars(retriever))
    lexical.__dict__.update(_dense=None, _null=None, _bank=None, embedder=None, cache=cache)
    return lexical


def attach_models(retriever: Any, embedder: Any, cache: Any) -> Any:
    """The loaded retriever with the models that built it (the null-request scores are kept)."""
    full = object.__new__(type(retriever))
    full.__dict__.update(vars(retriever))
    full.__dict__.update(embedder=embedder, cache=cache)
    return full


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _restore(cls: type, values: tuple[Any, ...]) -> Any:
    """A slotted dataclass from its field values (what pickle's default does, without a fields() call each)."""
    obj: Any = object.__new__(cls)
    for name, value in zip(_fields_of(cls), values):
        object.__setattr__(obj, name, value)
    return obj


class _Pickler(pickle.Pickler):
    """Pickles slotted dataclasses (100k tools and their features) as field tuples: pickle's own
    ``__setstate__`` for them calls ``dataclasses.fields`` per object, a third of the load time."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if cls is Catalog:
            return _restore_catalog, (*_packed(obj._tools), obj._by_key, obj._servers, obj.duplicates)
        if dataclasses.is_dataclass(cls) and hasattr(cls, "__slots__"):
            return _restore, (cls, tuple(getattr(obj, name) for name in _fields_of(cls)))
        return NotImplemented


class PackedTools(Sequence[Tool]):
    """A loaded catalog's tools, each made from its bytes in the snapshot when first read.

    Making 100k tools (their schemas: millions of objects) was most of a restart (1.3 s of 1.9 s
    at 100k tools, eval/SCALE.md); a search reads the tools of its head only. Each tool is its
    field values as one ``marshal`` record (plain str, dict, list, tuple, numbers: what a schema
    holds), or a pickle record when a value is anything else; the records lie end to end in
    ``blob`` (the snapshot's mapped file), tool ``i`` ending at ``ends[i]``. A tool read twice is
    the same object; two threads reading one first may each make it, and one of them is kept."""

    __slots__ = ("_blob", "_ends", "_made")

    def __init__(self, blob: memoryview, ends: NDArray[np.int64]) -> None:
        self._blob = blob
        self._ends = ends
        self._made: list[Tool | None] = [None] * len(ends)

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, i: int) -> Tool: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Tool, ...]: ...
    def __getitem__(self, i: int | slice) -> Tool | tuple[Tool, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(len(self))[i])
        tool = self._made[i]
        if tool is None:
            i = range(len(self))[i]  # negative positions, and IndexError past the end
            tool = self._made[i] = _tool(self._blob[int(self._ends[i - 1]) if i else 0:int(self._ends[i])])
        return tool

    def __iter__(self) -> Iterator[Tool]:
        if None in self._made:
            self._make_all()
        return iter(self._made)  # type: ignore[arg-type]  # every entry is a tool now

    def _make_all(self) -> None:
        """Every tool at once, as a full read needs (a rebuild, a changed tool's swap): with the
        collector paused, and then out of its sight, as the load did (0.9 s at 100k tools rather
        than 3 s with the collector walking the new objects as they came)."""
        blob, made = self._blob, self._made
        with paused_gc():
            start = 0
            for i, end in enumerate(self._ends.tolist()):
                if made[i] is None:
                    made[i] = _tool(blob[start:end])
                start = end
            settle()


_MARSHAL, _PICKLE = 0, 1


def _tool(record: memoryview) -> Tool:
    values = marshal.loads(record[1:]) if record[0] == _MARSHAL else _Unpickler(io.BytesIO(record[1:])).load()
    return _restore(Tool, values)


def _packed(tools: Sequence[Tool]) -> tuple[Any, Any]:
    """``tools`` as (records, ends) for :class:`PackedTools`; out of band, so the load maps them."""
    if isinstance(tools, PackedTools):
        return pickle.PickleBuffer(tools._blob), pickle.PickleBuffer(tools._ends.data)
    records = []
    for tool in tools:
        values = tuple(getattr(tool, name) for name in _fields_of(Tool))
        if _plain(values):
            records.append(bytes([_MARSHAL]) + marshal.dumps(values))
        else:  # marshal would write a numpy number as a float, an enum member as an int: pickled
            stream = io.BytesIO()
            _Pickler(stream, protocol=5).dump(values)
            records.append(bytes([_PICKLE]) + stream.getvalue())
    ends = np.cumsum(np.fromiter(map(len, records), dtype=np.int64, count=len(records)), dtype=np.int64)
    return pickle.PickleBuffer(b"".join(records)), ends


_PLAIN = frozenset({str, int, float, bool, type(None), bytes})


def _plain(value: Any) -> bool:
    """True when ``value`` holds only the exact types JSON gives (what marshal reads back as written)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if kind is dict:
        return all(type(k) in _PLAIN and _plain(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v) for v in value)
    return False


def _restore_catalog(blob: Any, ends: Any, by_key: dict[Any, int], servers: dict[str, Any], duplicates: tuple[Any, ...]) -> Catalog:
    """A catalog whose tools are made when read (:class:`PackedTools`)."""
    if not isinstance(ends, np.ndarray):  # the offsets' own buffer: read as the int64 array it was
        ends = np.frombuffer(ends, dtype=np.int64)
    catalog = object.__new__(Catalog)
    catalog._tools = PackedTools(memoryview(blob).cast("B"), ends)  # type: ignore[assignment]
    catalog._by_key, catalog._servers, catalog.duplicates = by_key, servers, duplicates
    return catalog


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector paused while millions of long-lived objects are made (every tool's
    schema, when a catalog of 100k tools is read or loaded): its passes over them took most of
    the time (index load 8 s of 10; reading the catalog from the store 4.5 s of it, 1.7 s paused)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def settle() -> None:
    """Move every object alive now (the index: millions of objects at 100k tools) out of the cyclic
    collector's sight. A full collection walked them all (over a second at 100k tools), and one could
    land inside any search; they live as long as the server, so there is nothing to collect there.
    (No collection first: it would cost that second once; what little garbage is frozen with them
    is a few objects.)"""
    gc.freeze()


class _Unpickler(pickle.Unpickler):
    """Builds only our classes, numpy's, scipy's and plain containers: a pickle cannot run code here."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".", 1)[0] in _ALLOWED_ROOTS:
            found = super().find_class(module, name)
            if (module, name) in _FUNCTIONS or (isinstance(found, type) and found.__module__.split(".", 1)[0] != "os"):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in an index snapshot")
