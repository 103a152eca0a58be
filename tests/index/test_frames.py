import numpy as np
import pytest

from votr_mcp.index.frames import FACT, fact_frame, with_frame


@pytest.mark.parametrize("text,frame", [
    ("note down that the deploy key rotates every 90 days", f"note down that {FACT}"),
    ("remember: Kenji works from the Osaka office", f"remember: {FACT}"),
    ("for future reference, Lucia's birthday is March 3rd", f"for future reference, {FACT}"),
    ("could you remember that our Q3 target is 1.2M ARR?", f"could you remember that {FACT}"),
    ("don't let me forget that the lease ends on June 30", f"don't let me forget that {FACT}"),
    ("  Keep in mind that Dana prefers morning meetings ", f"Keep in mind that {FACT}"),
])
def test_a_request_to_keep_a_fact_is_read_as_its_frame(text, frame):
    assert fact_frame(text) == frame


@pytest.mark.parametrize("text", [
    "forget that Tom likes cycling",  # deletes a fact: its own words say which
    "remember the milk",  # no fact after the frame
    "show me what you remember",
    "record a video of the page",
    "remember that",  # nothing kept
    "remember: Kenji",  # one word is a name to look up, not a fact
    "I read an article last week that explained the record: a 2-hour marathon",  # the frame leads the request or nothing
])
def test_other_requests_have_no_fact_frame(text):
    assert fact_frame(text) is None


def test_a_request_read_with_its_frame_keeps_its_length_and_leans_to_the_frame():
    whole, frame = np.array([3.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    both = with_frame(whole, frame)
    assert np.isclose(np.linalg.norm(both), 3.0) and both[1] > 0 and both.dtype == np.float32
    assert with_frame(whole, -whole) is whole  # (nothing left of the sum: the request's own)
