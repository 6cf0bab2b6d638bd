"""archcost's Python API for notebooks and scripts: load a spec, read its formulas, numbers and graph.

    import archcost
    qwen = archcost.load("specs/qwen3-8b.arch")
    qwen.evaluate("prefill", P=8192)["flops_matrix"]    # 133594323353600
    qwen.formula("F", phase="decode")                   # renders as LaTeX in Jupyter
    qwen.compare("specs/llama-3.1-8b.arch", P=8192)     # a Markdown table in Jupyter
    qwen.diagram()                                      # an SVG in Jupyter

This package is the `archcost` import name itself (pyproject maps it to compiler/api/).
"""

from __future__ import annotations

__all__ = ["ArchError", "Diagram", "Formula", "Model", "Report", "Result", "Sweep", "Table", "load"]


def __getattr__(name: str):
    """The API's classes are imported on first use: `import archcost` (and the CLI, a module inside this
    package) costs nothing until a model is loaded."""
    if name == "ArchError":
        from archcost.dsl.errors import ArchError

        return ArchError
    if name in __all__:
        from archcost import model

        return getattr(model, name)
    raise AttributeError(f"module 'archcost' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What tab completion offers: the API, though its classes are imported only when used."""
    return sorted({*globals(), *__all__})
