"""The files ``evalkit init`` writes into a new project."""
