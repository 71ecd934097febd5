"""The layers of docs/design.md hold in the code (an AST walk of src/ptonum).

Every ``import`` / ``from ... import`` statement counts, including the ones
deferred into function bodies (a deferred import is still a dependency; it
only hides a cycle from the interpreter).  Checked:

* no import cycle between ptonum modules;
* no ``from M import _name`` where ``M`` is another ptonum module;
* every module is in :data:`LAYERS` and imports only from its own layer or
  the layers below (the table is the one in docs/design.md);
* the kernel modules import only ``ptonum.kernels`` and ``ptonum.tables``;
  only ``ptonum.engines`` imports a kernel module, and only ``ptonum.engines``
  and the command line import the kernel configuration package.
"""

from __future__ import annotations

import ast
import pathlib
import re
from typing import Dict, List, Set, Tuple

import ptonum

SRC = pathlib.Path(ptonum.__file__).parent

#: Bottom to top; a module imports only from its own layer or lower ones.  Keep in step with
#: the layer table of docs/design.md.  A pattern ending in ".*" covers a package's submodules.
LAYERS: List[Tuple[str, ...]] = [
    ("ptonum.errors", "ptonum._util", "ptonum.publish", "ptonum.numtext", "ptonum.npyfile"),
    ("ptonum.flags", "ptonum.rounding", "ptonum.datatypes"),
    ("ptonum.tables",),
    ("ptonum.kernels", "ptonum.kernels.*"),
    ("ptonum.engines",),
    ("ptonum.formats", "ptonum.fp19"),
    ("ptonum.encode", "ptonum.tcvt"),
    ("ptonum",),
    ("ptonum.fpatr.attributes",),
    ("ptonum.fpatr.params", "ptonum.fpatr.reduction"),
    ("ptonum.fpatr.element",),
    ("ptonum.fpatr.tile",),
    ("ptonum.fpatr",),
    ("ptonum.conformance", "ptonum.conformance.*"),
    ("ptonum.dask", "ptonum.dask.*"),
    ("ptonum.example",),
    ("ptonum.cli", "ptonum.cli.*", "ptonum.__main__"),
]

KERNEL_MODULE = re.compile(r"^ptonum\.kernels\.[a-z_0-9]+$")


def _modules() -> Dict[str, Tuple[pathlib.Path, bool]]:
    mods: Dict[str, Tuple[pathlib.Path, bool]] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


MODULES = _modules()


def _imports() -> Tuple[Dict[str, Set[str]], List[str]]:
    """Module -> the ptonum modules it imports; and every private cross-module import."""
    edges: Dict[str, Set[str]] = {m: set() for m in MODULES}
    private: List[str] = []
    for name, (path, is_pkg) in MODULES.items():
        package = name if is_pkg else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    if node.level > 1:
                        base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != "ptonum" and not target.startswith("ptonum."):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    dep = sub if sub in MODULES else target
                    if dep != name:
                        edges[name].add(dep)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and dep != name:
                        private.append(f"{name}: from {target} import {alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "ptonum" or alias.name.startswith("ptonum."):
                        if alias.name != name:
                            edges[name].add(alias.name)
    return edges, private


EDGES, PRIVATE = _imports()


def _layer(module: str) -> int:
    for i, patterns in enumerate(LAYERS):
        for p in patterns:
            if module == p or (p.endswith(".*") and module.startswith(p[:-1])):
                return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS here and to the table in docs/design.md")


def test_every_module_has_a_layer():
    for m in MODULES:
        _layer(m)


def test_no_import_cycle():
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(EDGES.get(m, ())):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if state.get(d) is None:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m)


def test_no_private_name_from_another_module():
    assert PRIVATE == []


def test_imports_go_down_the_layers():
    upward = [f"{m} (layer {_layer(m)}) imports {d} (layer {_layer(d)})"
              for m in sorted(EDGES) for d in sorted(EDGES[m]) if _layer(d) > _layer(m)]
    assert upward == []


def test_kernels_read_only_tables_and_only_engines_reads_kernels():
    for m, deps in sorted(EDGES.items()):
        if m.startswith("ptonum.kernels"):
            assert deps <= {"ptonum.kernels", "ptonum.tables"} | {d for d in deps if KERNEL_MODULE.match(d)}, (m, deps)
            continue
        kernel_modules = {d for d in deps if KERNEL_MODULE.match(d)}
        if m != "ptonum.engines":
            assert not kernel_modules, f"{m} imports {kernel_modules}: go through ptonum.engines"
        if "ptonum.kernels" in deps:
            assert m == "ptonum.engines" or m.startswith("ptonum.cli."), f"{m} imports ptonum.kernels"


def test_the_walk_sees_deferred_imports():
    """The checks above would be empty if the walk missed imports inside functions."""
    assert "ptonum.kernels.postprocess" in EDGES["ptonum.engines"]  # imported inside functions only
    assert "ptonum.tables" in EDGES["ptonum.kernels.postprocess"]


