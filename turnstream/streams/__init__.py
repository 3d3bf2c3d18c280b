"""The Faust app, its agents and topics, and the pure rules they apply."""
