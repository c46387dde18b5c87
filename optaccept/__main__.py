"""``python -m optaccept`` runs the command line."""

import sys

from .cli._main import main

sys.exit(main())
