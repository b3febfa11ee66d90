"""SELECT statements with payload paths, run by the shell (docs/queries.md).

`command.intercept(shell, statement)` is the shell's one entry: a SELECT that names a path or a
payload condition is parsed (cqlsh_ext.query), read (`read.py`: the server's paging for the
partitions a WHERE names, the token-range scan with worker processes for a whole table), and
printed through the shell's result pipeline like any result (`result.py`); anything else goes to
cqlsh unchanged.
"""
