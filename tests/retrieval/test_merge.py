import numpy as np

from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.features import Ranking
from votr_mcp.retrieval.merge import cohere_needs, merge_task


def _ranking(*order: int) -> Ranking:
    n = len(order)
    return Ranking(np.array(order, dtype=np.intp), np.linspace(1.0, 0.5, n), np.full(n, 0.5), np.zeros(n))


# Tools 0-1 on server 0, 2-3 on server 1, 4-5 on server 2.
SERVER_OF = np.array([0, 0, 1, 1, 2, 2])


def test_the_whole_querys_best_tool_stays_first_even_when_every_need_ranks_it_last():
    whole = _ranking(5, 0, 2)
    needs = [_ranking(0, 2, 5), _ranking(2, 0, 5)]
    merged = merge_task(whole, needs, SERVER_OF, 3, RetrievalConfig())
    assert merged.order[0] == 5


def test_a_tool_whose_server_serves_the_other_needs_rises_above_an_equally_ranked_one():
    whole = _ranking(0)
    # Need A ranks tools 3 and 4 equally deep; need B's best tool is on server 1, tool 3's server.
    needs = [_ranking(1, 3, 5), _ranking(1, 4, 5), _ranking(2, 0, 1)]
    plain = merge_task(whole, needs, SERVER_OF, 3, RetrievalConfig(merge_server_weight=0.0))
    supported = merge_task(whole, needs, SERVER_OF, 3, RetrievalConfig())

    def score(r: Ranking, tool: int) -> float:
        return float(r.fused[list(r.order).index(tool)])

    assert score(plain, 3) == score(plain, 4)  # a tie on the lists alone
    assert score(supported, 3) > score(supported, 4)
    assert set(supported.order) == set(plain.order)  # support only reorders tools some list holds


def test_a_need_lifts_the_tool_of_the_server_the_tasks_other_lists_lead_with():
    # Need 0 ranks a server-2 tool first, just above a server-1 tool; the whole query and need 1 both
    # lead with server 1.
    whole = _ranking(2, 0)
    needs = [Ranking(np.array([4, 3]), np.array([1.0, 0.9]), np.full(2, 0.5), np.zeros(2)), _ranking(3, 1)]
    cohered = cohere_needs(whole, needs, SERVER_OF, 0.5)
    assert list(cohered[0].order) == [3, 4]
    assert cohered[0].fused[0] == 0.9 + 0.5 * 1.0 and cohered[0].fused[1] == 1.0
    assert list(cohered[1].order) == [3, 1]  # already led by the task's server: unchanged
    assert cohere_needs(whole, needs, SERVER_OF, 0.0) == needs  # off
    assert cohere_needs(whole, needs[:1], SERVER_OF, 0.5) == needs[:1]  # a single need has no other list
