"""Governance: principals, allow/deny rules over servers, tools and annotations, disabled tools."""

from votr_mcp.policy.governance import ANONYMOUS, LOCAL, Governance, PolicyRefused
from votr_mcp.policy.rules import Decision, Policy, Principal, Rule

__all__ = ["ANONYMOUS", "LOCAL", "Decision", "Governance", "Policy", "PolicyRefused", "Principal", "Rule"]
