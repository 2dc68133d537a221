"""``python -m evalkit`` is ``evalkit``."""

import sys

from .cli import main

sys.exit(main())
