"""Fault tests (issue 7): run by `make chaos`, never by `make test`."""
