"""Accepted tokens per step on stored draft trees of a real pair: a table and a figure.

The input is one :class:`optaccept.llm.DraftTrees` file per draft law (k chains of
``length`` tokens after each prompt, with the target's and the draft's laws at every
node).  A tree stored with k chains of L tokens also gives, cut to its first k' ≤ k
chains and their first L' ≤ L tokens, a sample of the draft law with k' and L', so one
file fills the whole (k, length) grid.  Every cell is a Rao–Blackwellised average
(docs/trees.md §5) over the same trees, with its standard error.

Besides the verifiers with a value per tree, the table gives the sequence-level
optimum (the best lossless verifier, docs/trees.md §4) wherever it is known at
vocabulary scale:

* k = 1: block verification is optimal for one chain (Sun et al., arXiv 2403.10444;
  confirmed against the LP in docs/trees.md §7), so the optimum is the block value;
* length 1: the optimum is α* of the draft law at the root (``optimal_acceptance``
  with ``IID(q, k)`` or ``WithoutReplacement(q, k)``), computed exactly per prompt.

At length 1 with i.i.d. drafts, token-level verification is the batch speculative
decoding of Yin et al. (NeurIPS 2024, arXiv 2411.00841) with M = k drafts: its
expected accepted tokens are 1 − Π_m TV(p^m, q) (``optaccept.sequence``), given
exactly per prompt.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError

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
}


class TreeTable:
    """Rows ``{drafts, verifier, name, k, length, value, std_err, trees, method}``.

    ``method`` is ``"sampled"`` (Rao–Blackwellised mean over the stored trees),
    ``"exact per prompt"`` (a closed form at the root, averaged over the prompts) or
    ``"= block (k = 1)"``.  Export with :meth:`to_markdown`, :meth:`to_csv`,
    :meth:`to_latex`; plot with :func:`optaccept.plots.plot_accepted_tokens`.
    """

    def __init__(self, rows: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        self.rows = rows
        self.meta = dict(meta or {})

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        ks = sorted({r["k"] for r in self.rows})
        ls = sorted({r["length"] for r in self.rows})
        return f"TreeTable({len(self.rows)} rows, k={ks}, length={ls})"

    def get(self, verifier: str, drafts: str, k: int, length: int) -> dict[str, Any]:
        """The row of one cell (``KeyError`` when the verifier does not apply there)."""
        for r in self.rows:
            if (r["verifier"], r["drafts"], r["k"], r["length"]) == (verifier, drafts, k, length):
                return r
        raise KeyError(f"no row for verifier={verifier!r}, drafts={drafts!r}, k={k}, length={length}")

    def series(self) -> list[tuple[str, str]]:
        """(verifier, drafts) pairs present, in display order."""
        seen = dict.fromkeys((r["verifier"], r["drafts"]) for r in self.rows)
        return [s for s in SERIES_STYLES if s in seen]

    @staticmethod
    def _cell(r: dict[str, Any] | None, latex: bool = False) -> str:
        from .._display import Estimate

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
        """One row per (length L, number of chains k), one column per verifier; value ± s.e."""
        from .._display import markdown_table

        return markdown_table(*self._body())

    def to_latex(self, caption: str = "Expected draft tokens accepted per step (± standard error).") -> str:
        """The values of :meth:`to_markdown` as a booktabs LaTeX ``table`` that fits a page: a
        row per (length L, verifier), a column per number of chains k."""
        from .._display import Estimate, latex_table

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

    def to_csv(self, path: str | Path) -> Path:
        path = Path(path)
        fields = ["drafts", "verifier", "name", "k", "length", "value", "std_err", "trees", "method"]
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for r in self.rows:
                w.writerow({f: r[f] for f in fields})
        return path

    def _repr_html_(self) -> str:
        from .._display import html_table

        header, rows = self._body()
        return html_table(header, rows, title="Expected draft tokens accepted per step (± standard error)")


def _mean_se(x: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(x, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0


def _root_rows(trees: Any) -> tuple[np.ndarray, np.ndarray]:
    """p and q at the root of every tree (float64, renormalised)."""
    roots = np.flatnonzero(np.asarray(trees.parent) < 0)
    return trees.rows(roots)


def tree_table(
    trees: Any,
    *,
    ks: Iterable[int] | None = None,
    lengths: Iterable[int] | None = None,
    progress: bool = False,
) -> TreeTable:
    """Accepted tokens per step of every applicable verifier, by k and length.

    Parameters
    ----------
    trees : DraftTrees, path, or a dict / list of them (one per draft law)
        Stored draft trees (:func:`optaccept.llm.extract_trees`,
        :func:`optaccept.llm.trees_path`).
    ks, lengths : iterables of int, optional
        Cells to fill (default: every k and length up to the stored ones).
    progress : bool
        Show a progress bar.

    Returns
    -------
    TreeTable
        Sampled rows for token-level RRS (i.i.d. and without replacement), block
        verification (k = 1) and traversal verification (without replacement, or
        k = 1); the optimum where known (k = 1 and length 1); batch SD at length 1.
    """
    from tqdm.auto import tqdm

    from ..drafts import IID, WithoutReplacement
    from ..llm import DraftTrees
    from ..optimal import optimal_acceptance
    from ..sequence import batch_rejection_probability
    from ._sampling import rao_blackwell

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
    roots = {id(f): _root_rows(f) for f in files}
    for f, k, L in tqdm(jobs, desc="cells", disable=not progress):
        verifiers = ["token"]
        if k == 1:
            verifiers.append("block")
        if f.drafts == "swor" and k > 1:
            verifiers.append("traversal")
        res = rao_blackwell(f.items(k=k, length=L), verifiers=tuple(verifiers), total=f.n_trees)
        for v in verifiers:
            r = res[v]
            rows.append(
                dict(
                    drafts=f.drafts if v != "block" else "iid",
                    verifier=v,
                    name=VERIFIER_NAMES[(v, f.drafts if v != "block" else "iid")],
                    k=k,
                    length=L,
                    value=float(r.value),
                    std_err=float(r.std_err),
                    trees=int(r.trees),
                    method="sampled",
                )
            )
        if k == 1 and L > 1:
            b = res["block"]
            rows.append(
                dict(
                    drafts="iid",
                    verifier="optimal",
                    name=VERIFIER_NAMES[("optimal", "iid")],
                    k=1,
                    length=L,
                    value=float(b.value),
                    std_err=float(b.std_err),
                    trees=int(b.trees),
                    method="= block (k = 1)",
                )
            )
        if L == 1:
            p, q = roots[id(f)]
            law = IID if f.drafts == "iid" else WithoutReplacement
            alpha = [float(optimal_acceptance(pi, law(qi, k)).value) for pi, qi in zip(p, q, strict=True)]
            m, se = _mean_se(alpha)
            rows.append(
                dict(
                    drafts=f.drafts,
                    verifier="optimal",
                    name=VERIFIER_NAMES[("optimal", f.drafts)],
                    k=k,
                    length=1,
                    value=m,
                    std_err=se,
                    trees=len(alpha),
                    method="exact per prompt",
                )
            )
        if L == 1 and f.drafts == "iid":
            p, q = roots[id(f)]
            acc = [1 - batch_rejection_probability(pi, qi, k) for pi, qi in zip(p, q, strict=True)]
            m, se = _mean_se(acc)
            rows.append(
                dict(
                    drafts="iid",
                    verifier="batch",
                    name=VERIFIER_NAMES[("batch", "iid")],
                    k=k,
                    length=1,
                    value=m,
                    std_err=se,
                    trees=len(acc),
                    method="exact per prompt",
                )
            )
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
    return TreeTable(rows, meta)
