"""Loading decoded documents into a table (docs/load.md): COPY ... FROM a JSON Lines, Parquet or CSV
file, and the Python API's db.write, each value encoded as its producers encode it, verified,
journaled, paced, resumable and undoable, on the writing layer (cqlsh_ext.writing)."""
