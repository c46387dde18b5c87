"""Proof script: re-runs the claim `two_draft_condition` exactly and writes its certificate.

Usage (from the repository root, with the project's environment):
`.venv/bin/python proofs/two_draft_condition.py [--quick] [--out DIR | --update]`.  The certificate goes to
`proofs/local/certificates/` (ignored by git); `--update` rewrites the committed
`proofs/certificates/two_draft_condition.json` instead.  Exits 1 if the claim fails, 2 if optaccept cannot
be imported.  The claim's statement and source are in proofs/README.md.
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's optaccept, installed or not
try:
    from optaccept.polyhedra._claims import main
except ImportError as exc:
    print(
        f"{HERE.name}/{pathlib.Path(__file__).name}: error: cannot import optaccept ({exc}); "
        "run it with the project's environment: ./run.sh setup, then .venv/bin/python proofs/two_draft_condition.py",
        file=sys.stderr,
    )
    sys.exit(2)

if __name__ == "__main__":
    sys.exit(main("two_draft_condition", sys.argv[1:], default_out=HERE / "certificates"))
