"""The ``optaccept`` command (an application above the library: nothing in the library
imports it).  :func:`main` is the console script; each analysis adds its sub-commands from a
module of this package (``llm``, ``polyhedra``, ``sequence``, ``verifiers``), with helpers
shared by all of them in ``_main``."""

__all__ = []  # an application: no public names
