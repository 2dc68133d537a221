"""Verdict statistics: paired comparisons with their uncertainty, in the standard library only."""
