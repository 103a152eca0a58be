from dataclasses import replace

import numpy as np
import pytest

from votr_mcp.cli import main
from votr_mcp.evaluation.query_adapter_fit import AdapterRows, _top, fit_adapter, leave_one_set_out


def _distorted_set(name: str, seed: int, distortion: np.ndarray) -> AdapterRows:
    """Queries are their gold tool's vector pushed through one shared linear distortion, plus noise:
    what an adapter can learn and carry to another catalog with the same distortion."""
    rng = np.random.default_rng(seed)
    tools = rng.normal(size=(60, 16)).astype(np.float32)
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    gold = rng.integers(0, 60, size=120)
    q = tools[gold] @ distortion + 0.05 * rng.normal(size=(120, 16))
    q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    return AdapterRows(name, [f"{name} {i}" for i in range(120)], q, [[int(g)] for g in gold], tools, "model")


def test_the_fit_learns_a_shared_distortion_and_carries_it_to_a_set_it_never_saw():
    rng = np.random.default_rng(7)
    distortion = 0.3 * np.eye(16) + rng.normal(size=(16, 16)) / 4
    sets = [_distorted_set(f"set{i}", i, distortion) for i in range(3)]
    before = _top(None, sets[2])[0]
    adapter = fit_adapter(sets[:2], rank=16, l2=1e-4, steps=300)
    assert _top(adapter, sets[2])[0] > before + 0.1
    held = leave_one_set_out(sets, rank=16, l2=1e-4, steps=300)
    assert set(held) == {"set0", "set1", "set2"} and all(after[0] > b[0] for b, after in held.values())


def test_the_adapter_records_the_model_that_made_the_vectors_and_refuses_a_mix():
    sets = [replace(_distorted_set(f"s{i}", i, np.eye(16)), model_id="minilm+use") for i in range(2)]
    assert fit_adapter(sets, rank=4, steps=20).model_id == "minilm+use"  # else search would never apply it
    with pytest.raises(ValueError, match="different models"):
        fit_adapter([sets[0], replace(sets[1], model_id="minilm")], rank=4, steps=20)


def test_a_strong_penalty_keeps_the_map_near_the_identity():
    rng = np.random.default_rng(3)
    sets = [_distorted_set("a", 1, np.eye(16) + 0.3 * rng.normal(size=(16, 16)))]
    loose = fit_adapter(sets, rank=4, l2=1e-4)
    tight = fit_adapter(sets, rank=4, l2=100.0)
    assert np.abs(tight.u @ tight.v).max() < 0.1 * np.abs(loose.u @ loose.v).max()


def test_fit_adapter_refuses_a_bad_rank_and_writes_nothing(tmp_path, capsys):
    data = tmp_path / "set"
    data.mkdir()
    (data / "tools.jsonl").write_text("")
    (data / "queries.jsonl").write_text("")
    out = tmp_path / "a.npz"
    assert main(["fit-adapter", "--data", str(data), "--rank", "0", "--out", str(out)]) == 1
    assert "--rank" in capsys.readouterr().err and not out.exists()
