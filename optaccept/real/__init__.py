"""Real-model data, numpy only: distribution files, stored draft trees, and the tables
made from them (no torch, no transformers).

>>> from optaccept import real
>>> data = real.Distributions.load(real.sample_path())
>>> trees = real.DraftTrees.load(real.trees_path("iid"))            # doctest: +SKIP
>>> table = real.tree_table(trees, ks=(2, 4), lengths=(1, 2))        # doctest: +SKIP

* :class:`Distributions` — next-token distributions of a (target, draft) pair, dense or
  sparse, in the ``.npz`` format with provenance;
  :func:`sample_path` — the shipped SmolLM2 file.
* :class:`DraftTrees`, :class:`StoredModel`, :func:`trees_path` — draft trees grown from
  language models, stored with both models' laws at every node, and a sequence model
  answering from them.
* :func:`tree_table`, :class:`TreeTable` — accepted tokens per step of each verifier on
  stored trees; :func:`realised_optimal`, :class:`RealisedTable` — the optimal verifier's
  realised acceptance on stored distributions.

These names were importable from :mod:`optaccept.llm` and :mod:`optaccept.tree`; they
stay importable there for one release.
"""

from ._data import sample_path
from ._realised import RealisedTable, realised_optimal
from ._storage import Distributions, load_source
from ._stored import DraftTrees, trees_path
from ._tables import TreeTable, tree_table

__all__ = [
    "load_source",
    "Distributions",
    "sample_path",
    "DraftTrees",
    "trees_path",
    "tree_table",
    "TreeTable",
    "realised_optimal",
    "RealisedTable",
]
