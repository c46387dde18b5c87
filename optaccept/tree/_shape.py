"""Tree shapes as engines draft them: :class:`Shape`, its engine formats and :func:`as_shape`
(docs/trees.md §1b).

A *shape* fixes which nodes a draft tree has; the draft model fills in their tokens.
It is given either as a branching tuple (b_1, …, b_L) — every node at depth d − 1 has
b_d children — or as a list of index paths in the Medusa/EAGLE "tree choices"
convention: (i, j) is the j-th child of the i-th child of the root, and the children of
every node are indexed 0 … b − 1.

``children`` says how the b children of a node u are filled:

``"topk"``
    the b most probable tokens under q(·|u), ties to the smaller id (EAGLE-2's
    expansion, Medusa's and Sequoia's static trees): the tree is a deterministic
    function of the draft model (with fewer than b tokens in the vocabulary, one child
    per token: the missing children and their subtrees are absent).
``"swor"``
    b tokens drawn one after another without replacement from q(·|u), independently
    across nodes (fewer when q(·|u) has fewer than b tokens: the missing children and
    their subtrees are absent).
``"iid"``
    b independent draws from q(·|u), independently across nodes.  Equal siblings stay
    separate nodes, each with its own subtree.

A drafted tree is a :class:`~optaccept.tree.ShapedTree`; its nodes are the shape's index
paths, and ``prefix(node)`` is the token string along the path.  The drafted trees, their
enumeration and their sampling live in :mod:`optaccept.tree._shaped_tree`.
"""

from __future__ import annotations

import ast
import html
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .._errors import InputError, MethodError
from .._lib.validation import check_choice

__all__ = ["Shape", "CHILDREN", "as_shape", "check_children", "topk_indices"]

CHILDREN = ("topk", "swor", "iid")
#: Engines whose parameters :meth:`Shape.to_engine` writes and :meth:`Shape.from_engine` reads.
ENGINES = ("vllm", "sglang", "trtllm")
Prefix = tuple[int, ...]
Path = tuple[int, ...]
#: largest shape accepted (nodes below the root)
MAX_NODES = 4096


