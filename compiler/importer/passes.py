"""The passes a model's forward makes over its layers, read from the order in which it calls them.

A looped or recurrent-depth model runs the same layers several times over with one set of weights: HRM-Text
runs its low-level stack L_cycles times, then its high-level stack, H_cycles times over (Wang et al. 2025,
"Hierarchical Reasoning Model"); Dory runs its recurrent section n_recurrent_loops times. Those counts are
the family's own config fields, which no field list can know; the forward says them. The import runs one
prefill of two positions on the meta device, records the modules the base model calls (and the calls inside
each), and writes each run of repeats of the same modules as `loop N` (the language's shared repeat: work
and state N times, weights once). A model whose forward calls each module once reads as before.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

from archcost.dsl import ast
from archcost.dsl.errors import ArchError

from . import meta
from .layer import unmapped
from .reading.modules import norm
from .reading.spec import Layer, Pass, Run, call


@dataclass(frozen=True)
class Called:
    """One call of a module during the forward: its path under the traced root, and the calls made inside it."""

    path: str
    inner: tuple[Called, ...]


@dataclass(frozen=True)
class Loop:
    """`count` runs over `body` (paths and loops), one after another."""

    count: int
    body: tuple[str | Loop, ...]


def traced(model, base) -> tuple[Called, ...] | None:
    """The calls `base`'s forward makes (with the calls inside each) during one prefill of two positions at one
    request; None where the model does not run on the meta device (the check then builds it on the CPU, and
    the layers read as the list they are). The run is the check's probe of the meta device: it runs once."""
    torch, _ = meta.libraries()
    names = {id(module): path for path, module in base.named_modules()}
    open_calls: list[list] = [[]]

    def before(module, *_):
        open_calls.append([])

    def after(module, *_):
        inner = open_calls.pop()
        open_calls[-1].append(Called(names[id(module)], tuple(inner)))

    handles = [hook for module in base.modules()
               for hook in (module.register_forward_pre_hook(before), module.register_forward_hook(after))]
    try:  # the probe meta.runnable would run (FlopCounterMode, the cache handed where the model needs one)
        with torch.no_grad():
            meta.run_shapes(model, ((1, 0, 2),))
    except ArchError:
        return None
    finally:
        for handle in handles:
            handle.remove()
    base_calls = [called for called in open_calls[0] if called.path == ""]
    return base_calls[0].inner if len(base_calls) == 1 else None


def repeated(paths: tuple[str, ...]) -> bool:
    return len(set(paths)) < len(paths)


