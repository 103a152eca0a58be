"""Where a refit's abstention retuning starts: the calibration it replaces, when that one fits the model."""

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from votr_mcp.evaluation.calibration import warm_start
from votr_mcp.retrieval import shipped_calibration


def test_a_refit_starts_from_the_calibration_it_replaces_only_when_it_is_for_the_same_model(tmp_path: Path) -> None:
    shipped = shipped_calibration()
    assert shipped is not None and shipped.abstain_weights
    path = tmp_path / "calibration.json"
    replace(shipped, model_id="model-a").save(path)
    previous = warm_start(path, "model-a")
    assert previous is not None and previous.abstain_weights == shipped.abstain_weights
    assert (previous.temperature, previous.mix) == (shipped.temperature, shipped.mix)
    assert warm_start(path, "model-b") is None  # fit on another model's cosines: no start
    assert warm_start(tmp_path / "absent.json", "model-a") is None


def test_an_unreadable_calibration_is_no_start_and_says_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "calibration.json"
    path.write_text("{not json", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert warm_start(path, "model-a") is None
    assert "not starting from" in caplog.text and "refit it" in caplog.text
