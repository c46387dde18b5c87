"""Proof script: re-runs the claim `k_draft_conjecture_iid` exactly and writes certificates/k_draft_conjecture_iid.json.

Usage (from the repository root): `python proofs/k_draft_conjecture_iid.py [--quick] [--out DIR]`.
Exits 1 if the claim fails.  The claim's statement and source are in proofs/README.md.
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
try:
    from optaccept.polyhedra._claims import main
except ImportError:  # running from a checkout that is not installed
    sys.path.insert(0, str(HERE.parent))
    from optaccept.polyhedra._claims import main

if __name__ == "__main__":
    sys.exit(main("k_draft_conjecture_iid", sys.argv[1:], default_out=HERE / "certificates"))
