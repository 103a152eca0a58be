"""Start throwaway Redis and PostgreSQL servers on loopback for tests and eval/scaleout.py.

Both come from what setup installed (scripts/install-test-servers.sh): ``redis-server`` from
Debian's package (on PATH), PostgreSQL 16 with pgvector from the PyPI wheel ``pgserver`` (or
Debian's ``postgresql`` when the wheel is absent). Each runs in a temporary folder and is
stopped by the context manager. ``ServiceMissing`` says what to install when one cannot start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ServiceMissing", "free_port", "redis_server", "postgres_server"]


class ServiceMissing(RuntimeError):
    """A server the test needs is not installed here (the message says how to install it)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before listening on port {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {seconds:g} s")


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A fresh Redis on a free loopback port (no persistence); yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServiceMissing("redis-server is not installed; run `make test-servers` (apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="votr-redis-") as folder:
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                 "--dir", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_port(port, proc)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh PostgreSQL (with pgvector when the pgserver wheel provides it); yields its URL."""
    try:
        with warnings.catch_warnings():
            # pgserver reads platformdirs' runtime dir at import, which warns when XDG_RUNTIME_DIR is unset.
            warnings.simplefilter("ignore")
            import pgserver  # type: ignore[import-untyped]
    except ImportError:
        pgserver = None
    if pgserver is not None:
        folder = tempfile.mkdtemp(prefix="votr-pg-")
        server = pgserver.get_server(folder, cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            with contextlib.suppress(Exception):
                server.cleanup()
            shutil.rmtree(folder, ignore_errors=True)
        return
    initdb = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)), None)
    if initdb is None:
        raise ServiceMissing("no PostgreSQL here; run `make setup` (pip install pgserver) or apt-get install postgresql")
    with tempfile.TemporaryDirectory(prefix="votr-pg-") as folder:
        yield from _debian_postgres(initdb, Path(folder))


def _debian_postgres(initdb: Path, folder: Path) -> Iterator[str]:
    bin_dir = initdb.parent
    run_as: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        shutil.chown(folder, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    subprocess.run([*run_as, str(initdb), "-D", str(data), "-U", "postgres", "--auth=trust"], check=True,
                   stdout=subprocess.DEVNULL)
    port = free_port()
    proc = subprocess.Popen([*run_as, str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(folder),
                             "-c", "listen_addresses=127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, proc)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
