"""The fits a results run re-executes: each shipped fit (the calibration, the rerank, the query adapter, the
request model) names in its ``source`` the recipe that made it; the run refits by that recipe (on the dev
rows, or the request model on its own files of requests) and says whether it comes out the same, and how
RESULTS.md words each fit. Read by eval/make_results.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from votr_mcp.retrieval.config import RetrievalConfig

HERE = Path(__file__).resolve().parent

# The recipe `votr-mcp calibrate` writes into a calibration's "source"; the run re-executes the
# recipe the shipped file claims and says whether the thresholds come out the same.
_RECIPE = re.compile(r"votr-mcp calibrate on the dev split of (?P<sets>[\w+-]+)(?:, at most (?P<limit>\d+) tasks per kind)?"
                     r"(?:, k from (?P<k>[\w+-]+))?(?:, false abstention bounded together on (?P<together>[\w+-]+(?: & [\w+-]+)*))?")


def set_folder(bench: Path, name: str) -> Path:
    """A labelled set by name: ours under eval/queries/, else a benchmark set under ``bench``."""
    own = HERE / "queries" / name
    return own if (own / "queries.jsonl").is_file() else bench / name


def set_path_text(name: str) -> str:
    """How a command line names a set (relative to the project root)."""
    return f"eval/queries/{name}" if (HERE / "queries" / name / "queries.jsonl").is_file() else f"../shared/bench/{name}"


def recipe_sets(recipe: re.Match[str]) -> tuple[list[str], int | None]:
    """The sets a fit's recipe names and its cap of tasks per kind (None: every dev row)."""
    return recipe["sets"].split("+"), int(recipe["limit"]) if recipe["limit"] else None


def data_options(sets: list[str], limit: int | None) -> str:
    """The fitting command's ``--data`` options for ``sets``, and ``--limit`` when there is a cap."""
    return " ".join(f"--data {set_path_text(s)}" for s in sets) + (f" --limit {limit}" if limit else "")


def check_calibration(bench: Path, cache: Path) -> dict[str, Any] | None:
    """Refit the calibration by the recipe named in the shipped file and compare (None if none shipped)."""
    import tempfile

    from votr_mcp.evaluation.calibration import calibrate_on
    from votr_mcp.retrieval import SHIPPED_PATH

    if not SHIPPED_PATH.is_file():
        return None
    shipped = json.loads(SHIPPED_PATH.read_text(encoding="utf-8"))
    recipe = _RECIPE.search(str(shipped.get("source", "")))
    if recipe is None:
        return {"shipped": shipped, "command": None, "reproduced": False, "differing_fields": ["source"]}
    sets, limit = recipe_sets(recipe)
    k_sets = recipe["k"].split("+") if recipe["k"] else None
    together = [group.split("+") for group in recipe["together"].split(" & ")] if recipe["together"] else []
    def refit(fresh: bool) -> tuple[dict[str, Any], dict[str, int]]:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "calibration.json"
            # The recipe writes over the shipped file, and so climbs first from it (evaluation.calibration.warm_start).
            out.write_bytes(SHIPPED_PATH.read_bytes())
            fitted, _, counts = calibrate_on([set_folder(bench, s) for s in sets], coverage=shipped["coverage"],
                                             false_abstain=shipped["false_abstain"],
                                             abstain_confidence=shipped.get("abstain_confidence", 0.0), limit=limit,
                                             out=out, cache_dir=cache, fresh=fresh,
                                             k_datas=None if k_sets is None else [set_folder(bench, s) for s in k_sets],
                                             bound_together=[[set_folder(bench, s) for s in group] for group in together])
        return fitted, counts

    def differing_from_shipped(fitted: dict[str, Any]) -> list[str]:
        # Compared as JSON reads them back: a fitted tuple is the shipped file's list.
        return [k for k in fitted if k != "source" and json.loads(json.dumps(fitted[k])) != shipped.get(k)]

    fitted, counts = refit(fresh=False)
    differing = differing_from_shipped(fitted)
    fresh, _ = refit(fresh=True)
    command = (f"votr-mcp calibrate {data_options(sets, limit)}"
               + "".join(f" --k-data {set_path_text(s)}" for s in k_sets or ())
               + "".join(" --bound-together " + " ".join(set_path_text(s) for s in group) for group in together)
               + f" --coverage {shipped['coverage']} --false-abstain {shipped['false_abstain']}"
               + f" --abstain-confidence {shipped.get('abstain_confidence', 0.0)}")
    return {"command": command, "shipped": shipped, "refit": fitted, "dev_searches": counts,
            "reproduced": not differing, "differing_fields": differing,
            "fresh": {k: fresh[k] for k in ("null_quantile", "abstain_floor", "action_gate", "abstain_weights")},
            "fresh_differing_fields": differing_from_shipped(fresh)}


