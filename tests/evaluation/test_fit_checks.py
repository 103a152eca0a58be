"""eval/fit_checks.py reads back the recipe each shipped fit names and words the refit's verdict."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "fit_checks.py"


def load_checks():
    spec = importlib.util.spec_from_file_location("fit_checks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_calibration_recipe_is_read_back_from_the_source_that_calibrate_writes() -> None:
    fc = load_checks()
    recipe = fc._RECIPE.search("votr-mcp calibrate on the dev split of mscbench+mcpzero, at most 150 tasks per kind, 2026-11-23")
    assert recipe["sets"] == "mscbench+mcpzero" and recipe["limit"] == "150" and recipe["k"] is None
    with_k = fc._RECIPE.search("votr-mcp calibrate on the dev split of a+b+c, at most 150 tasks per kind, k from a+b, 2026-11-23")
    assert with_k["sets"] == "a+b+c" and with_k["k"] == "a+b"
    text = fc.calibration_text({"shipped": {"coverage": 0.95, "n_rows": 3, "source": "a script"}, "command": None,
                                "reproduced": False, "differing_fields": ["source"]})
    assert "could not refit" in text


def test_the_calibration_check_says_the_refit_climbs_from_the_shipped_file_and_what_a_fresh_one_gives() -> None:
    fc = load_checks()
    shipped = {"coverage": 0.97, "n_rows": 3, "source": "votr-mcp calibrate on the dev split of a, 2026-11-27"}
    check = {"shipped": shipped, "command": "votr-mcp calibrate --data a", "reproduced": True, "differing_fields": [],
             "fresh": {"null_quantile": 0.57, "abstain_floor": -2.16, "action_gate": 2.0,
                       "abstain_weights": {"bias": -16.8, "top_cosine": 8.4, "cosine_z": 0.0}},
             "fresh_differing_fields": ["abstain_weights", "null_quantile"]}
    text = fc.calibration_text(check)
    assert "starts from the shipped calibration" in text and "gives the same thresholds" in text
    assert "With `--fresh`" in text and "null quantile 0.57, floor -2.16, action gate 2.0" in text
    assert "top_cosine +8.4" in text and "cosine_z" not in text
    same = fc.calibration_text({**check, "fresh_differing_fields": []})
    assert same.endswith("With `--fresh` (from the logistic weights alone) it gives the same thresholds.")


def test_the_rerank_recipe_is_read_back_from_the_source_that_fit_rerank_writes() -> None:
    from votr_mcp.retrieval.rerank import shipped_rerank

    fc = load_checks()
    model = shipped_rerank()
    assert model is not None
    recipe = fc._RERANK_RECIPE.search(model.source)
    assert recipe is not None and recipe["head"] == str(model.head) and float(recipe["l2"]) == model.l2
    assert "could not refit" in fc.rerank_text({"shipped": model.to_dict() | {"source": "by hand"}, "command": None})


def test_each_recipe_the_fitting_commands_write_is_read_back_whole() -> None:
    from votr_mcp.evaluation.data import fit_source

    fc = load_checks()
    sets = [Path("bench/mscbench"), Path("bench/mcpzero")]
    calibrate = fc._RECIPE.search(fit_source("calibrate", sets, 300, "k from mscbench"))
    assert (calibrate["sets"], calibrate["limit"], calibrate["k"]) == ("mscbench+mcpzero", "300", "mscbench")
    grouped = fc._RECIPE.search(fit_source("calibrate", sets, 300, "k from mscbench",
                                           "false abstention bounded together on a+b & c+d"))
    assert (grouped["k"], grouped["together"]) == ("mscbench", "a+b & c+d")
    rerank = fc._RERANK_RECIPE.search(fit_source("fit-rerank", sets, None, "l2 0.01", "head 20"))
    assert (rerank["sets"], rerank["limit"], rerank["l2"], rerank["head"]) == ("mscbench+mcpzero", None, "0.01", "20")
    adapter = fc._ADAPTER_RECIPE.search(fit_source("fit-adapter", sets, 600, "rank 16", "l2 0.01"))
    assert (adapter["sets"], adapter["limit"], adapter["rank"], adapter["l2"]) == ("mscbench+mcpzero", "600", "16", "0.01")


def test_the_request_models_recipe_names_its_files_of_each_kind_and_the_check_words_a_drift() -> None:
    from votr_mcp.retrieval.tool_request import shipped_request_model

    fc = load_checks()
    model = shipped_request_model()
    assert model is not None
    recipe = fc._REQUEST_RECIPE.search(model.source)  # as `votr-mcp fit-request` writes it
    assert recipe is not None and recipe["chat"] == "eval/queries/request_classifier/chat.txt"
    assert "eval/queries/request_classifier/tool.txt" in recipe["tool"].split(", ") and float(recipe["l2"]) > 0
    assert all((SCRIPT.parents[1] / f).is_file() for kind in ("tool", "chat") for f in recipe[kind].split(", "))
    check = {"source": model.source, "command": "votr-mcp fit-request --tool t.txt --chat c.txt --l2 0.3",
             "largest_gap": 0.4, "reproduced": False, "requests": {"tool": 1769, "chat": 654},
             "fit_requests": {"tool": 976, "chat": 658}}
    text = fc.request_model_text(check)
    assert "gives different weights (largest apart by 4.0e-01)" in text
    assert "its files now hold 1769 tool and 654 chat requests, not the 976 and 658 it was fit on" in text
    same = fc.request_model_text(check | {"largest_gap": 0.0, "reproduced": True, "fit_requests": check["requests"]})
    assert same.endswith("gives the same weights (largest apart by 0.0e+00).")
    assert "could not refit" in fc.request_model_text({"source": "by hand", "command": None, "reproduced": False})