# ---------------------------------------------------------------------------
# Destination facts are written once (ptonum.tables) and read everywhere else


def _fact_codes() -> Dict[int, str]:
    """Every literal a module would write if it restated a destination fact instead of reading
    ``ptonum.tables``: the codes of +-largest finite, +-infinity and the canonical NaN of each
    floating destination, the binary64 bits of each largest finite value, and the two-flag words
    (OF|NX, UF|NX).  Left out, because the same numbers are ordinary masks: all-ones values
    (E4M3's NaN 0x7F) and lone sign bits (HiF8's NaN 0x80)."""
    from fractions import Fraction

    import numpy as np

    from ptonum import tables

    facts: Dict[int, str] = {}
    for t, d in tables.DESTINATIONS.items():
        if d.integer:
            continue
        codes = [("largest finite", c) for c in d.largest] + [("infinity", c) for c in d.infinity or ()]
        codes.append(("canonical NaN", d.canonical_nan or 0))
        for what, code in codes:
            if code & (code + 1) and code != d.sign:  # not all-ones, not the sign bit
                facts[code] = f"{t.name} {what}"
        assert d.largest_value > Fraction(0)
        bits = int(np.array(float(d.largest_value), np.float64).view(np.uint64))
        facts[bits] = f"{t.name} largest finite value {d.largest_value} as binary64 bits"
    facts[tables.OF | tables.NX] = "flags OF|NX"
    facts[tables.UF | tables.NX] = "flags UF|NX"
    return facts


FACT_CODES = _fact_codes()
#: The modules that declare the facts, and the ones that legitimately hold the same numbers as
#: data of their own: conformance.gen writes boundary *inputs* (65504, 0x7F7FFFFF, ...) for the
#: vectors it generates; numtext sits below tables and names the quiet NaN of the formats text
#: is rounded to (FP64/FP19 among them, which are not destinations).
FACT_OWNERS = {"ptonum.tables", "ptonum.datatypes", "ptonum.flags", "ptonum.conformance.gen", "ptonum.numtext"}


def _restated_facts(source: str, where: str) -> List[str]:
    """Integer literals written in hex whose value is a destination fact (see :func:`_fact_codes`)."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value in FACT_CODES:
            text = ast.get_source_segment(source, node) or ""
            if text.lower().startswith("0x"):
                found.append(f"{where}:{node.lineno}: {text} is the {FACT_CODES[node.value]}; "
                             "read it from ptonum.tables")
    return found


def test_no_module_restates_a_destination_fact():
    scanned = [m for m in sorted(MODULES) if m not in FACT_OWNERS]
    assert {"ptonum.encode", "ptonum.kernels.postprocess", "ptonum.fpatr.element", "ptonum.tcvt"} <= set(scanned)
    found = [hit for m in scanned for hit in _restated_facts(MODULES[m][0].read_text(), m)]
    assert found == []


def test_the_fact_guard_finds_a_restated_fact():
    """The guard above is not vacuous: the facts it looks for include FP16's largest finite code,
    the HiF8 overflow codes and E4M3's 448, and a restated one is reported."""
    assert {0x7BFF, 0x7C00, 0x6E, 0xEF, 0x407C000000000000, 0x14} <= set(FACT_CODES)
    source = "def f(sat):\n    return 0x7BFF if sat else 31744\n"  # 31744 = 0x7C00 in decimal: not flagged
    assert [h.split(": ", 1)[0] for h in _restated_facts(source, "m")] == ["m:2"]


#: The shared tables both engines read, and the one module that may define each.
TABLE_DEFINITIONS = {
    "PreQuantMode": "ptonum.tables", "ModeInfo": "ptonum.tables", "MODE_TABLE": "ptonum.tables",
    "ASSIGNED_PRE_QUANT_CODES": "ptonum.tables", "Destination": "ptonum.tables",
    "TileKernelConfig": "ptonum.tables", "KERNEL_DST": "ptonum.tables", "KERNEL_ACC": "ptonum.tables",
    "FormatDescriptor": "ptonum.datatypes", "NumericFlags": "ptonum.flags", "RoundingMode": "ptonum.rounding",
}


def _top_level_definitions(module: str) -> Set[str]:
    """Classes defined and names assigned at the top level of ``module`` (imports excluded)."""
    names: Set[str] = set()
    for node in ast.parse(MODULES[module][0].read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_shared_tables_are_defined_once():
    """The mode table, the destination facts and the kernel codes are defined in the bottom layer
    only; every other module (fpatr.attributes re-exports them) imports them."""
    defined = {m: _top_level_definitions(m) for m in MODULES}
    for name, owner in TABLE_DEFINITIONS.items():
        assert name in defined[owner], (name, owner)
        others = sorted(m for m, names in defined.items() if name in names and m != owner)
        assert others == [], f"{name} is defined again in {others}; import it from {owner}"
    import ptonum.fpatr
    from ptonum import tables

    assert ptonum.fpatr.MODE_TABLE is tables.MODE_TABLE and ptonum.fpatr.PreQuantMode is tables.PreQuantMode
