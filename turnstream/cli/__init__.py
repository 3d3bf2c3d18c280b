"""The ``turnstream`` command."""
