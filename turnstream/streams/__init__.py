"""Kafka and Faust only: the one batch loop and the two drivers that run on it (ingest,
derivation), the topology, fan-out, topic administration, the worker's Faust app and
its HTTP routes. The rules they apply live in :mod:`turnstream.core`, the store in
:mod:`turnstream.sinks`."""
