"""Proof script: re-runs the claim `two_draft_condition` exactly and writes certificates/two_draft_condition.json.

Usage (from the repository root): `python proofs/two_draft_condition.py [--quick] [--out DIR]`.
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
    sys.exit(main("two_draft_condition", sys.argv[1:], default_out=HERE / "certificates"))
