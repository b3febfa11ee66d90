"""The one reading below the features: a statement's table resolved once (`resolve`), read with the
shared scanner (cqlsh_ext.scanning) and the value engine's page API (query.evaluate, payload.pages),
answered as a typed answer (`typed`: named, typed columns, rows in batches that hand out columns,
notes as data), with a small context instead of the shell (`context`). `select` reads a SELECT
(payload paths, conditions, aggregates, or none), `statement` one the server answers as it is.
Front ends (the shell's commands, exports, Spark mode, `cqlsh-ext mcp`) render the answer
(cqlsh_ext.render); none reads another's printed text.

Nothing here is imported at shell start-up.
"""
