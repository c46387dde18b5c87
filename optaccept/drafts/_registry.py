"""The registry of named draft laws, :data:`LAWS`, its capability flags, and :func:`law_from_name`."""

from __future__ import annotations

from typing import Any

from .._lib.validation import check_choice
from ._base import DraftLaw
from ._greedy import Greedy, SpecHub, TopK
from ._iid import IID
from ._without_replacement import WithoutReplacement

__all__ = ["LAWS", "CAPABILITIES", "law_names", "law_from_name"]

#: The draft laws by name: the one registry.  A feature that supports only some of them
#: asks :func:`law_names` for the laws with the capability it needs and passes those names
#: as ``allowed`` to :func:`law_from_name`.
LAWS: dict[str, type[DraftLaw]] = {
    "iid": IID,
    "swor": WithoutReplacement,
    "greedy": Greedy,
    "spechub": SpecHub,
    "topk": TopK,
}

#: The capability flags every law class carries (see :class:`DraftLaw`).
CAPABILITIES = ("takes_k", "distinct_drafts", "sequential", "batched")


def law_names(**flags: bool) -> tuple[str, ...]:
    """The names of :data:`LAWS` whose capability flags have the values given, in registry order.

    Parameters
    ----------
    **flags : bool
        Capability flags (:data:`CAPABILITIES`) and the value each must have, e.g.
        ``law_names(sequential=True)`` → ``("iid", "swor")``.  None given: every name.

    Returns
    -------
    tuple of str
        The matching names.

    Raises
    ------
    InputError
        If a flag is not one of :data:`CAPABILITIES`.

    Examples
    --------
    >>> from optaccept import drafts
    >>> drafts.law_names()
    ('iid', 'swor', 'greedy', 'spechub', 'topk')
    >>> drafts.law_names(sequential=True)  # the laws a draft tree can draw a node's children from
    ('iid', 'swor')
    >>> drafts.law_names(takes_k=False)
    ('spechub',)
    """
    for flag in flags:
        check_choice("flags", flag, CAPABILITIES)
    return tuple(name for name, cls in LAWS.items() if all(getattr(cls, f) == bool(v) for f, v in flags.items()))


def law_from_name(
    name: Any, q: Any, k: int = 2, *, allowed: tuple[str, ...] | None = None, arg: str = "drafts", **kw: Any
) -> DraftLaw:
    """The draft law called ``name`` on q with k drafts (a law that fixes k, ``"spechub"``,
    ignores it); ``allowed`` restricts the names (default: all of :data:`LAWS`), and a name
    outside it is refused with an :class:`InputError` naming ``arg``.

    Parameters
    ----------
    name : str
        A key of :data:`LAWS`: ``"iid"``, ``"swor"``, ``"greedy"``, ``"spechub"`` or ``"topk"``.
    q : array_like, shape (n,)
        Draft distribution.
    k : int
        Number of drafts (ignored by ``"spechub"``).
    allowed : tuple of str or None
        The names accepted here; None: every name of :data:`LAWS`.
    arg : str
        The argument name an error message names.
    **kw
        Passed on to the law's constructor (``normalize``).

    Returns
    -------
    DraftLaw
        The law, validated by its own constructor.

    Raises
    ------
    InputError
        If ``name`` is not one of the allowed names, or the law refuses q or k.

    Examples
    --------
    >>> import numpy as np, optaccept as oa
    >>> p = np.array([.40, .25, .15, .12, .08]); q = np.array([.30, .10, .35, .05, .20])
    >>> from optaccept import drafts
    >>> law = drafts.law_from_name("swor", q, k=2)
    >>> law, type(law) is oa.WithoutReplacement
    (WithoutReplacement(n=5, k=2), True)
    >>> drafts.law_from_name("spechub", q)  # fixes k = 2
    SpecHub(n=5)
    """
    check_choice(arg, name, tuple(LAWS) if allowed is None else allowed)
    cls = LAWS[name]
    return cls(q, k, **kw) if cls.takes_k else cls(q, **kw)
