"""Conformance tools: vector-file schemas, ``check``, ``gen``, ``explain`` and ``compare``.

* :mod:`.schema` -- one schema per operation (= per vector file): columns,
  parsing, how to run the model on a batch of rows in either engine.
* :mod:`.check` -- verify vector files against the model.
* :mod:`.gen` -- write TestFloat-style vectors (boundary + random cases),
  expected columns from the model's reference engine.
* :mod:`.explain` -- the step-by-step trace of one element, lined up with the
  ASL functions.
* :mod:`.compare` -- run the tile operation and compare with a device dump.
"""

from __future__ import annotations

from .check import FileReport, Failure, check_file, check_parsed
from .schema import SCHEMAS, Schema, builtin_vector_files, builtin_vectors_dir, detect_schema, parse_file, schema_for

__all__ = [
    "SCHEMAS",
    "Schema",
    "schema_for",
    "detect_schema",
    "parse_file",
    "builtin_vectors_dir",
    "builtin_vector_files",
    "check_file",
    "check_parsed",
    "FileReport",
    "Failure",
]