_RERANK_RECIPE = re.compile(r"votr-mcp fit-rerank on the dev split of (?P<sets>[\w+-]+)(?:, at most (?P<limit>\d+) tasks per kind)?"
                            r", l2 (?P<l2>[\d.e-]+), head (?P<head>\d+)")


def check_rerank(bench: Path, cache: Path) -> dict[str, Any] | None:
    """Refit the rerank model by the recipe named in the shipped file and compare (None if none shipped)."""
    import tempfile

    from votr_mcp.evaluation.rerank_fit import fit_rerank_on
    from votr_mcp.retrieval.rerank import SHIPPED_RERANK

    if not SHIPPED_RERANK.is_file():
        return None
    shipped = json.loads(SHIPPED_RERANK.read_text(encoding="utf-8"))
    recipe = _RERANK_RECIPE.search(str(shipped.get("source", "")))
    if recipe is None:
        return {"shipped": shipped, "command": None, "reproduced": False}
    sets, limit = recipe_sets(recipe)
    with tempfile.TemporaryDirectory() as tmp:
        model, _, counts = fit_rerank_on([set_folder(bench, s) for s in sets], limit=limit, l2=float(recipe["l2"]),
                                         head=int(recipe["head"]), out=Path(tmp) / "rerank.json", cache_dir=cache)
    # Weights come from an iterative optimiser: equal to 3 decimals is the same model.
    same = all(abs(a - b) < 1e-3 for a, b in zip(model.weights, shipped["weights"]))
    command = f"votr-mcp fit-rerank {data_options(sets, limit)} --l2 {recipe['l2']} --head {recipe['head']}"
    return {"command": command, "shipped": shipped, "refit_weights": list(model.weights), "dev_queries": counts,
            "reproduced": same}


_ADAPTER_RECIPE = re.compile(r"votr-mcp fit-adapter on the dev split of (?P<sets>[\w+-]+)(?:, at most (?P<limit>\d+) tasks per kind)?"
                             r", rank (?P<rank>\d+), l2 (?P<l2>[\d.e-]+)")


def check_adapter(bench: Path, cache: Path) -> dict[str, Any] | None:
    """Refit the query adapter by the recipe named in the shipped file and compare (None if none shipped)."""
    import tempfile

    import numpy as np

    from votr_mcp.evaluation.query_adapter_fit import fit_adapter_on
    from votr_mcp.retrieval.query_adapter import SHIPPED_ADAPTER, QueryAdapter

    if not SHIPPED_ADAPTER.is_file():
        return None
    shipped = QueryAdapter.load(SHIPPED_ADAPTER)
    from votr_mcp.index.models import default_embedder

    model = default_embedder().model_id
    if shipped.model_id != model:  # inert: it corrects another model's vectors
        return {"source": shipped.source, "command": None, "reproduced": False, "stale_for": shipped.model_id,
                "model": model}
    recipe = _ADAPTER_RECIPE.search(shipped.source)
    if recipe is None:
        return {"source": shipped.source, "command": None, "reproduced": False}
    sets, limit = recipe_sets(recipe)
    with tempfile.TemporaryDirectory() as tmp:
        refit, _, counts = fit_adapter_on([set_folder(bench, s) for s in sets], limit=limit, rank=int(recipe["rank"]),
                                          l2=float(recipe["l2"]), folds=len(shipped.held_out) or 5,
                                          out=Path(tmp) / "query_adapter.npz", cache_dir=cache)
    # Adam on floats: the same map to 1e-3 of its largest entry is the same adapter.
    pairs = [(refit, shipped), *zip(refit.held_out, shipped.held_out)]
    gap = max(float(np.abs(a.u @ a.v - b.u @ b.v).max() / np.abs(b.u @ b.v).max()) for a, b in pairs)
    command = f"votr-mcp fit-adapter {data_options(sets, limit)} --rank {recipe['rank']} --l2 {recipe['l2']}"
    return {"command": command, "source": shipped.source, "dev_queries": counts, "relative_gap": gap,
            "reproduced": gap < 1e-3}