def looped(paths: tuple[str, ...]) -> tuple[str | Loop, ...]:
    """The sequence written with the fewest items, each run of k equal parts as one Loop(k, part) (a loop
    counts one item more than its body); on a tie, the fewer loops (two calls of a weightless norm in a row
    stay two calls). The search is over every split: cubic in the length, which is a model's top-level calls."""

    @functools.cache
    def best(i: int, j: int) -> tuple[int, tuple[str | Loop, ...]]:
        if j - i == 1:
            return 1, (paths[i],)
        options = [(best(i, k)[0] + best(k, j)[0], best(i, k)[1] + best(k, j)[1]) for k in range(i + 1, j)]
        length = j - i
        period = next((p for p in range(1, length // 2 + 1)
                       if length % p == 0 and paths[i:i + p] * (length // p) == paths[i:j]), None)
        if period is not None:
            size, body = best(i, i + period)
            options.append((size + 1, (Loop(length // period, body),)))
        return min(options, key=lambda option: (option[0], _loops(option[1])))

    return best(0, len(paths))[1] if paths else ()


def _loops(nodes: tuple[str | Loop, ...]) -> int:
    return sum(1 + _loops(node.body) for node in nodes if isinstance(node, Loop))


def read(base, calls) -> tuple[tuple, list[str]] | None:
    """(the layers' part of the forward as nodes, the distinct layer paths in the order first run) where the
    forward runs some module holding parameters more than once; None otherwise."""
    if calls is None:
        return None
    kept = _kept(base, calls)
    held = [i for i, called in enumerate(kept) if _is_layer(base, called.path) or _is_stack(base, called)]
    if not held:
        return None
    region = kept[held[0]:held[-1] + 1]
    leaves = [path for called in region for path in _leaves(base, called)]
    if not any(leaves.count(path) > 1 and any(True for _ in base.get_submodule(path).parameters())
               for path in set(leaves)):
        return None
    nodes = _nodes(base, region, "", 0)
    read: list[str] = []
    _layer_paths(nodes, read)
    return nodes, read


def _kept(base, calls) -> list:
    """The calls that cost: layers, stacks of layers, norms and modules holding parameters (not a rotary
    table's, which the attention's `rope` counts)."""
    return [called for called in calls if _is_layer(base, called.path) or _is_stack(base, called)
            or norm(base.get_submodule(called.path)) is not None
            or any(True for _ in base.get_submodule(called.path).parameters())]


def _is_layer(base, path: str) -> bool:
    return "." in path and type(base.get_submodule(path.rsplit(".", 1)[0])).__name__ == "ModuleList"


def _is_stack(base, called) -> bool:
    """A module whose calls run layers of a list it holds (HRM-Text's HrmTextStack: its layers, then a norm)."""
    return not _is_layer(base, called.path) and any(
        _is_layer(base, inner.path) or _is_stack(base, inner) for inner in called.inner)


def _leaves(base, called) -> list[str]:
    if _is_stack(base, called):
        return [path for inner in _kept(base, called.inner) for path in _leaves(base, inner)]
    return [called.path]


def _nodes(base, calls: list, prefix: str, depth: int) -> tuple:
    """The calls as nodes: ("layer", path, prefix), ("stmt", statement), ("pass", count, label, nodes); a stack's
    calls in place of its own, their labels prefixed with its name."""
    first: dict = {}
    for called in calls:
        first.setdefault(called.path, called)

    def built(nodes, depth: int) -> tuple:
        out = []
        for node in nodes:
            if isinstance(node, Loop):
                alone = node.body[0] if len(node.body) == 1 and isinstance(node.body[0], str) else None
                label = (f"{prefix}{_name(alone)}_passes" if alone is not None and _is_stack(base, first[alone])
                         else f"{prefix}passes" + (str(depth + 1) if depth else ""))
                out.append(("pass", node.count, label, built(node.body, depth + 1)))
            elif _is_layer(base, node):
                out.append(("layer", node, prefix))
            elif _is_stack(base, first[node]):
                out += _nodes(base, _kept(base, first[node].inner), f"{prefix}{_name(node)}_", depth)
            else:
                out.append(("stmt", _between(base, node, prefix)))
        return tuple(out)

    return built(looped(tuple(called.path for called in calls)), depth)


def _name(path: str) -> str:
    return path.rsplit(".", 1)[-1].lower()


def _between(base, path: str, prefix: str) -> ast.BlockCall:
    """A norm the forward runs between layers (a stack's last norm, say)."""
    module = base.get_submodule(path)
    kind = norm(module)
    if kind is None or kind.width not in (None, base.get_input_embeddings().weight.shape[1]):
        raise unmapped(module, path, "run between the layers, and not a norm")
    return call(kind.block, "d", label=f"{prefix}{_name(path)}", note=f"{type(module).__name__}: {path}")


def _layer_paths(nodes: tuple, read: list[str]) -> None:
    for node in nodes:
        if node[0] == "layer" and node[1] not in read:
            read.append(node[1])
        elif node[0] == "pass":
            _layer_paths(node[3], read)


def written(nodes: tuple, by_path: dict) -> tuple:
    """The nodes as the spec writes them: consecutive layers of one list as a Run, passes as Pass."""
    out: list = []
    # consecutive layers of one list together (their list's path the key), every other node apart (False)
    for listed, group in itertools.groupby(nodes, key=lambda node: node[0] == "layer" and _list_of(node[1])):
        group = list(group)
        if listed:
            layers = tuple(Layer(prefix + by_path[path][0], by_path[path][1]) for _, path, prefix in group)
            out.append(Run(layers, f"{len(layers)} layer{'s' if len(layers) > 1 else ''}: {listed}"))
            continue
        out += [Pass(node[1], node[2], written(node[3], by_path)) if node[0] == "pass" else node[1]
                for node in group]
    return tuple(out)


def _list_of(path: str) -> str:
    """The layer list a layer's path is in (`L_module.layers` of `L_module.layers.2`)."""
    return path.rsplit(".", 1)[0]
