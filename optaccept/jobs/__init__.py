"""The main job (an application above the library): regenerate every figure and table.

``python -m optaccept.jobs [--quick] [--figures DIR] [--only core verifiers ...]``; one module
of this package per part (``core``, ``verifiers``, ``polyhedra``, ``sequence``, ``llm``,
``trees``), each with ``run(figures_dir, *, quick=False) -> list[Path]``.
"""

__all__ = []  # an application: no public names
