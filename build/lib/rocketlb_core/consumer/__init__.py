"""Consumer load balancing: allocation strategies, the rebalance bookkeeping, and the metrics
and invariants the book and the simulator check (spec sections 3 to 6)."""
