"""The draft law of a tree as one object: :class:`TreeDraftLaw` (docs/trees.md §1, §1b).

A tree of drafts is drawn in one of two ways, and every tree function takes the way as one
argument, ``drafts``:

* a *shape* (:class:`~optaccept.tree.Shape`) whose nodes' children are filled by
  ``children`` ("topk", "swor" or "iid", :mod:`optaccept.tree._shape`):
  ``TreeDraftLaw((3, 2), "swor")``;
* ``k`` chains of ``length`` tokens drawn ``children="iid"`` (independently) or ``"swor"``
  (distinct first tokens, :mod:`optaccept.tree._draft`):
  ``TreeDraftLaw(length=2, k=3, children="swor")``.
"""

from __future__ import annotations

from typing import Any

from .._errors import InputError
from ._draft import DRAFT_LAWS, _check
from ._shape import Shape, as_shape, check_children

__all__ = ["TreeDraftLaw", "as_tree_law"]


class TreeDraftLaw:
    """The law of a draft tree: a shape filled node by node, or k chains.

    Parameters
    ----------
    shape : branching tuple, list of index paths, or Shape, optional
        The tree's shape (:func:`~optaccept.tree.as_shape`); leave it out for chains.
    children : {"topk", "swor", "iid"}, optional
        With ``shape``: how each node's children are filled (required).  For chains:
        ``"iid"`` (independent chains, the default) or ``"swor"`` (distinct first tokens
        drawn without replacement, each continued by one chain).
    k : int, optional
        Chains (default 1).  With ``shape`` it is the shape's number of leaves and need not
        be given.
    length : int, optional
        Tokens per chain (default 1); with ``shape`` it is the shape's depth.

    Attributes
    ----------
    shape : Shape or None
        The shape, None for chains.
    children : str
        How children (or chains) are drawn; what :class:`TreeResult` reports as ``drafts``.
    k : int
        Chains, or the shape's leaves.
    length : int
        Tokens per chain, or the shape's depth.

    Raises
    ------
    InputError
        Naming the argument that is refused: a missing ``children`` with ``shape``,
        ``length`` or a different ``k`` with ``shape``, a law out of its list, a length or
        k below 1.

    Examples
    --------
    >>> from optaccept import tree
    >>> tree.TreeDraftLaw(length=2, k=3, children="swor")
    TreeDraftLaw(length=2, k=3, children='swor')
    >>> law = tree.TreeDraftLaw((3, 2), "topk")
    >>> law.k, law.length
    (6, 2)
    """

    __slots__ = ("shape", "children", "k", "length")

    def __init__(
        self, shape: Any = None, children: str | None = None, k: int | None = None, *, length: int | None = None
    ) -> None:
        if shape is not None:
            shp = as_shape(shape)
            if children is None:
                raise InputError("children: give 'topk', 'swor' or 'iid' with shape")
            check_children(children)
            leaves = sum(1 for t in shp.paths if shp.branches(t) == 0)
            if length is not None:
                raise InputError(f"length: set by the shape (its depth, {shp.depth}); leave it out with shape")
            if k is not None and k != leaves:
                raise InputError(f"k: set by the shape (its {leaves} leaves), got {k!r}; leave it out with shape")
            self.shape, self.children, self.k, self.length = shp, children, leaves, shp.depth
            return
        if children is not None and children not in DRAFT_LAWS:
            raise InputError(f"children: chains are drawn {DRAFT_LAWS}, got {children!r} (give a shape for 'topk')")
        L, kk, law = _check(1 if length is None else length, 1 if k is None else k, children or "iid")
        self.shape, self.children, self.k, self.length = None, law, kk, L

    @property
    def is_chains(self) -> bool:
        """True for k chains, False for a shape."""
        return self.shape is None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeDraftLaw) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.shape, self.children, self.k, self.length)

    def __repr__(self) -> str:
        if self.shape is None:
            return f"TreeDraftLaw(length={self.length}, k={self.k}, children={self.children!r})"
        spec = self.shape.branching if self.shape.branching is not None else list(self.shape.paths)
        return f"TreeDraftLaw({spec!r}, {self.children!r})"

    def __reduce__(self) -> tuple:
        if self.shape is None:
            return (_chains_law, (self.length, self.k, self.children))
        return (TreeDraftLaw, (self.shape, self.children))


def _chains_law(length: int, k: int, children: str) -> TreeDraftLaw:
    return TreeDraftLaw(length=length, k=k, children=children)


def as_tree_law(drafts: Any, name: str = "drafts") -> TreeDraftLaw:
    """``drafts`` as a :class:`TreeDraftLaw` (None: one chain of one token, i.i.d.).

    Parameters
    ----------
    drafts : TreeDraftLaw or None
        The tree's draft law.
    name : str
        The argument's name, for the message.

    Returns
    -------
    TreeDraftLaw
        The law.

    Raises
    ------
    InputError
        Naming ``name`` when ``drafts`` is not a law.
    """
    if drafts is None:
        return TreeDraftLaw()
    if isinstance(drafts, TreeDraftLaw):
        return drafts
    if isinstance(drafts, Shape):
        raise InputError(f"{name}: a Shape needs its children's law: TreeDraftLaw(shape, children)")
    raise InputError(f"{name}: a tree.TreeDraftLaw (shape and children, or k chains of length tokens), got {drafts!r}")
