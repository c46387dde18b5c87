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

Every per-tree value is computed from the compressed rows without densifying them
(:mod:`optaccept.real._tree_values`): the sampled verifiers for every tree and cell at once
(the batched forms of :mod:`optaccept.tree._batched_verifiers`, level by level over the nodes'
stored entries), the bound's terms for every tree and length at once, and the one-token values
on each prompt root's support (``tests/real/test_tree_table_values.py`` checks each against the
per-tree functions fed from dense rows).

Standard errors are clustered by prompt (the trees of one prompt share it), and every
comparison of verifiers is a paired difference on the same trees
(:attr:`TreeTable.differences`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from .._lib.display import Estimate, Tabular, html_table, latex_table, markdown_table
from .._lib.display.files import write_records_csv
from .._lib.limits import show_progress
from .._lib.statistics import cluster_means
from .._lib.statistics import clustered_mean as _clustered
from .._lib.statistics import std_err as sample_std_err
from ._stored import DraftTrees
from ._tree_values import _bound_values, _exact_root_values, _prompt_roots, _sampled_values

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

    Examples
    --------
    >>> from optaccept import real
    >>> trees = real.DraftTrees.load(real.trees_path("iid"))
    >>> table = real.tree_table(trees, ks=(1,), lengths=(1,), progress=False)
    >>> {row["verifier"] for row in table.rows} >= {"block"}, table.ok
    (True, True)
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
            Where the CSV goes: columns drafts, length, k, a, b, value, std_err.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        return write_records_csv(path, ["drafts", "length", "k", "a", "b", "value", "std_err"], self.differences)

    def to_csv(self, path: str | Path) -> Path:
        """The rows as CSV, one per (draft law, verifier, k, length).

        Parameters
        ----------
        path : str or pathlib.Path
            Where the CSV goes: columns drafts, verifier, name, k, length, value, std_err,
            trees, prompts, method.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        fields = ["drafts", "verifier", "name", "k", "length", "value", "std_err", "trees", "prompts", "method"]
        return write_records_csv(path, fields, self.rows)

    def _repr_html_(self) -> str:
        header, rows = self._body()
        return html_table(header, rows, title="Expected draft tokens accepted per step (± standard error)")


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
        Show a progress bar over the stored trees (it advances a file at a time: every tree
        and cell of a file is computed at once; default: on in a terminal or Jupyter).

    Returns
    -------
    TreeTable
        Sampled rows for token-level RRS (i.i.d. and without replacement), block
        verification (k = 1) and traversal verification (without replacement, or
        k = 1); the optimum where known (k = 1 and length 1); batch SD at length 1.
        ``differences``: paired differences on the same trees (standard errors clustered
        by prompt) and, when both draft laws were drawn after the same prompts, the
        without-replacement verifiers against i.i.d. RRS paired by prompt.

    Examples
    --------
    >>> from optaccept import real
    >>> trees = real.DraftTrees.load(real.trees_path("iid"))
    >>> table = real.tree_table(trees, ks=(1,), lengths=(1,), progress=False)
    >>> type(table).__name__, len(table.rows) > 0, sorted(table.rows[0])[:4]
    ('TreeTable', True, ['drafts', 'k', 'length', 'method'])
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
