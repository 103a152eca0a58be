"""Learning from use: the outcome log, Thompson sampling over near-ties, learned and rejected example requests."""

from votr_mcp.learning.bandit import Bandit
from votr_mcp.learning.examples import LearnedExamples, mix_weight
from votr_mcp.learning.learner import Learning
from votr_mcp.learning.outcomes import CallEvent, EventSink, OutcomeLog, Returned, SearchEvent, context_of

__all__ = ["Bandit", "CallEvent", "EventSink", "LearnedExamples", "Learning", "OutcomeLog", "Returned", "SearchEvent",
           "context_of", "mix_weight"]