class Shape:
    """A tree shape: the set of index paths of its nodes (the root ``()`` implied).

    Attributes
    ----------
    paths : tuple of tuple of int
        Every node but the root, by depth then lexicographically.
    depth : int
        The longest path (L).
    size : int
        Nodes below the root (the node budget N).
    meta : dict
        What made the shape, for shapes returned by :func:`optaccept.tree.best_tree`
        (strategy, value, tokens per step, cost); empty otherwise.

    Engine formats (each a round trip: ``Shape.from_vllm(shape.to_vllm()) == shape``):
    * :meth:`to_choices` / :meth:`from_choices` — the index paths as lists,
      ``[[0], [1], [0, 0], …]``: EAGLE's and Medusa's ``tree_choices``;
    * :meth:`to_vllm` / :meth:`from_vllm` — vLLM's ``speculative_token_tree``, the
      string of a Python list of tuples sorted by depth then lexicographically (vLLM
      reads it with ``ast.literal_eval`` and re-sorts it by ``(len(t), t)``:
      ``vllm/config/speculative.py`` of vllm-project/vllm at commit
      f19b16d95e4395790661f4835e4436bc3dd5d9c7; a chain of n tokens is
      ``str([(0,), (0, 0), …])`` there).  Pass ``num_speculative_tokens=shape.size``
      with it.
    * :meth:`to_eagle` / :meth:`from_eagle` — EAGLE's ``retrieve_indices`` matrix;
    * :meth:`to_sglang` / :meth:`from_sglang` — SGLang's ``retrieve_next_token`` and
      ``retrieve_next_sibling`` of one request;
    * :meth:`to_engine` / :meth:`from_engine` — the parameters of vLLM, TensorRT-LLM
      (``eagle_choices``) and SGLang (its EAGLE server arguments, for the shapes SGLang
      drafts statically), docs/trees.md §8c.
    * :meth:`from_layout` reads any of the tree layouts above (index paths, a vLLM string, a
      mapping of EAGLE's or SGLang's tensors), a branching tuple or a shape.

    ``print(shape)`` and Jupyter show its size and, for a :func:`optaccept.tree.best_tree`
    result, its values and vLLM's string.

    Examples
    --------
    >>> from optaccept import tree
    >>> shape = tree.Shape.from_choices([[0], [1], [0, 0]])  # two children of the root, one grandchild
    >>> shape.size, shape.depth, shape.paths
    (3, 2, ((0,), (1,), (0, 0)))
    >>> shape.to_vllm()
    '[(0,), (1,), (0, 0)]'
    >>> tree.Shape.from_vllm(shape.to_vllm()) == shape
    True
    """

    __slots__ = ("paths", "depth", "size", "_b", "branching", "meta")

    def __init__(
        self, paths: tuple[Path, ...], branching: tuple[int, ...] | None = None, meta: dict | None = None
    ) -> None:
        self.meta = {} if meta is None else meta
        self.paths = tuple(sorted(paths, key=lambda t: (len(t), t)))
        self.depth = max(len(t) for t in self.paths)
        self.size = len(self.paths)
        self.branching = branching
        b: dict[Path, int] = {}
        for t in self.paths:
            b[t[:-1]] = b.get(t[:-1], 0) + 1
        self._b = b

    def branches(self, u: Path) -> int:
        """Number of children of node u in the shape.

        Parameters
        ----------
        u : tuple of int
            A node, as its index path (``()``: the root).

        Returns
        -------
        int
            Its number of children (0 for a leaf or a path not in the shape).
        """
        return self._b.get(u, 0)

    def internal(self) -> list[Path]:
        """Nodes with children, root first (by depth, then lexicographically).

        Returns
        -------
        list of tuple of int
            Their index paths.
        """
        return [u for u in ((),) + self.paths if u in self._b]

    @property
    def is_chain(self) -> bool:
        return all(v == 1 for v in self._b.values())

    # engine formats ------------------------------------------------------
    def to_choices(self) -> list[list[int]]:
        """The index paths as lists, by depth then lexicographically (EAGLE/Medusa
        ``tree_choices``).

        Returns
        -------
        list of list of int
            One index path per node below the root.
        """
        return [list(t) for t in self.paths]

    @classmethod
    def from_choices(cls, choices: Any) -> Shape:
        """A shape from EAGLE/Medusa ``tree_choices`` (a list of index paths).

        Parameters
        ----------
        choices : iterable of sequence of int
            The index paths, e.g. ``[[0], [1], [0, 0]]``.

        Returns
        -------
        Shape
            The shape with these nodes.

        Raises
        ------
        InputError
            Naming ``choices`` and what is wrong."""
        if isinstance(choices, (str, bytes)) or not hasattr(choices, "__iter__"):
            raise InputError(f"choices: a list of index paths such as [[0], [1], [0, 0]], got {choices!r}")
        items = list(choices)
        if not items or not all(hasattr(t, "__iter__") and not isinstance(t, (str, bytes)) for t in items):
            raise InputError(f"choices: a non-empty list of index paths such as [[0], [1], [0, 0]], got {choices!r}")
        try:
            return as_shape([tuple(t) for t in items])
        except InputError as e:
            raise InputError("choices" + str(e)[len("shape") :]) from None

    def to_vllm(self) -> str:
        """vLLM's ``speculative_token_tree``: the string of the list of index-path tuples,
        by depth then lexicographically (the order vLLM sorts it into).

        Returns
        -------
        str
            E.g. ``"[(0,), (1,), (0, 0)]"``.
        """
        return str([tuple(t) for t in self.paths])

    @classmethod
    def from_vllm(cls, s: str) -> Shape:
        """A shape from vLLM's ``speculative_token_tree`` string (read, as vLLM does, with
        ``ast.literal_eval``).

        Parameters
        ----------
        s : str
            The option's value, e.g. ``"[(0,), (1,), (0, 0)]"``.

        Returns
        -------
        Shape
            The shape with these nodes.

        Raises
        ------
        InputError
            Naming ``s`` when it is not a Python literal list of index-path tuples or
            the paths do not form a tree."""

        if not isinstance(s, str):
            raise InputError(f"s: vLLM's speculative_token_tree string such as '[(0,), (1,), (0, 0)]', got {s!r}")
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise InputError(f"s: not a Python literal list of tuples: {s!r}") from None
        if not isinstance(value, (list, tuple)) or not all(isinstance(t, (tuple, list)) for t in value):
            raise InputError(f"s: a list of index-path tuples such as '[(0,), (1,), (0, 0)]', got {s!r}")
        try:
            return as_shape([tuple(t) for t in value])
        except InputError as e:
            raise InputError("s" + str(e)[len("shape") :]) from None

    def to_eagle(self) -> np.ndarray:
        """EAGLE's ``retrieve_indices``: one row per leaf, the node numbers on its path from the
        root 0 (node i ≥ 1 is the i-th index path by (length, path), as :attr:`paths` orders
        them), padded with −1, rows sorted with −1 read as larger than every node.

        Layout of SafeAILab/EAGLE ``eagle/model/utils.py`` (``generate_tree_buffers``), commit
        08dc06ccb428f2d3cf8380933ea50ed3e4178168.

        Returns
        -------
        ndarray of int64, shape (leaves, depth + 1)
            The ``retrieve_indices`` matrix.

        Examples
        --------
        >>> from optaccept import tree
        >>> tree.Shape.from_choices([[0], [1], [0, 0]]).to_eagle().tolist()  # leaves (0, 0) and (1,)
        [[0, 1, 3], [0, 2, -1]]
        """
        index = {p: i + 1 for i, p in enumerate(self.paths)}
        rows = [
            [0] + [index[p[:d]] for d in range(1, len(p) + 1)] + [-1] * (self.depth - len(p))
            for p in self.paths
            if p not in self._b
        ]
        big = self.size + 1
        rows.sort(key=lambda r: [x if x >= 0 else big for x in r])
        return np.array(rows, dtype=np.int64)

    @classmethod
    def from_eagle(cls, retrieve_indices: Any) -> Shape:
        """A shape from EAGLE's ``retrieve_indices`` (the inverse of :meth:`to_eagle`).

        The matrix keeps the tree, not the choices' indices: siblings come back numbered 0, 1,
        … in node order — the choices themselves when they have no gaps.  EAGLE numbers the
        nodes by (length, path); a matrix numbered otherwise is refused.

        Parameters
        ----------
        retrieve_indices : array_like of int, shape (leaves, depth + 1)
            One root-to-leaf path of node numbers per row, root 0 first, −1 padded.

        Returns
        -------
        Shape
            The tree's shape.

        Raises
        ------
        InputError
            Naming ``retrieve_indices`` when it is not such a matrix of some tree.

        Examples
        --------
        >>> from optaccept import tree
        >>> tree.Shape.from_eagle([[0, 1, 3], [0, 2, -1]]).paths
        ((0,), (1,), (0, 0))
        """
        name = "retrieve_indices"
        try:
            R = np.asarray(retrieve_indices, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{name}: must be an integer matrix [leaves, depth + 1]") from None
        if R.ndim != 2 or R.shape[0] < 1 or R.shape[1] < 2:
            raise InputError(f"{name}: must be an integer matrix [leaves, depth + 1], got shape {R.shape}")
        if np.any(R[:, 0] != 0):
            raise InputError(f"{name}: every row must start at the root, node 0")
        valid = R != -1
        if np.any(R < -1) or np.any(valid[:, 1:] & ~valid[:, :-1]):
            raise InputError(f"{name}: entries must be node numbers >= 0, then −1 padding")
        N = int(R.max())
        parent: dict[int, int] = {}
        for row in R:
            path = [int(x) for x in row if x != -1]
            for a, b in zip(path, path[1:]):
                if b == 0 or parent.setdefault(b, a) != a:
                    raise InputError(f"{name}: node {b} has two parents (not a tree)")
        missing = next((v for v in range(1, N + 1) if v not in parent), None)
        if missing is not None:
            raise InputError(f"{name}: node {missing} is on no row")
        out: list[Path] = [()]
        kids: dict[int, int] = {}
        for v in range(1, N + 1):  # EAGLE numbers parents before their children
            u = parent[v]
            if u >= v:
                raise InputError(f"{name}: node {v} is numbered before its parent {u} (not EAGLE's order)")
            out.append(out[u] + (kids.get(u, 0),))
            kids[u] = kids.get(u, 0) + 1
        if out[1:] != sorted(out[1:], key=lambda t: (len(t), t)):
            raise InputError(f"{name}: nodes are not numbered by (depth, path) as EAGLE sorts its tree choices")
        try:
            return as_shape(out[1:])
        except InputError as e:
            raise InputError(name + str(e)[len("shape") :]) from None

    def to_sglang(self) -> tuple[np.ndarray, np.ndarray]:
        """SGLang's tree tensors of one request, ``retrieve_next_token`` (first child of each
        node, −1 if none) and ``retrieve_next_sibling`` (next sibling, −1 if none), over the
        nodes 0 (the root, the last verified token), then :attr:`paths` in order; siblings are
        linked in index order.  (SGLang's *server arguments* are :meth:`to_engine`'s.)

        Layout of sgl-project/sglang's ``tree_speculative_sampling_target_only``
        (``sgl-kernel/csrc/speculative/speculative_sampling.cuh``), as its test builds it:
        ``sgl-kernel/tests/speculative/test_speculative_sampling.py``, commit
        120affb9613cc3f5bcd055ec09c7621d3ced0ebc.

        Returns
        -------
        next_token, next_sibling : ndarray of int64, shape (size + 1,)
            First child and next sibling of each node (−1: none).

        Examples
        --------
        >>> from optaccept import tree
        >>> nt, ns = tree.Shape.from_choices([[0], [1], [0, 0]]).to_sglang()
        >>> nt.tolist(), ns.tolist()  # nodes: root, (0,), (1,), (0, 0)
        ([1, 3, -1, -1], [-1, 2, -1, -1])
        """
        index = {(): 0} | {p: i + 1 for i, p in enumerate(self.paths)}
        nt = np.full(self.size + 1, -1, dtype=np.int64)
        ns = np.full(self.size + 1, -1, dtype=np.int64)
        for p in self.paths:
            if p[-1] == 0:
                nt[index[p[:-1]]] = index[p]
            else:
                ns[index[p[:-1] + (p[-1] - 1,)]] = index[p]
        return nt, ns

    @classmethod
    def from_sglang(cls, next_token: Any, next_sibling: Any) -> Shape:
        """A shape from SGLang's ``retrieve_next_token`` and ``retrieve_next_sibling`` of one
        request (the inverse of :meth:`to_sglang`): node 0 is the root, the others may be
        numbered in any order; the j-th node of a sibling list is child j.

        Parameters
        ----------
        next_token : array_like of int, shape (N,)
            First child of each node, or −1.
        next_sibling : array_like of int, shape (N,)
            Next sibling of each node, or −1.

        Returns
        -------
        Shape
            The tree's shape.

        Raises
        ------
        InputError
            Naming ``next_token, next_sibling`` when the arrays differ in length, hold entries
            other than −1 or node indices, or do not describe a tree rooted at node 0 with a
            node below it.

        Examples
        --------
        >>> from optaccept import tree
        >>> # SGLang's kernel test: the root's children are nodes 1 and 3, 1 → 2, 3 → 4 → 5
        >>> tree.Shape.from_sglang([1, 2, -1, 4, 5, -1], [-1, 3, -1, -1, -1, -1]).paths
        ((0,), (1,), (0, 0), (1, 0), (1, 0, 0))
        """
        name = "next_token, next_sibling"
        try:
            nt = np.asarray(next_token, dtype=np.int64).reshape(-1)
            ns = np.asarray(next_sibling, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{name}: must be integer arrays, one entry per node") from None
        N = nt.size
        if ns.size != N or N == 0:
            raise InputError(f"{name}: must have one entry per node, got {nt.size} and {ns.size}")
        if nt.min() < -1 or nt.max() >= N or ns.min() < -1 or ns.max() >= N:
            raise InputError(f"{name}: entries must be −1 or node indices in [0, {N})")
        out: dict[int, Path] = {0: ()}
        stack = [0]
        while stack:
            v = stack.pop()
            c, j = int(nt[v]), 0
            while c != -1:
                if c in out:
                    raise InputError(f"{name}: node {c} is reached twice (not a tree)")
                out[c] = out[v] + (j,)
                stack.append(c)
                c, j = int(ns[c]), j + 1
        missing = next((i for i in range(N) if i not in out), None)
        if missing is not None:
            raise InputError(f"{name}: node {missing} is not reached from the root")
        try:
            return as_shape([out[i] for i in range(1, N)])
        except InputError as e:
            raise InputError(name + str(e)[len("shape") :]) from None

    @classmethod
    def from_layout(cls, layout: Any) -> Shape:
        """A shape from any engine's tree layout: index paths (EAGLE/Medusa ``tree_choices``,
        :meth:`from_choices`), a vLLM ``speculative_token_tree`` string (:meth:`from_vllm`), a
        mapping holding EAGLE's ``"retrieve_indices"`` (:meth:`from_eagle`) or SGLang's
        ``"retrieve_next_token"`` and ``"retrieve_next_sibling"`` (:meth:`from_sglang`), a
        branching tuple, or a shape (returned as it is).  The shape a verifier's audit drafts
        (:func:`optaccept.audit.audit_tree`), whatever the layout it was written in.

        Parameters
        ----------
        layout : sequence of paths, str, mapping, tuple of int or Shape
            The tree in one of these layouts.

        Returns
        -------
        Shape
            The tree's shape.

        Raises
        ------
        InputError
            If ``layout`` is none of these layouts, or not a tree in its own.

        Examples
        --------
        >>> from optaccept import tree
        >>> tree.Shape.from_layout([[0], [1], [0, 0]]).paths  # EAGLE / Medusa tree_choices
        ((0,), (1,), (0, 0))
        >>> tree.Shape.from_layout("[(0,), (0, 0)]").size  # a vLLM speculative_token_tree
        2
        >>> tree.Shape.from_layout({"retrieve_indices": [[0, 1, 3], [0, 2, -1]]}).paths  # EAGLE
        ((0,), (1,), (0, 0))
        """
        if isinstance(layout, str):
            try:
                return cls.from_vllm(layout)
            except InputError as e:
                raise InputError("layout" + str(e)[len("s") :]) from None
        if isinstance(layout, Mapping):
            keys = set(layout)
            if keys == {"retrieve_indices"}:
                return cls.from_eagle(layout["retrieve_indices"])
            if keys == {"retrieve_next_token", "retrieve_next_sibling"}:
                return cls.from_sglang(layout["retrieve_next_token"], layout["retrieve_next_sibling"])
            raise InputError(
                "layout: a mapping must hold 'retrieve_indices' (EAGLE) or 'retrieve_next_token' and "
                f"'retrieve_next_sibling' (SGLang), got keys {sorted(map(str, keys))}"
            )
        try:
            return as_shape(layout)
        except InputError as e:
            raise InputError("layout" + str(e)[len("shape") :]) from None

    def to_engine(self, name: str, *, strict: bool = True) -> dict[str, Any]:
        """The engine parameters that draft this shape (docs/trees.md §8c).

        Parameters
        ----------
        name : {"vllm", "sglang", "trtllm"}
            ``"vllm"``: ``speculative_config`` entries ``speculative_token_tree`` (the string
            of :meth:`to_vllm`) and ``num_speculative_tokens`` (nodes).  ``"trtllm"``:
            ``EagleDecodingConfig`` entries ``eagle_choices`` (:meth:`to_choices`) and
            ``max_draft_len`` (depth); TensorRT-LLM sets ``max_total_draft_tokens`` to the
            number of choices itself.  ``"sglang"``: the server arguments
            ``speculative_num_steps``, ``speculative_eagle_topk`` and
            ``speculative_num_draft_tokens`` (nodes + 1: the root counts).
        strict : bool
            SGLang has no static tree option: it keeps ``topk`` beams, expands each into
            ``topk`` children per step and verifies the ``num_draft_tokens − 1`` candidates of
            largest draft path probability.  That tree is the same in every context only for a
            chain (``topk = 1``), one level (b,) and two full levels (b, b); for any other
            shape ``strict=True`` raises.  ``strict=False`` is for running SGLang on a budget
            like this shape's anyway: it returns the parameters of SGLang's *dynamic* tree of the
            same nodes and depth (``topk`` the largest branching, raised until the candidates
            cover the nodes) — a different tree, which changes with the context and is not this
            shape — and says so in the dict: its key ``"sglang_tree"`` states which tree SGLang
            will draft (remove that key before passing the rest to SGLang;
            :meth:`from_engine` refuses these parameters, as they give no static shape).

        Returns
        -------
        dict
            Parameter name → value, ready to pass to the engine; for SGLang with
            ``strict=False`` and a shape it cannot draft statically, also ``"sglang_tree"``, the
            statement of the dynamic tree it drafts instead (not an SGLang parameter).

        Raises
        ------
        InputError
            An unknown engine ``name``.
        MethodError
            ``"sglang"`` with ``strict=True`` for a shape SGLang cannot draft statically.

        Examples
        --------
        >>> from optaccept import tree
        >>> tree.Shape.from_choices([[0], [1], [0, 0], [1, 0]]).to_engine("sglang")
        Traceback (most recent call last):
        ...
        optaccept._errors.MethodError: name 'sglang': SGLang drafts a dynamic tree; ...
        >>> params = tree.Shape.from_choices([[0], [1], [0, 0], [1, 0]]).to_engine("sglang", strict=False)
        >>> params["speculative_num_steps"], params["speculative_eagle_topk"], params["speculative_num_draft_tokens"]
        (2, 2, 5)
        >>> params["sglang_tree"][:63]
        "SGLang's dynamic tree, not Shape([(0,), (1,), (0, 0), (1, 0)]):"
        """
        if name == "vllm":
            return {"speculative_token_tree": self.to_vllm(), "num_speculative_tokens": self.size}
        if name == "trtllm":
            return {"eagle_choices": self.to_choices(), "max_draft_len": self.depth}
        if name != "sglang":
            check_choice("name", name, ENGINES)
        root = self.branches(())
        if self.is_chain:
            steps, topk = self.depth, 1
        elif self.depth == 1 or (self.depth == 2 and self == as_shape((root, root))):
            steps, topk = self.depth, root
        elif strict:
            raise MethodError(
                f"name 'sglang': SGLang drafts a dynamic tree; a static one only for a chain, (b,) or (b, b), "
                f"not {self!r}; pass strict=False for the parameters of its dynamic tree of {self.size} nodes"
            )
        else:
            steps, topk = self.depth, max(self._b.values())
            while topk + (steps - 1) * topk * topk < self.size:
                topk += 1
            return {
                "speculative_num_steps": steps,
                "speculative_eagle_topk": topk,
                "speculative_num_draft_tokens": self.size + 1,
                "sglang_tree": (
                    f"SGLang's dynamic tree, not {self!r}: the {self.size} of largest draft path probability "
                    f"among the candidates of {topk} beams x {topk} children over {steps} steps, chosen anew "
                    f"in every context (depth at most {steps}); its static parameters reproduce only a chain, "
                    "(b,) or (b, b)"
                ),
            }
        return {
            "speculative_num_steps": steps,
            "speculative_eagle_topk": topk,
            "speculative_num_draft_tokens": self.size + 1,
        }

    @classmethod
    def from_engine(cls, name: str, params: Any) -> Shape:
        """The shape an engine drafts with ``params`` (the inverse of :meth:`to_engine`).

        ``"vllm"`` reads ``speculative_token_tree``; ``"trtllm"`` reads ``eagle_choices`` (a
        list, or a string read as TensorRT-LLM does, with ``ast.literal_eval``); ``"sglang"``
        reads its three server arguments, and refuses those for which SGLang's tree depends
        on the context.

        Parameters
        ----------
        name : {"vllm", "sglang", "trtllm"}
            The engine.
        params : mapping
            Its parameters, as :meth:`to_engine` writes them.

        Returns
        -------
        Shape
            The shape the engine drafts.

        Raises
        ------
        InputError
            An unknown engine ``name``, a missing or malformed parameter.
        MethodError
            SGLang parameters that give a dynamic tree.
        """

        check_choice("name", name, ENGINES)
        if not isinstance(params, Mapping):
            raise InputError(f"params: a dict of {name}'s parameters, got {type(params).__name__}")
        keys = {
            "vllm": ("speculative_token_tree",),
            "trtllm": ("eagle_choices",),
            "sglang": ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"),
        }[name]
        missing = [k for k in keys if k not in params]
        if missing:
            raise InputError(f"params: {name} needs {', '.join(missing)}")
        if name == "vllm":
            try:
                return cls.from_vllm(params["speculative_token_tree"])
            except InputError as e:
                raise InputError("params['speculative_token_tree']" + str(e)[len("s") :]) from None
        if name == "trtllm":
            choices = params["eagle_choices"]
            if isinstance(choices, str):
                try:
                    choices = ast.literal_eval(choices.replace(" ", ""))
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    raise InputError(f"params['eagle_choices']: not a Python literal list: {choices!r}") from None
            try:
                return cls.from_choices(choices)
            except InputError as e:
                raise InputError("params['eagle_choices']" + str(e)[len("choices") :]) from None
        vals = {}
        for k in keys:
            v = params[k]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"params['{k}']: a positive integer, got {v!r}")
            vals[k] = int(v)
        steps, topk = vals["speculative_num_steps"], vals["speculative_eagle_topk"]
        n = vals["speculative_num_draft_tokens"] - 1
        if topk == 1:  # SGLang sets num_draft_tokens = steps + 1 itself
            return as_shape((1,) * steps)
        candidates = topk + (steps - 1) * topk * topk
        if not 1 <= n <= candidates:
            raise InputError(
                f"params['speculative_num_draft_tokens']: between 2 and {candidates + 1} "
                f"(1 + topk + (steps - 1) topk^2), got {n + 1}"
            )
        if steps == 1 or n == 1:  # one node: the draft's top token, whatever the steps
            return as_shape((n,))
        if steps == 2 and n == candidates:
            return as_shape((topk, topk))
        raise MethodError(
            f"params: SGLang drafts a dynamic tree with steps={steps}, topk={topk}, num_draft_tokens={n + 1} "
            "(the nodes kept depend on the draft's probabilities)"
        )

    def _summary(self) -> list[tuple[str, str]]:
        """(label, value) rows: size, depth and, for a best tree, what it is worth."""
        rows = [("nodes", str(self.size)), ("depth", str(self.depth))]
        if self.branching is not None:
            rows.append(("branching", str(self.branching)))
        m = self.meta
        if "strategy" in m:
            children, verifier = m.get("children", "topk"), m.get("verifier", "target_only")
            rows.append(("strategy", f"{m['strategy']} ({children} children, {verifier})"))
        for key, label in (
            ("value", "accepted tokens per step"),
            ("tokens_per_step", "tokens per step"),
            ("cost", "seconds per verify"),
            ("tokens_per_second", "tokens per second"),
        ):
            if key in m:
                rows.append((label, f"{float(m[key]):.6g}"))
        if "context" in m:
            rows.append(("context", str(m["context"])))
        return rows

    def _repr_html_(self) -> str:
        """Jupyter: a table of :meth:`__str__`'s lines, the vLLM string last."""

        rows = [(k, html.escape(v)) for k, v in self._summary()]
        rows.append(("vLLM speculative_token_tree", f"<code>{html.escape(self.to_vllm())}</code>"))
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>{v}</td></tr>"
            for k, v in rows
        )
        return f"<table><caption style='text-align:left'>tree.Shape</caption>{body}</table>"

    def __str__(self) -> str:
        """Size, depth, for a best tree its strategy and values, and vLLM's string."""
        lines = [f"tree.Shape: {self.size} nodes, depth {self.depth}"]
        lines += [f"  {k}: {v}" for k, v in self._summary()[2:]]
        lines.append(f"  vLLM speculative_token_tree: {self.to_vllm()}")
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shape) and self.paths == other.paths

    def __hash__(self) -> int:
        return hash(self.paths)

    def __repr__(self) -> str:
        if self.branching is not None:
            return f"Shape({self.branching})"
        return f"Shape({list(self.paths)})"


