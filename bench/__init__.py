"""Benchmarks: scripts that print figures (see docs/development.md, "Benchmarks")."""
