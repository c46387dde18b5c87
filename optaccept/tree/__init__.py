"""Accepted tokens per step for chains and trees of drafts (docs/trees.md).

>>> from fractions import Fraction as F
>>> from optaccept import tree
>>> p = lambda prefix: [F(1, 3), F(2, 3)]          # target: prefix -> next-token law
>>> q = lambda prefix: [F(2, 3), F(1, 3)]          # draft
>>> tree.accepted_tokens(p, q, tree.TreeDraftLaw(length=2), verifier="block").value
Fraction(11, 9)

* :class:`TreeDraftLaw` — the tree's draft law, the ``drafts`` argument of every tree
  function: k chains (``TreeDraftLaw(length=, k=, children="iid"|"swor")``) or a tree of
  any shape (``TreeDraftLaw(shape, children="topk"|"swor"|"iid")``).
* :func:`accepted_tokens` — the accepted tokens of a draft law; exact (enumeration of draft trees, recursion, LP) or
  sampled, for verifiers ``"token"``, ``"block"``, ``"traversal"``,
  ``"token_optimal"``, ``"optimal"`` and ``"target_only"``.
* :func:`budget_curve` — the best deterministic tree for each node budget, three
  strategies (Sequoia's positional DP, EAGLE-2's dynamic expansion, the ceiling).
* :func:`best_tree` — the tree to draft for a node budget or a cost curve, as a
  :class:`Shape` with engine formats (``to_choices``, ``to_vllm``, ``Shape.from_vllm``).
* :func:`upper_bound` — a bound on every lossless verifier that holds at vocabulary
  scale (exact on top-k trees).
* :func:`sample_accepted_tokens` — Rao-Blackwellised estimate at vocabulary scale,
  resumable from a checkpoint folder; :func:`rao_blackwell` averages given (e.g.
  stored) trees.
* :func:`sweep` — temperatures × k × length × draft law × verifier, through joblib.
* :func:`simulate` — Monte Carlo runs of each verification algorithm.
* Sequence-model protocol: :class:`SequenceModel`, :func:`as_model`,
  :func:`synthetic_pair`; trees: :class:`DraftTree`, :func:`enumerate_trees`,
  :func:`sample_tree`; per-tree values: :func:`tree_value`.
"""

from ._api import accepted_tokens
from ._best import best_tree
from ._bounds import upper_bound
from ._budget import BudgetCurve, budget_curve
from ._draft_law import TreeDraftLaw
from ._models import SequenceModel, model_pair, synthetic_pair, with_sampling
from ._profile import AcceptanceProfile, acceptance_profile
from ._result import TreeResult
from ._sampling import sample_accepted_tokens, tree_value
from ._shape import Shape
from ._simulate import simulate
from ._sweep import sweep

__all__ = [
    "tree_value",
    "accepted_tokens",
    "TreeDraftLaw",
    "upper_bound",
    "budget_curve",
    "BudgetCurve",
    "best_tree",
    "acceptance_profile",
    "AcceptanceProfile",
    "Shape",
    "sample_accepted_tokens",
    "sweep",
    "simulate",
    "TreeResult",
    "SequenceModel",
    "model_pair",
    "with_sampling",
    "synthetic_pair",
]
