"""A request to keep a fact, read apart from the fact it keeps.

"note down that the deploy key rotates every 90 days" asks to store something; its words name keys,
deploys and days, and an embedding of the whole request lands on the tools for those (a key press,
a deploy). Its frame, "note down that …", is what says which tool is asked for, and it reads the
same whatever the fact: compared with the frames of a tool's example requests ("also note that Tom
likes cycling" -> "also note that …"), it finds the tools people ask to remember things.
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray

__all__ = ["FACT", "fact_frame", "with_frame"]

FACT = "this"
"""What stands for the fact in a frame (the same word in requests and examples)."""

# Up to six words of lead-in, a verb phrase that keeps a fact, then "that", a colon or a comma, then
# the fact. "forget" only after a negation ("don't forget that…": "forget that Tom likes cycling"
# deletes a fact, and keeps its own words).
_KEEP = (r"remember|memori[sz]e(?: this)?|(?:make a )?note(?: down)?|jot(?: down)?|write down|keep in mind|"
         r"keep track of the fact|keep on file|store the fact|record|log the fact|"
         r"(?:do not|don't|dont|never) (?:let me )?forget|for future reference|save (?:this|that) for later|"
         r"add to (?:your|the) memory|bear in mind")
_FRAME = re.compile(rf"^(\W*(?:\w+\W+){{0,6}}?(?:{_KEEP}))(?:\s+that\b|\s*:|\s*,)\s*(\S.*)$", re.IGNORECASE | re.DOTALL)


def fact_frame(text: str) -> str | None:
    """The request with the fact it asks to keep replaced by :data:`FACT` ("remember that Alice works
    at Acme" -> "remember that this"), or None when it asks for no fact to be kept."""
    stripped = text.strip()
    found = _FRAME.match(stripped)
    if found is None or len(found.group(2).split()) < 2:
        return None
    return stripped[: found.start(2)] + FACT


def with_frame(whole: NDArray[np.float32], frame: NDArray[np.float32]) -> NDArray[np.float32]:
    """A request's vector read with its frame's: their sum, at the length of the request's own."""
    both = whole + frame
    norm = float(np.linalg.norm(both))
    return (both * (float(np.linalg.norm(whole)) / norm)).astype(np.float32) if norm > 0 else whole
