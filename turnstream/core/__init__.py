"""Every pure rule: plain data in, plain data out; no broker, no store, no clock.

``ingest`` decides what happens to one message, ``messages`` builds the accepted and
dead-letter messages, ``erasure`` says which decisions erase whom, ``identity`` hashes a
handle into a profile id, ``derivation`` holds exposures, triggers, evidence and
inferences, ``constraints`` the constraints block. Imports ``models``, ``config`` and
``errors`` only (an import-linter contract checks it), so the live drivers and replay
run the same rules.
"""
