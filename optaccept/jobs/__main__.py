"""``python -m optaccept.jobs`` runs the main job."""

import sys

from ._main import main

sys.exit(main())
