"""evalkit's version, in a module of its own that imports nothing.

``evalkit.__version__`` is this value; a module low in the package that writes the version (a
baseline file's ``evalkit_version``) imports it from here rather than reaching up into the
package's face, which imports the whole library for type checkers.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
