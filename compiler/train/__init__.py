"""A training step over the same graph: what each op keeps for its backward pass, the optimizer's states, the
pipeline schedule, and the step's FLOPs, traffic and bounds (docs/training.md)."""
