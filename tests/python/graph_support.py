"""Chains through a dependency graph, for the tests that hold layers apart by closure (the body's `with`s in
test_layers.py, the harness's imports in test_python_layers.py)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Set


def shortest_chains(direct: Mapping[str, Set[str]], start: str, targets: Set[str]) -> list[list[str]]:
    """A shortest chain of dependencies from `start` to each target it reaches, breadth first, in target order."""
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for next_node in sorted(direct[node]):
            if next_node not in came_from:
                came_from[next_node] = node
                queue.append(next_node)
    chains = []
    for target in sorted(targets & set(came_from) - {start}):
        chain: list[str] = []
        step: str | None = target
        while step is not None:
            chain.append(step)
            step = came_from[step]
        chains.append(chain[::-1])
    return chains
