"""Accepted tokens per step on stored draft trees of a real pair: a table and a figure.

The input is one :class:`optaccept.real.DraftTrees` file per draft law (k chains of
``length`` tokens after each prompt, with the target's and the draft's laws at every
node).  A tree stored with k chains of L tokens also gives, cut to its first k' ≤ k
chains and their first L' ≤ L tokens, a sample of the draft law with k' and L', so one
file fills the whole (k, length) grid.

* L = 1: every cell is exact per prompt (token-level RRS with and without
  replacement — traversal is RRS without replacement at one token, its root rate
  staying 1 —, batch SD of Yin et al. (NeurIPS 2024, arXiv 2411.00841), and the
  optimum α* of the root's draft law), averaged over the trees' prompts.
* L ≥ 2: Rao–Blackwellised averages (docs/trees.md §5) over the same trees; the
  optimum for k = 1 is the block value (Sun et al., arXiv 2403.10444: block
  verification is optimal for one chain); elsewhere the upper bound of docs/trees.md
  §4b, estimated on the same trees.

Every per-tree value is computed from the compressed rows without densifying them: the
sampled verifiers in one pass over the trees (each tree's laws read and checked once for all
its cells), the bound's terms for every tree and length at once, and the one-token values on
each prompt root's support (``tests/test_tree_table_values.py`` checks each against the
per-tree functions fed from dense rows).

Standard errors are clustered by prompt (the trees of one prompt share it), and every
comparison of verifiers is a paired difference on the same trees
(:attr:`TreeTable.differences`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._display import Estimate, Tabular, html_table, latex_table, markdown_table
from .._errors import InputError
from .._limits import show_progress
from .._statistics import cluster_means
from .._statistics import clustered_mean as _clustered
from .._statistics import std_err as sample_std_err
from ..drafts import IID, WithoutReplacement
from ..optimal import optimal_acceptance
from ..tree._bounds import _Pi
from ..tree._checks import PER_TREE
from ..tree._draft import DraftTree
from ..tree._models import Model
from ._stored import DraftTrees

__all__ = ["TreeTable", "tree_table", "VERIFIER_NAMES", "SERIES_STYLES"]

#: Paper-ready names of the rows of a :class:`TreeTable`, by (verifier, draft law).
VERIFIER_NAMES = {
    ("token", "iid"): "token-level RRS, i.i.d. chains (SpecInfer)",
    ("token", "swor"): "token-level RRS, without replacement",
    ("block", "iid"): "block verification (Sun et al.)",
    ("traversal", "swor"): "traversal verification (Weng et al.)",
    ("batch", "iid"): "batch SD (Yin et al.), exact",
    ("optimal", "iid"): "optimal lossless verifier, i.i.d. chains",
    ("optimal", "swor"): "optimal lossless verifier, without replacement",
    ("bound", "iid"): "upper bound (§4b), i.i.d. chains",
    ("bound", "swor"): "upper bound (§4b), without replacement",
}
#: Marker/line style and colour of each (verifier, draft law) in plots.
SERIES_STYLES = {
    ("token", "iid"): ("o-", "C0"),
    ("token", "swor"): ("s-", "C1"),
    ("block", "iid"): ("D", "C2"),
    ("traversal", "swor"): ("^-", "C3"),
    ("batch", "iid"): ("x", "k"),
    ("optimal", "iid"): ("v--", "C0"),
    ("optimal", "swor"): ("v--", "C1"),
    ("bound", "iid"): ("1:", "C0"),
    ("bound", "swor"): ("2:", "C1"),
}


class TreeTable(Tabular):
    """Rows ``{drafts, verifier, name, k, length, value, std_err, trees, method}``.

    In the results' vocabulary ``value`` and ``std_err`` are those columns as arrays, one
    entry per row of :meth:`to_pandas` (``std_err`` NaN where a row is exact), ``method``
    the rows' methods joined by "; ", ``ok`` says every value is finite.

    ``method`` is ``"sampled"`` (Rao–Blackwellised mean over the stored trees),
    ``"exact per prompt"`` (a closed form at the root, averaged over the prompts) or
    ``"= block (k = 1)"``.  Export with :meth:`to_markdown`, :meth:`to_csv`,
    :meth:`to_latex`; plot with :func:`optaccept.plots.plot_accepted_tokens`.

    Parameters
    ----------
    rows : list of dict
        The table's rows.
    meta : dict, optional
        Provenance of the values (models, prompts, trees).
    differences : list of dict, optional
        Paired differences on the same trees: ``{drafts, k, length, a, b, value, std_err}``
        (a − b).
    """

    def __init__(
        self, rows: list[dict[str, Any]], meta: dict[str, Any] | None = None, differences: list | None = None
    ) -> None:
        self.rows = rows
        self.meta = dict(meta or {})
        #: paired differences on the same trees: {drafts, k, length, a, b, value, std_err} (a − b)
        self.differences = list(differences or [])

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def value(self) -> np.ndarray:
        """The ``value`` column, one entry per row."""
        return np.array([float(r["value"]) for r in self.rows])

    @property
    def std_err(self) -> np.ndarray:
        """The ``std_err`` column, one entry per row (NaN where the row is exact)."""
        return np.array([np.nan if r["std_err"] is None else float(r["std_err"]) for r in self.rows])

    @property
    def method(self) -> str:
        """The rows' methods, joined by "; "."""
        return "; ".join(sorted({str(r["method"]) for r in self.rows}))

    @property
    def ok(self) -> bool:
        """Whether every value is finite."""
        return bool(np.isfinite(self.value).all())

    def _records(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    def __repr__(self) -> str:
        ks = sorted({r["k"] for r in self.rows})
        ls = sorted({r["length"] for r in self.rows})
        return f"TreeTable({len(self.rows)} rows, k={ks}, length={ls})"

    def get(self, verifier: str, drafts: str, k: int, length: int) -> dict[str, Any]:
        """The row of one cell (``KeyError`` when the verifier does not apply there).

        Parameters
        ----------
        verifier, drafts : str
            The series.
        k, length : int
            The number of chains and their length.

        Returns
        -------
        dict
            The row.

        Raises
        ------
        KeyError
            If the table has no such row.
        """
        for r in self.rows:
            if (r["verifier"], r["drafts"], r["k"], r["length"]) == (verifier, drafts, k, length):
                return r
        raise KeyError(f"no row for verifier={verifier!r}, drafts={drafts!r}, k={k}, length={length}")

    def series(self) -> list[tuple[str, str]]:
        """(verifier, drafts) pairs present, in display order.

        Returns
        -------
        list of (str, str)
            The series of the table.
        """
        seen = dict.fromkeys((r["verifier"], r["drafts"]) for r in self.rows)
        return [s for s in SERIES_STYLES if s in seen]

    @staticmethod
    def _cell(r: dict[str, Any] | None, latex: bool = False) -> str:
        if r is None:
            return ""
        text = str(Estimate(r["value"], r["std_err"] or 0.0, 3))  # never "± 0.000"
        return text.replace("±", r"$\pm$") if latex else text

    def _grid(self) -> tuple[list[tuple[int, int]], list[tuple[str, str]]]:
        cols = sorted({(r["length"], r["k"]) for r in self.rows})
        return cols, self.series()

    def _lookup(self) -> dict[tuple, dict[str, Any]]:
        return {(r["verifier"], r["drafts"], r["length"], r["k"]): r for r in self.rows}

    def _body(self, latex: bool = False) -> tuple[list[str], list[list[str]]]:
        cols, series = self._grid()
        look = self._lookup()
        header = ["L", "k"] + [VERIFIER_NAMES[s] for s in series]
        rows = [
            [str(L), str(k)] + [self._cell(look.get((v, d, L, k)), latex) or "–" for v, d in series] for L, k in cols
        ]
        return header, rows

    def to_markdown(self) -> str:
        """One row per (length L, number of chains k), one column per verifier; value ± s.e.

        Returns
        -------
        str
            The Markdown table.
        """

        return markdown_table(*self._body())

    def to_latex(self, caption: str = "Expected draft tokens accepted per step (± standard error).") -> str:
        """The values of :meth:`to_markdown` as a booktabs LaTeX ``table`` that fits a page: a
        row per (length L, verifier), a column per number of chains k.

        Parameters
        ----------
        caption : str
            The table's caption (LaTeX).

        Returns
        -------
        str
            The ``table`` environment.
        """

        cols, series = self._grid()
        look = self._lookup()
        ks = sorted({k for _, k in cols})
        rows = []
        for L in sorted({L for L, _ in cols}):
            for v, d in series:
                cells = [look.get((v, d, L, k)) for k in ks]
                if any(c is not None for c in cells):
                    rows.append(
                        [str(L), VERIFIER_NAMES[(v, d)]]
                        + [None if c is None else Estimate(c["value"], c["std_err"] or 0.0, 3) for c in cells]
                    )
        header = ["$L$", "verifier"] + [f"$k = {k}$" for k in ks]
        return latex_table(header, rows, caption=caption, label="tab:trees-accepted-tokens")

    def differences_markdown(self) -> str:
        """Paired differences a − b on the same trees, ± their standard errors clustered by prompt.

        Returns
        -------
        str
            The Markdown table, one row per difference.
        """

        rows = [
            [
                d["drafts"],
                str(d["length"]),
                str(d["k"]),
                f"{d['a']} − {d['b']}",
                str(Estimate(d["value"], d["std_err"], 3)),
            ]
            for d in self.differences
        ]
        return markdown_table(["draft law", "L", "k", "difference", "tokens/step ± s.e."], rows)

    def differences_csv(self, path: str | Path) -> Path:
        """The paired differences as CSV (numeric columns).

        Parameters
        ----------
        path : str or pathlib.Path
            The file written.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        path = Path(path)
        fields = ["drafts", "length", "k", "a", "b", "value", "std_err"]
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for d in self.differences:
                w.writerow({f: d[f] for f in fields})
        return path

    def to_csv(self, path: str | Path) -> Path:
        """The rows as CSV.

        Parameters
        ----------
        path : str or pathlib.Path
            The file written.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        path = Path(path)
        fields = ["drafts", "verifier", "name", "k", "length", "value", "std_err", "trees", "prompts", "method"]
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for r in self.rows:
                w.writerow({f: r[f] for f in fields})
        return path

    def _repr_html_(self) -> str:
        header, rows = self._body()
        return html_table(header, rows, title="Expected draft tokens accepted per step (± standard error)")


def _prompt_roots(trees: Any) -> dict[str, Any]:
    """p and q at the root of the first tree of each prompt, each on its own support
    (tokens with p > 0 or q > 0: every one-token value ignores tokens with p = q = 0), and
    each tree's prompt row."""
    roots = np.flatnonzero(np.asarray(trees.parent) < 0)
    prompts, first, of_tree = np.unique(trees.prompt_index, return_index=True, return_inverse=True)
    sparse = trees._rows
    rows = [sparse.compact([r], sparse.support([r])) for r in roots[first]]
    return {"p": [p[0] for p, _ in rows], "q": [q[0] for _, q in rows], "of_tree": of_tree, "prompts": prompts}


def _exact_root_values(roots: dict[str, Any], drafts: str, k: int, cache: dict) -> dict[str, np.ndarray]:
    """One-token values per prompt: token-level RRS (= traversal and block at one token),
    the optimum α* and, for i.i.d. drafts, Yin et al.'s batch SD (cached per law and k)."""
    key = (id(roots), drafts, k)
    if key not in cache:
        cache[key] = _root_values(roots, drafts, k)
    return cache[key]


def _root_values(roots: dict[str, Any], drafts: str, k: int) -> dict[str, np.ndarray]:
    from ..sequence import batch_rejection_probability
    from ..verifiers import RRS, RRSWithoutReplacement

    p, q = roots["p"], roots["q"]
    rule = RRS() if drafts == "iid" or k == 1 else RRSWithoutReplacement()
    law = IID if drafts == "iid" else WithoutReplacement
    out = {
        "token": np.array([rule.acceptance(pi, qi, k=k) for pi, qi in zip(p, q, strict=True)]),
        "optimal": np.array([float(optimal_acceptance(pi, law(qi, k)).value) for pi, qi in zip(p, q, strict=True)]),
    }
    if k == 1:
        out["block"] = out["token"]
    if drafts == "swor" and k > 1:
        out["traversal"] = out["token"]  # at one token traversal's root rate stays 1: it is RRS-WOR
    if drafts == "iid":
        out["batch"] = np.array([1 - batch_rejection_probability(pi, qi, k) for pi, qi in zip(p, q, strict=True)])
    return out


def _bound_values(f: Any, k: int, L: int, roots: dict[str, Any], cache: dict) -> np.ndarray:
    """Per-tree values of tree.upper_bound (docs/trees.md §4b) on the stored trees cut to
    k chains of L tokens: α* of the root's law plus the depth ≥ 2 terms of
    :func:`optaccept.tree.tree_bound_terms`, computed for every tree at once."""
    alpha1 = _exact_root_values(roots, f.drafts, k, cache)["optimal"]
    key = ("bound terms", id(f), k)
    if key not in cache:
        cache[key] = _bound_terms_all(f, k, cache)
    terms = cache[key]
    return alpha1[roots["of_tree"]] + terms[:, 2 : L + 1].sum(axis=1)


def _node_laws(f: Any, cache: dict) -> dict[str, np.ndarray]:
    """Per node (depth ≥ 1): p(w) and q(w), the products of the conditionals p(x | parent)
    and q(x | parent) from the root (rows renormalised), read from the sparse rows."""
    key = ("node laws", id(f))
    if key in cache:
        return cache[key]
    rows = f._rows
    s_p, s_q = rows.row_sums()
    parent, depth = np.asarray(f.parent), np.asarray(f.depth)
    inner = parent >= 0
    t, d = rows.values_at(parent[inner], np.asarray(f.token)[inner])
    p_cond = np.zeros(f.n_nodes)
    q_cond = np.zeros(f.n_nodes)
    p_cond[inner] = t.astype(np.float64) / s_p[parent[inner]]
    q_cond[inner] = d.astype(np.float64) / s_q[parent[inner]]
    pw = np.ones(f.n_nodes)
    qw = np.ones(f.n_nodes)
    for level in range(1, int(depth.max(initial=0)) + 1):  # left to right along each path
        at = np.flatnonzero(depth == level)
        pw[at] = pw[parent[at]] * p_cond[at]
        qw[at] = qw[parent[at]] * q_cond[at]
    cache[key] = {"pw": pw, "qw": qw, "q_cond": q_cond}
    return cache[key]


def _root_inclusions(f: Any, k: int, cache: dict) -> np.ndarray:
    """Per depth-1 node: P(its token is among k draws without replacement from the root's
    q) (:class:`optaccept.tree._bounds._Pi`), once per distinct root row and token."""

    rows = f._rows
    parent, depth, token = np.asarray(f.parent), np.asarray(f.depth), np.asarray(f.token)
    out = np.zeros(f.n_nodes)
    laws: dict[bytes, tuple[Any, np.ndarray]] = cache.setdefault(("root laws", id(f)), {})
    done: dict[tuple[bytes, int, int], float] = cache.setdefault(("root inclusions", id(f)), {})
    for j in np.flatnonzero(depth == 1).tolist():
        r = int(parent[j])
        lo, hi = int(rows.indptr[r]), int(rows.indptr[r + 1])
        rid = rows.indices[lo:hi].tobytes() + rows.draft_values[lo:hi].tobytes()
        if rid not in laws:  # the root's q on its support
            lo_hi = slice(lo, hi)
            cols = rows.indices[lo_hi][rows.draft_values[lo_hi] > 0].astype(np.int64)
            q = rows.compact([r], rows.indices[lo_hi])[1][0][rows.draft_values[lo_hi] > 0]
            laws[rid] = (_Pi(lambda pre, q=q: q, None, "swor", 1, k), cols)
        pi, cols = laws[rid]
        x = int(token[j])
        where = int(np.searchsorted(cols, x))
        if where >= cols.size or cols[where] != x:
            out[j] = 0.0
            continue
        if (rid, x, k) not in done:
            done[(rid, x, k)] = pi.incl((), where, k)
        out[j] = done[(rid, x, k)]
    return out


def _bound_terms_all(f: Any, k: int, cache: dict) -> np.ndarray:
    """(trees, length + 1): Σ_{w ∈ tree, |w| = d} min(1, p(w)/π(w)) for every stored tree cut
    to its first k chains (column d; columns 0 and 1 zero), π(w) = P(w is a node of a
    drawn tree) as in :func:`optaccept.tree.tree_bound_terms`."""
    laws = _node_laws(f, cache)
    pw = laws["pw"]
    if f.drafts == "iid":
        with np.errstate(divide="ignore"):  # q(w) = 1: π = 1
            pi = -np.expm1(k * np.log1p(-np.minimum(laws["qw"], 1.0))) if k > 1 else laws["qw"]
    else:
        parent, depth = np.asarray(f.parent), np.asarray(f.depth)
        pi = _root_inclusions(f, k, cache)
        for level in range(2, int(depth.max(initial=0)) + 1):
            at = np.flatnonzero(depth == level)
            pi[at] = pi[parent[at]] * laws["q_cond"][at]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(pw > 0, np.minimum(1.0, pw / pi), 0.0)
    out = np.zeros((f.n_trees, f.length + 1))
    for d in range(2, f.length + 1):
        nodes = np.sort(np.asarray(f.chains_nodes)[:, :k, d - 1], axis=1)
        first = np.ones(nodes.shape, dtype=bool)
        first[:, 1:] = nodes[:, 1:] != nodes[:, :-1]  # each node once, however many chains pass it
        out[:, d] = np.where(first, term[nodes], 0.0).sum(axis=1)
    return out


def _cell_verifiers(drafts: str, k: int) -> tuple[str, ...]:
    """Per-tree verifiers of a sampled cell: token-level RRS, block (one chain) and
    traversal (without replacement)."""
    return ("token",) + (("block",) if k == 1 else ()) + (("traversal",) if drafts == "swor" else ())


def _tree_laws(f: Any, i: int) -> tuple[Any, Any, dict[int, int]]:
    """Tree ``i``'s target and draft laws as checked, cached models on its compact
    vocabulary (as ``as_model(f.models(i, compact=True)[j]).cached()``, the rows checked
    at once), and the map from token to compact index."""

    index = f.prefixes(i)
    nodes = list(index.values())
    keep = f._rows.support(nodes)  # f.vocabulary(i)
    new = {int(t): j for j, t in enumerate(keep.tolist())}
    keys = [tuple(new[t] for t in key) for key in index]
    out = []
    for side, rows in zip(("target", "draft"), f._rows.compact(nodes, keep), strict=True):
        if not np.isfinite(rows).all() or (rows < 0).any():
            raise InputError(f"trees: the {side} rows of tree {i} hold a negative, NaN or infinite entry, or sum to 0")

        def missing(prefix: tuple[int, ...], side: str = side) -> np.ndarray:
            raise KeyError(f"prefix {prefix}: not a node of the stored {side} rows of tree {i}")

        model = Model(missing, side)
        model.n, model.exact = keep.size, False
        cached = model.cached()
        for key, row in zip(keys, rows, strict=True):
            total = float(row.sum())
            if total != 1.0:  # as optaccept's distribution check does
                row = row / total
            row.setflags(write=False)
            cached.memo[key] = row
        out.append(cached)
    return out[0], out[1], new


def _sampled_values(f: Any, cells: list[tuple[int, int]], bar: Any) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Per-tree values (:data:`optaccept.tree.PER_TREE`, the functions behind
    :func:`optaccept.tree.rao_blackwell`) of every (k, L) cell, one pass over the trees:
    each tree's laws are read and checked once for all its cells."""

    out = {(k, L): {v: np.empty(f.n_trees) for v in _cell_verifiers(f.drafts, k)} for k, L in cells}
    if not cells:
        return out
    for i in range(f.n_trees):
        P, Q, new = _tree_laws(f, i)
        chains = [tuple(new[t] for t in c) for c in f.chains(i)]
        for k, L in cells:
            tree = DraftTree(tuple(c[:L] for c in chains[:k]), L, f.drafts)
            for v, x in out[(k, L)].items():
                x[i] = float(PER_TREE[v](tree, P, Q))
        bar.update()
    return out


def _cross_law_differences(kept: dict[tuple, tuple]) -> list[dict[str, Any]]:
    """Verifiers on trees drawn without replacement against token-level RRS on i.i.d.
    trees, paired by prompt: the two files hold different trees after the same prompts,
    so the difference of the prompt means is averaged over the prompts, with the
    standard error of that mean (the trees of the two laws are independent given the
    prompt).  Only when both files were drawn after the same prompts."""
    out = []
    for (drafts, k, L), (swor, g_swor, ids_swor) in sorted(kept.items()):
        if drafts != "swor" or ("iid", k, L) not in kept:
            continue
        iid, g_iid, ids_iid = kept[("iid", k, L)]
        if ids_swor is None or ids_swor != ids_iid:
            continue
        prompts = np.unique(g_iid)
        if not np.array_equal(prompts, np.unique(g_swor)) or prompts.size < 2:
            continue

        base = cluster_means(iid["token"], g_iid)
        for v in ("token", "traversal"):
            if v not in swor:
                continue
            d = cluster_means(swor[v], g_swor) - base
            out.append(
                dict(
                    drafts="swor vs iid (by prompt)",
                    k=k,
                    length=L,
                    a=f"{v} (swor)",
                    b="token (iid)",
                    value=float(d.mean()),
                    std_err=sample_std_err(d, few=float("nan")),
                )
            )
    return out


def tree_table(
    trees: Any,
    *,
    ks: Iterable[int] | None = None,
    lengths: Iterable[int] | None = None,
    progress: bool | None = None,
) -> TreeTable:
    """Accepted tokens per step of every applicable verifier, by k and length.

    Parameters
    ----------
    trees : DraftTrees, path, or a dict / list of them (one per draft law)
        Stored draft trees (:func:`optaccept.llm.extract_trees`,
        :func:`optaccept.real.trees_path`).
    ks, lengths : iterables of int, optional
        Cells to fill (default: every k and length up to the stored ones).
    progress : bool, optional
        Show a progress bar over the stored trees (each tree's laws are read once for all
        its cells; default: on in a terminal or Jupyter).

    Returns
    -------
    TreeTable
        Sampled rows for token-level RRS (i.i.d. and without replacement), block
        verification (k = 1) and traversal verification (without replacement, or
        k = 1); the optimum where known (k = 1 and length 1); batch SD at length 1.
        ``differences``: paired differences on the same trees (standard errors clustered
        by prompt) and, when both draft laws were drawn after the same prompts, the
        without-replacement verifiers against i.i.d. RRS paired by prompt.
    """
    from tqdm.auto import tqdm

    if isinstance(trees, (str, Path, DraftTrees)):
        trees = [trees]
    if isinstance(trees, dict):
        trees = list(trees.values())
    files = [t if isinstance(t, DraftTrees) else DraftTrees.load(t) for t in trees]
    if not files:
        raise InputError("trees: no draft trees given")
    laws = [f.drafts for f in files]
    if len(set(laws)) != len(laws):
        raise InputError(f"trees: one file per draft law, got {laws}")
    rows: list[dict[str, Any]] = []
    jobs = []
    for f in files:
        kk = sorted(set(ks)) if ks is not None else list(range(1, f.k + 1))
        ll = sorted(set(lengths)) if lengths is not None else list(range(1, f.length + 1))
        if kk[0] < 1 or kk[-1] > f.k or ll[0] < 1 or ll[-1] > f.length:
            raise InputError(f"ks, lengths: the {f.drafts} trees hold k ≤ {f.k} and length ≤ {f.length}")
        for k in kk:
            if f.drafts == "swor" and k == 1:
                continue  # one chain: the same law as i.i.d.
            for L in ll:
                jobs.append((f, k, L))
    cells = [(f, k, L) for f, k, L in jobs]
    diffs: list[dict[str, Any]] = []
    cache: dict[tuple, dict[str, np.ndarray]] = {}
    kept: dict[tuple, tuple] = {}
    roots = {id(f): _prompt_roots(f) for f in files}
    todo = {id(f): [(k, L) for g, k, L in cells if g is f and L > 1] for f in files}
    bar = tqdm(
        total=sum(f.n_trees for f in files if todo[id(f)]),
        desc="trees",
        unit="tree",
        disable=not show_progress(progress),
    )
    sampled = {id(f): _sampled_values(f, todo[id(f)], bar) for f in files}
    bar.close()
    for f, k, L in cells:
        groups = f.prompt_index
        if L == 1:  # exact per prompt: the one-token closed forms, replicated over the prompt's trees
            exact = _exact_root_values(roots[id(f)], f.drafts, k, cache)
            per_tree = {v: x[roots[id(f)]["of_tree"]] for v, x in exact.items() if v != "bound"}
            method = "exact per prompt"
        else:
            per_tree = dict(sampled[id(f)][(k, L)])
            if k == 1:
                per_tree["optimal"] = per_tree["block"]  # Sun et al.: block is optimal for one chain
            per_tree["bound"] = _bound_values(f, k, L, roots[id(f)], cache)
            method = "sampled"
        for v, x in per_tree.items():
            d = "iid" if v in ("block", "batch") else f.drafts
            if (v, d) not in VERIFIER_NAMES:
                continue
            m, se = _clustered(x, groups)
            rows.append(
                dict(
                    drafts=d,
                    verifier=v,
                    name=VERIFIER_NAMES[(v, d)],
                    k=k,
                    length=L,
                    value=m,
                    std_err=se,
                    trees=int(x.size),
                    prompts=int(np.unique(groups).size),
                    method=method if not (v == "optimal" and L > 1) else "= block (k = 1)",
                )
            )
        practical = [v for v in ("token", "block", "traversal") if v in per_tree]
        pairs = [(v, "token") for v in practical[1:]]
        best = max(practical, key=lambda v: float(per_tree[v].mean()))
        pairs += [(top, best) for top in ("optimal", "bound") if top in per_tree and not (top == "bound" and L == 1)]
        for a_, b_ in pairs:
            m, se = _clustered(per_tree[a_] - per_tree[b_], groups)
            diffs.append(dict(drafts=f.drafts, k=k, length=L, a=a_, b=b_, value=m, std_err=se))
        kept[(f.drafts, k, L)] = (per_tree, np.asarray(groups), f.meta.get("prompt_ids"))
    diffs += _cross_law_differences(kept)
    meta = {
        "sources": [
            {
                key: f.meta.get(key)
                for key in (
                    "target_model",
                    "draft_model",
                    "target_warp",
                    "draft_warp",
                    "k",
                    "length",
                    "drafts",
                    "seed",
                    "trees_per_prompt",
                )
            }
            | {"trees": f.n_trees}
            for f in files
        ]
    }
    meta["errors"] = (
        "standard errors clustered by prompt: sqrt(G/(G-1) Σ_g (Σ_{i in g} (x_i - mean))^2) / N over the N trees "
        "of the G prompts; L = 1 cells exact per prompt (closed forms), averaged over the trees' prompts"
    )
    return TreeTable(rows, meta, diffs)
