"""Edits of stored payloads: UPDATE ... SET data.path = ..., DELETE data.path FROM ..., UNDO
(docs/edit.md)."""
