"""Benchmarks: scripts that print figures (see the README's "Benchmarks")."""
