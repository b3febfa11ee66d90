"""Queries inside payloads (issue 23): the statement parser, the per-row evaluator and the
accumulators whose partial results merge. Importable without cqlsh or the driver."""
