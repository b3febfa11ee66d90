"""Queries inside payloads (SELECT with paths, filters and GROUP BY): the statement parser, the
page evaluator and the
accumulators whose partial results merge. Importable without cqlsh or the driver."""
