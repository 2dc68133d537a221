"""JSON Schemas of the set file formats, shipped as files for editors (see docs/sets.md)."""
