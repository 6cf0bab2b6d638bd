"""A block call resolved once, and every later call alike made from it: a spec written out layer by layer calls
the same block with the same arguments on the same kind of input hundreds of times, and resolving each anew
costs the resolve's time per op rather than per distinct block.

A call is alike when the block, its bound argument values, its input's rows and width, and everything of the
calling scope its body can read (multiplicity, class, precision roles, replay stage, stack, module, caches
declared `shared`) are equal. The first call is recorded: the ops and clusters its body made, the tensors it
leaves readable, and the first uses of names it noted or forgot. A later call gets the same ops and clusters
under its own label, reading its own input. A call whose body reported a problem, declared a shared cache or
a precision role is not recorded; nor is a call made from a recording while the first uses its body touches
stand otherwise than they stood then (noting and forgetting a word's first use depends on it): that call is
resolved in full.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

from ..graph.ir import Cluster, OpNode, Tensor
from .scope import Scope

MISSING = object()


class Noted(dict):
    """The resolve's first uses of free names (and the names near each): a dict that tells each recording
    open on it (`watchers`) which keys were set or removed."""

    def __init__(self, *args):
        super().__init__(*args)
        self.watchers: list[set] = []

    def _note(self, key) -> None:
        for touched in self.watchers:
            touched.add(key)

    def setdefault(self, key, value=None):
        self._note(key)
        return super().setdefault(key, value)

    def pop(self, key, *default):
        self._note(key)
        return super().pop(key, *default)

    def __setitem__(self, key, value) -> None:
        self._note(key)
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self._note(key)
        super().__delitem__(key)


@dataclass(frozen=True)
class Recording:
    """What one call's body made and changed, to make a later call alike from."""

    cluster: str                      # the recorded call's own cluster id; its body's ops and clusters lie under it
    source: tuple[str, ...]           # the producers of its input
    nodes: tuple[OpNode, ...]
    clusters: tuple[Cluster, ...]     # the clusters its body made inside its own, in order
    tensors: dict[str, Tensor]        # what it leaves readable as `label.name`
    current: Tensor                   # its output
    component: str | None
    first_use: dict                   # each touched symbol: (as it stood before, as it stood after)
    nearby: dict                      # each touched symbol the body left names near (only ever set where unset)
    roles_read: frozenset


@dataclass
class Opened:
    """A recording under way: where the resolve stood when the call began."""

    nodes: int
    clusters: int
    problems: int
    roles_set: int
    shared: dict
    roles_read: frozenset
    first_use: dict
    touched: set


def key(block, values: dict, source: Tensor, scope: Scope) -> tuple | None:
    """What a call's body can read, as a key of the recordings; None for a call never recorded (an input of
    several tensors side by side)."""
    if source.parts:
        return None
    return (id(block), tuple(values.items()), source.rows, source.width, len(source.producers), scope.multiplicity,
            scope.component, tuple(scope.roles.items()), scope.tail, scope.stack, scope.weight_format, scope.module,
            scope.call_chain, scope.cluster, tuple(scope.shared.items()), id(scope.formats), scope.reuse,
            scope.shares, scope.held_by)


def open_recording(res, scope: Scope) -> Opened:
    touched: set = set()
    res.first_use.watchers.append(touched)
    res.nearby.watchers.append(touched)
    return Opened(len(res.nodes), len(res.clusters), len(res.problems), len(res.roles_set), dict(scope.shared),
                  frozenset(scope.roles_read), dict(res.first_use), touched)


def discard(res, opened: Opened) -> None:
    """Stop a recording (the call failed, or it is done)."""
    for noted in (res.first_use, res.nearby):  # by identity: two recordings' sets may be equal
        noted.watchers[:] = [touched for touched in noted.watchers if touched is not opened.touched]


def close_recording(res, opened: Opened, scope: Scope, cluster_id: str, source: Tensor, current: Tensor,
                    tensors: dict[str, Tensor], component: str | None) -> Recording | None:
    """The recording of the call just resolved, or None where it may not be replayed."""
    discard(res, opened)
    if (len(res.problems), len(res.roles_set), scope.shared) != (opened.problems, opened.roles_set, opened.shared):
        return None
    return Recording(cluster_id, source.producers, tuple(res.nodes[opened.nodes:]),
                     tuple(list(res.clusters.values())[opened.clusters:]), dict(tensors), current, component,
                     {k: (opened.first_use.get(k, MISSING), res.first_use.get(k, MISSING)) for k in opened.touched},
                     {k: res.nearby[k] for k in opened.touched if k in res.nearby},
                     frozenset(scope.roles_read) - opened.roles_read)


def replays(res, recording: Recording) -> bool:
    """Whether a later call may be made from `recording` (its key already holds the input's producer count):
    every first use the recorded body touched standing as it stood then (the names near a first use are only
    ever set where unset, so any state of them replays)."""
    return all(res.first_use.get(k, MISSING) == before for k, (before, _) in recording.first_use.items())


def replay(res, recording: Recording, cluster_id: str, source: Tensor, scope: Scope) -> tuple[Tensor, dict, str]:
    """The recorded body's ops and clusters under `cluster_id`, reading `source`: (the output, the tensors
    left readable by name, the class); the first uses and roles changed as the body changed them."""
    old = recording.cluster
    inputs = dict(zip(recording.source, source.producers))

    def moved(node_id):
        if node_id in inputs:
            return inputs[node_id]
        if node_id == old:
            return cluster_id
        if node_id is not None and node_id.startswith(old + "."):
            return cluster_id + node_id[len(old):]
        return node_id

    def tensor(t: Tensor) -> Tensor:
        return Tensor(moved(t.producer), t.rows, t.width, tuple(moved(p) for p in t.also),
                      tuple(tensor(p) for p in t.parts))

    for cluster in recording.clusters:
        res.clusters[moved(cluster.id)] = replace(cluster, id=moved(cluster.id), parent=moved(cluster.parent))
    for node in recording.nodes:
        res.add_node(replace(node, id=moved(node.id), inputs=tuple(moved(i) for i in node.inputs),
                             states=tuple(moved(s) for s in node.states), cluster=moved(node.cluster),
                             args=SimpleNamespace(**vars(node.args))), node.span)
    for k, (_, after) in recording.first_use.items():
        if after is MISSING:
            res.first_use.pop(k, None)
        else:
            res.first_use[k] = after
    for k, names in recording.nearby.items():  # only ever set where unset: what the body's lookups did
        res.nearby.setdefault(k, names)
    scope.roles_read.update(recording.roles_read)
    return tensor(recording.current), {name: tensor(t) for name, t in recording.tensors.items()}, recording.component
