"""JSON Schemas of the set file formats, shipped as files for editors (see docs/sets.md), and of the
baseline file (`evalkit baseline export`, see docs/ci.md)."""
