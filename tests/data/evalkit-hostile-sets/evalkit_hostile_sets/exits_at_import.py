"""A plugin module that calls ``sys.exit(0)`` when it is imported (a script-like module)."""

import sys

sys.exit(0)
