"""The webhook sender: due events from the outbox, posted signed to destinations checked
at connect time (egress)."""
