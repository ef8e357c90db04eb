"""Rendering verdicts for people: failure text, trace sections, redaction."""
