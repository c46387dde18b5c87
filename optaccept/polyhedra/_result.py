"""What the exact polyhedral results share: their answers are exact, so ``std_err`` is None,
and ``method`` names how they were obtained (docs/reference.md, "Results")."""

from __future__ import annotations

from typing import Any

from .._lib.display import VOCABULARY, Tabular

__all__ = ["ExactResult", "RaysResult"]


class ExactResult(Tabular):
    """The vocabulary of an exact result: a subclass gives ``ok``, ``_method`` and either
    ``_value_of`` (the attribute that holds its headline number) or its own ``value``.

    ``std_err`` is None (nothing is estimated) and ``method`` is the class's ``_method``;
    :meth:`_vocabulary` starts the one record of ``to_pandas()`` and ``to_latex()``.
    """

    __slots__ = ()
    _method = ""
    _value_of = ""

    @property
    def value(self) -> Any:
        """The headline number: the attribute named by the class's ``_value_of``."""
        return getattr(self, self._value_of)

    @property
    def std_err(self) -> None:
        """None: the result is exact."""
        return None

    @property
    def method(self) -> str:
        """How the result was obtained."""
        return self._method

    def _vocabulary(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in VOCABULARY}


class RaysResult(ExactResult):
    """An exact double description: ``value`` is the number of extreme ``rays``."""

    __slots__ = ()
    _method = "double_description"

    @property
    def value(self) -> int:
        """The number of extreme rays."""
        return len(self.rays)  # type: ignore[attr-defined]
