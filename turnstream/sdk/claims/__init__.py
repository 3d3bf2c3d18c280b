"""The claim contract: what an agent may state, and the evidence each kind of claim needs."""
