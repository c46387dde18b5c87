"""The ``optaccept`` command (an application above the library: nothing in the library
imports it).  :func:`main` is the console script; each analysis adds its sub-commands from a
module of this package (``llm``, ``polyhedra``, ``sequence``, ``verifiers``), with helpers
shared by all of them in ``_main``."""

from ._main import Parser, build_parser, main, nonnegative_int, positive_float, positive_int

__all__ = ["main", "build_parser", "Parser", "positive_int", "nonnegative_int", "positive_float"]
