"""DESCRIBE PAYLOAD: what a blob (or text) column holds across its values, at a glance
(docs/describe.md): the encodings found, then every path inside the payloads as a tree, with
presence, types, lengths, ranges, distinct counts and the few values of a category path.

`command` is the shell's entry (the statement taken before cqlsh's DESCRIBE sees it; light,
imported at start-up), `parse` reads the statement, `run` reads the rows (a sample or every
row), `description` is the aggregate they fill (mergeable: worker processes, a sample's slices,
Spark's tasks), `structure` its walk of one value's tree and `sketch` its distinct counts and top
values, `views` what it reads of the value engine's views, `report` the text and JSON forms.
"""
