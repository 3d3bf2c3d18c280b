"""The producer SDK: runs in the agent's process (the claim contract, and more to come)."""
