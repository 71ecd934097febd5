"""B.FPATR matrix post-processing (ADR-0085 decisions 174-181).

Submodules: ``attributes`` (the command word, the PreQuantMode table, field
legality), ``params`` (quantization and activation parameter words),
``element`` (the per-element post-process), ``reduction`` (RowMax/GroupMax
steps and folds) and ``tile`` (the complete tile operation with preflight and
atomic commit).  This package re-exports their public names (each
submodule's ``__all__``), in layer order.
"""

from __future__ import annotations

from . import attributes, element, params, reduction, tile
from .attributes import *  # noqa: F401,F403
from .element import *  # noqa: F401,F403
from .params import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .tile import *  # noqa: F401,F403

__all__ = [
    *attributes.__all__,
    *params.__all__,
    *element.__all__,
    *reduction.__all__,
    *tile.__all__,
]
