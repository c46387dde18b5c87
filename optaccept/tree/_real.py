"""Accepted tokens per step on stored draft trees of a real pair: a table and a figure.

The input is one :class:`optaccept.llm.DraftTrees` file per draft law (k chains of
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

Standard errors are clustered by prompt (the trees of one prompt share it), and every
comparison of verifiers is a paired difference on the same trees
(:attr:`TreeTable.differences`).
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


class TreeTable:
    """Rows ``{drafts, verifier, name, k, length, value, std_err, trees, method}``.

    ``method`` is ``"sampled"`` (Rao–Blackwellised mean over the stored trees),
    ``"exact per prompt"`` (a closed form at the root, averaged over the prompts) or
    ``"= block (k = 1)"``.  Export with :meth:`to_markdown`, :meth:`to_csv`,
    :meth:`to_latex`; plot with :func:`optaccept.plots.plot_accepted_tokens`.
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

    def differences_markdown(self) -> str:
        """Paired differences a − b on the same trees, ± their standard errors clustered by prompt."""
        from .._display import Estimate, markdown_table

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
        """The paired differences as CSV (numeric columns)."""
        path = Path(path)
        fields = ["drafts", "length", "k", "a", "b", "value", "std_err"]
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for d in self.differences:
                w.writerow({f: d[f] for f in fields})
        return path

    def to_csv(self, path: str | Path) -> Path:
        path = Path(path)
        fields = ["drafts", "verifier", "name", "k", "length", "value", "std_err", "trees", "prompts", "method"]
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


def _clustered(x: Sequence[float], groups: Sequence[int]) -> tuple[float, float]:
    """Mean of per-tree values and its standard error clustered by prompt (trees of one
    prompt share it and are not independent): sqrt(G/(G−1)·Σ_g S_g²)/N, S_g the sum of
    the deviations of cluster g."""
    a = np.asarray(x, dtype=np.float64)
    _, inv = np.unique(np.asarray(groups), return_inverse=True)
    G = int(inv.max()) + 1
    m = float(a.mean())
    if G < 2:
        return m, 0.0
    s = np.bincount(inv, weights=a - m, minlength=G)
    return m, float(math.sqrt(G / (G - 1) * float(s @ s)) / a.size)


def _prompt_roots(trees: Any) -> dict[str, Any]:
    """p and q at the root of the first tree of each prompt, and each tree's prompt row."""
    roots = np.flatnonzero(np.asarray(trees.parent) < 0)
    prompts, first, of_tree = np.unique(trees.prompt_index, return_index=True, return_inverse=True)
    p, q = trees.rows(roots[first])
    return {"p": p, "q": q, "of_tree": of_tree, "prompts": prompts}


def _exact_root_values(roots: dict[str, Any], drafts: str, k: int, cache: dict) -> dict[str, np.ndarray]:
    """One-token values per prompt: token-level RRS (= traversal and block at one token),
    the optimum α* and, for i.i.d. drafts, Yin et al.'s batch SD (cached per law and k)."""
    key = (id(roots), drafts, k)
    if key not in cache:
        cache[key] = _root_values(roots, drafts, k)
    return cache[key]


def _root_values(roots: dict[str, Any], drafts: str, k: int) -> dict[str, np.ndarray]:
    from ..drafts import IID, WithoutReplacement
    from ..optimal import optimal_acceptance
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
    """Per-tree terms of tree.upper_bound (docs/trees.md §4b) on the stored trees."""
    from ._bounds import tree_bound_terms

    alpha1 = _exact_root_values(roots, f.drafts, k, cache)["optimal"]
    out = np.empty(f.n_trees)
    for i, (t, P, Q) in enumerate(f.items(k=k, length=L)):
        out[i] = alpha1[roots["of_tree"][i]] + float(tree_bound_terms(t, P, Q, f.drafts, k)[2:].sum())
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

        def means(x: np.ndarray, g: np.ndarray) -> np.ndarray:
            _, inv = np.unique(g, return_inverse=True)
            return np.bincount(inv, weights=x) / np.bincount(inv)

        base = means(iid["token"], g_iid)
        for v in ("token", "traversal"):
            if v not in swor:
                continue
            d = means(swor[v], g_swor) - base
            out.append(
                dict(
                    drafts="swor vs iid (by prompt)",
                    k=k,
                    length=L,
                    a=f"{v} (swor)",
                    b="token (iid)",
                    value=float(d.mean()),
                    std_err=float(d.std(ddof=1) / math.sqrt(d.size)),
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
        :func:`optaccept.llm.trees_path`).
    ks, lengths : iterables of int, optional
        Cells to fill (default: every k and length up to the stored ones).
    progress : bool, optional
        Show a progress bar over (draft law, k, length) cells (default: on in a terminal
        or Jupyter).

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

    from ._progress import show_progress
    from ._sampling import rao_blackwell
    from ._stored import DraftTrees

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
    for f, k, L in tqdm(cells, desc="cells", unit="cell", disable=not show_progress(progress)):
        groups = f.prompt_index
        if L == 1:  # exact per prompt: the one-token closed forms, replicated over the prompt's trees
            exact = _exact_root_values(roots[id(f)], f.drafts, k, cache)
            per_tree = {v: x[roots[id(f)]["of_tree"]] for v, x in exact.items() if v != "bound"}
            method = "exact per prompt"
        else:
            verifiers = ["token"] + (["block"] if k == 1 else []) + (["traversal"] if f.drafts == "swor" else [])
            res = rao_blackwell(f.items(k=k, length=L), verifiers=tuple(verifiers), progress=False)
            per_tree = {v: np.asarray(res[v].details["values"], dtype=np.float64) for v in verifiers}
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
