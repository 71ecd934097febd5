"""B.FPATR matrix post-processing (ADR-0085 decisions 174-181).

Submodules: ``attributes`` (the command word, the PreQuantMode table, field
legality), ``params`` (quantization and activation parameter words),
``element`` (the per-element post-process), ``reduction`` (RowMax/GroupMax
steps and folds) and ``tile`` (the complete tile operation with preflight and
atomic commit).  This package re-exports their public names.
"""

from __future__ import annotations

import importlib
from typing import List

__all__: List[str] = []

# Submodules re-exported here, in layer order.  A submodule that is not
# written yet is skipped (only a missing module of that exact name is
# tolerated; any other import error propagates).
_SUBMODULES = [
    "attributes",
    "params",
    "element",
    "reduction",
    "tile",
]


def _reexport(name: str) -> None:
    full = f"{__name__}.{name}"
    try:
        module = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        # tolerate only a sibling submodule that has not been written yet
        if exc.name in {f"{__name__}.{n}" for n in _SUBMODULES}:
            return
        raise
    names = getattr(module, "__all__", [])
    for attr in names:
        globals()[attr] = getattr(module, attr)
    __all__.extend(n for n in names if n not in __all__)


for _name in _SUBMODULES:
    _reexport(_name)
del _name