# The recipe `votr-mcp fit-request` writes into the request model's source: its files of each kind, the
# requests they held and the penalty cross-validation chose.
_REQUEST_RECIPE = re.compile(r"votr-mcp fit-request on tool requests (?P<tool>.+?) and chat requests (?P<chat>.+?) "
                             r"\((?P<n_tool>\d+) tool / (?P<n_chat>\d+) chat requests\), l2=(?P<l2>[\d.e-]+)")


def check_request_model() -> dict[str, Any] | None:
    """Refit the tool-request model by the recipe named in the shipped file and compare (None if none shipped)."""
    import numpy as np

    from votr_mcp.evaluation.request_model_fit import fit_request_model, read_requests
    from votr_mcp.index.use import USEEmbedder
    from votr_mcp.retrieval.tool_request import shipped_request_model

    shipped = shipped_request_model()
    if shipped is None:
        return None
    recipe = _REQUEST_RECIPE.search(shipped.source)
    if recipe is None:
        return {"source": shipped.source, "command": None, "reproduced": False}
    files = {kind: recipe[kind].split(", ") for kind in ("tool", "chat")}
    requests = {kind: [r for f in names for r in read_requests(HERE.parent / f)] for kind, names in files.items()}
    refit = fit_request_model(USEEmbedder(), requests["tool"], requests["chat"], l2=float(recipe["l2"]), source="")
    # The penalty cross-validation chose, on the same requests: the same weights but for float rounding.
    gap = max(float(np.abs(refit.weights - shipped.weights).max()), abs(refit.bias - shipped.bias))
    command = ("votr-mcp fit-request " + " ".join(f"--{kind} {f}" for kind, names in files.items() for f in names)
               + f" --l2 {recipe['l2']}")
    return {"command": command, "source": shipped.source, "largest_gap": gap, "reproduced": gap < 1e-6,
            "requests": {kind: len(found) for kind, found in requests.items()},
            "fit_requests": {"tool": int(recipe["n_tool"]), "chat": int(recipe["n_chat"])}}


def request_model_text(check: dict[str, Any] | None) -> str:
    if check is None:
        return "**Request model.** None shipped: abstention reads no tool-request evidence."
    head = (f"**Request model.** Shipped `src/votr_mcp/retrieval/tool_request.npz`, a logistic model on USE vectors "
            f"telling requests for a tool from chat ({check['source']}).")
    if check["command"] is None:
        return head + " Its source does not name its files of each kind, so this run could not refit it."
    verdict = ("gives the same weights" if check["reproduced"] else "gives different weights") + \
        f" (largest apart by {check['largest_gap']:.1e})"
    if check["requests"] != check["fit_requests"]:
        verdict += (f"; its files now hold {check['requests']['tool']} tool and {check['requests']['chat']} chat requests, "
                    f"not the {check['fit_requests']['tool']} and {check['fit_requests']['chat']} it was fit on")
    return head + f" Refitting it in this run with `{check['command']}` {verdict}."


