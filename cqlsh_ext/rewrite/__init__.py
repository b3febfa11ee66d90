"""COMPRESSION REWRITE (docs/rewrite.md): a column re-encoded in place, paced, resumable, verified,
undoable. Declared in COMPRESSION's grammar (insight/command.py)."""