def as_shape(spec: Any) -> Shape:
    """A :class:`Shape` from a branching tuple (b_1, …, b_L) or a list of index paths.

    Parameters
    ----------
    spec : tuple of int, iterable of sequence of int, or Shape
        The branching tuple, the index paths, or a shape (returned as it is).

    Returns
    -------
    Shape
        The shape.

    Raises
    ------
    InputError
        Naming ``shape`` and what is wrong (a missing parent, children not indexed
        0 … b − 1, negative or non-integer entries, more than 4,096 nodes).
    """
    if isinstance(spec, Shape):
        return spec
    if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
        raise InputError(f"shape: a branching tuple such as (3, 2, 1) or a list of index paths, got {spec!r}")
    items = list(spec)
    if not items:
        raise InputError("shape: must have at least one node")

    def is_int(v: Any) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

    if all(is_int(v) for v in items):
        bs = tuple(int(v) for v in items)
        if any(v < 1 for v in bs):
            raise InputError(f"shape: a branching tuple needs every b_d >= 1, got {bs}")
        total, level = 0, 1
        for v in bs:
            level *= v
            total += level
            if total > MAX_NODES:
                raise InputError(f"shape: {bs} has more than {MAX_NODES} nodes")
        paths: list[Path] = []
        level_paths: list[Path] = [()]
        for v in bs:
            level_paths = [u + (j,) for u in level_paths for j in range(v)]
            paths.extend(level_paths)
        return Shape(tuple(paths), branching=bs)
    paths_set: set[Path] = set()
    for t in items:
        if isinstance(t, (str, bytes)) or not hasattr(t, "__iter__"):
            raise InputError(f"shape: each index path must be a tuple of integers, got {t!r}")
        tt = tuple(t)
        if not tt or not all(is_int(v) and v >= 0 for v in tt):
            raise InputError(f"shape: each index path must be a non-empty tuple of integers >= 0, got {t!r}")
        tt = tuple(int(v) for v in tt)
        if tt in paths_set:
            raise InputError(f"shape: index path {tt} is listed twice")
        paths_set.add(tt)
    if len(paths_set) > MAX_NODES:
        raise InputError(f"shape: more than {MAX_NODES} nodes")
    kids: dict[Path, list[int]] = {}
    for t in paths_set:
        if len(t) > 1 and t[:-1] not in paths_set:
            raise InputError(f"shape: node {t} has no parent {t[:-1]} in the list")
        kids.setdefault(t[:-1], []).append(t[-1])
    for u, js in kids.items():
        if sorted(js) != list(range(len(js))):
            raise InputError(f"shape: the children of node {u} must be indexed 0..{len(js) - 1}, got {sorted(js)}")
    return Shape(tuple(paths_set))


def check_children(children: Any) -> str:
    check_choice("children", children, CHILDREN)
    return children


def topk_indices(law: np.ndarray, b: int) -> list[int]:
    """The b most probable tokens, ties to the smaller id (a stable sort of −law)."""
    law = np.asarray(law)
    order = np.argsort(-law, kind="stable")
    return [int(x) for x in order[: min(b, law.size)]]


def iter_paths(shape: Shape) -> Iterator[Path]:
    yield ()
    yield from shape.paths
