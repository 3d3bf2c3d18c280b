"""The producer SDK: runs in the agent's process (claim contract, tools, exposure tokens)."""
