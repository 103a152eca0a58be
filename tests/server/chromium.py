"""A real headless Chromium (the Debian package), driven over the Chrome DevTools protocol.

The protocol runs over two pipes (``--remote-debugging-pipe``: Chromium reads commands on fd 3 and
writes answers and events on fd 4, each a JSON message ended by NUL), so no websocket library and
no browser download are needed: the ``chromium`` on PATH is enough. Every wait is bounded.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any

__all__ = ["Browser", "chromium_binary"]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless browser with one page; use as a context manager."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 1400) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="votr-chromium-")
        commands_r, self._commands = os.pipe()
        self._answers, answers_w = os.pipe()

        def to_fds_3_and_4() -> None:  # in the child, before exec
            a = fcntl.fcntl(commands_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(answers_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        # Running as root (CI containers) Chromium refuses to start without --no-sandbox.
        self._process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             f"--window-size={width},{height}", f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=to_fds_3_and_4, close_fds=False,  # our pipe ends are close-on-exec; fds 3 and 4 are not
        )
        os.close(commands_r)
        os.close(answers_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self._session: str | None = None

    def __enter__(self) -> Browser:
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:  # noqa: BLE001 - it is going away either way
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        os.close(self._commands)
        os.close(self._answers)
        self._profile.cleanup()

    # -- protocol ---------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True, timeout: float = 30) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self._session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline, f"{method}")
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method} failed: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self._events.append(answer)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    return self._events.pop(i)
            answer = self._read(deadline, f"event {method}")
            if "method" in answer:
                self._events.append(answer)

    def _read(self, deadline: float, what: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"Chromium did not answer {what} in time")
            ready, _, _ = select.select([self._answers], [], [], left)
            if ready:
                chunk = os.read(self._answers, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium exited (code {self._process.poll()}) while waiting for {what}")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    # -- page -------------------------------------------------------------------------------

    def navigate(self, url: str, timeout: float = 30) -> None:
        self._events = [e for e in self._events if e["method"] != "Page.loadEventFired"]
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", timeout)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def act_and_wait_for_load(self, expression: str, timeout: float = 30) -> None:
        """Run ``expression`` (a click, a form submit) and wait for the page it loads."""
        self._events = [e for e in self._events if e["method"] != "Page.loadEventFired"]
        self.evaluate(expression)
        self.wait_event("Page.loadEventFired", timeout)

    def script_errors(self) -> list[str]:
        """Uncaught exceptions the page's scripts threw so far (a broken button fails silently otherwise)."""
        return [e["params"]["exceptionDetails"].get("text", "") + " " + str(e["params"]["exceptionDetails"].get("exception", {})
                                                                           .get("description", ""))
                for e in self._events if e["method"] == "Runtime.exceptionThrown"]

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"])
