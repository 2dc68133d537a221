"""A package whose import leaves a marker file (the path in EVALKIT_UNFOUND_MARKER) and then
raises: `evalkit list` must tell its submodules apart without importing it."""

import os

if marker := os.environ.get("EVALKIT_UNFOUND_MARKER"):
    with open(marker, "a", encoding="utf-8") as file:
        file.write(f"{__name__} imported\n")
raise RuntimeError("evalkit_unfound_plugins must not be imported by a listing")
