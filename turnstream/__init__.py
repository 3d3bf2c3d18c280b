"""turnstream: the server side of an agent memory, as an event-sourced stream pipeline."""

__version__ = "0.1.0"