def adapter_text(check: dict[str, Any] | None) -> str:
    if check is None:
        return "**Query adapter.** None shipped: query vectors are used as the model gives them."
    head = (f"**Query adapter.** Shipped `src/votr_mcp/retrieval/query_adapter.npz`, a low-rank map of query vectors "
            f"({check['source']}), acts when the `query_adapter` stage is on ("
            + ("on by default; the ablation's `- query_adapter` rows" if RetrievalConfig().query_adapter else
               "off by default; the ablation's `+ query_adapter` rows") + " measure it). When it is on, the rerank and "
            "calibration fits, and the dev figures below, adapt each dev text by the fit that left its fold out (read "
            "with the map it fitted, a dev row's figure would say more about the map than the pipeline).")
    if check.get("stale_for"):
        return head + (f" It was fit for `{check['stale_for']}` vectors; search now reads `{check['model']}`, so it is "
                       "inert (its stage changes nothing) until refit with `votr-mcp fit-adapter`.")
    if check["command"] is None:
        return head + " Its source does not name a `votr-mcp fit-adapter` recipe, so this run could not refit it."
    verdict = ("gives the same map" if check["reproduced"] else "gives a different map") + \
        f" (largest entry apart by {check['relative_gap']:.1e} of the largest entry)"
    return head + f" Refitting it in this run with `{check['command']}` (dev rows only) {verdict}."


def rerank_text(check: dict[str, Any] | None) -> str:
    if check is None:
        return "**Rerank.** None shipped: the fused order is final."
    shipped = check["shipped"]
    weights = ", ".join(f"{n} {w:+.2f}" for n, w in zip(shipped["features"], shipped["weights"]))
    head = (f"**Rerank.** Shipped `src/votr_mcp/retrieval/rerank.json` reorders the fused top {shipped.get('head')} by a "
            f"linear score over standardised features; weights: {weights} ({shipped.get('source', 'no source given')}).")
    if check["command"] is None:
        return head + " Its source does not name a `votr-mcp fit-rerank` recipe, so this run could not refit it."
    verdict = "gives the same weights (to 3 decimals)" if check["reproduced"] else "gives different weights"
    return head + f" Refitting it in this run with `{check['command']}` (dev rows only) {verdict}."


def calibration_text(check: dict[str, Any] | None) -> str:
    if check is None:
        return ""
    shipped = check["shipped"]
    if shipped is None:
        return "**Calibration.** None shipped: fixed k, no abstention."
    fields = ", ".join(f"{k} {shipped[k]:.4g}" for k in ("coverage", "temperature", "mix", "set_threshold",
                                                         "abstain_threshold", "abstain_lexical", "false_abstain",
                                                         "abstain_confidence")
                       if isinstance(shipped.get(k), (int, float)))
    if isinstance(shipped.get("abstain_weights"), dict):
        fields += "; abstention logistic weights " + ", ".join(f"{k} {v:+.3g}" for k, v in shipped["abstain_weights"].items())
    head = (f"**Calibration.** Shipped `src/votr_mcp/retrieval/calibration.json`: {fields}; fit on {shipped.get('n_rows')} "
            f"answerable dev rows ({shipped.get('source', 'no source given')}).")
    if check["command"] is None:
        return head + " Its source does not name a `votr-mcp calibrate` recipe, so this run could not refit it."
    verdict = ("gives the same thresholds (every field but `source` equal)" if check["reproduced"] else
               "gives different values for " + ", ".join(check["differing_fields"]))
    text = head + (f" Refitting it in this run with `{check['command']}` (dev rows only; it starts from the shipped "
                   f"calibration, which the command overwrites: the abstention retuning climbs from its weights first, and "
                   f"its temperature and mix stay unless others make k clearly smaller) {verdict}.")
    fresh = check.get("fresh")
    if isinstance(fresh, dict) and "fresh_differing_fields" in check:
        differs = check["fresh_differing_fields"]
        text += (" With `--fresh` (from the logistic weights alone) it gives "
                 + ("the same thresholds." if not differs else
                    f"another optimum: null quantile {fresh['null_quantile']}, floor {_num(fresh['abstain_floor'])}, "
                    f"action gate {fresh['action_gate']}; weights "
                    + ", ".join(f"{k} {v:+.3g}" for k, v in fresh["abstain_weights"].items() if v) + "."))
    return text


def _num(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) else "none"
