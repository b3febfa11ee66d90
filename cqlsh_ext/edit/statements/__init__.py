"""The services of write statements added as their declaration and their service: one module a
statement (its service, `(write context, call) -> figures`: a dict of the fields its declared output
schema names, the lines a person reads said on the context's `out`), declared in edit/declared.py.
The shell's door, the Python API's method and the journal's request are made from the declaration
(shell.dispatcher, api.report_methods, writing.requests.FeatureRequest); the rows go through
writing/ (writing.loop.write_changes: journaled, conditioned, undoable). A statement added here
needs no other file but its declaration and its test: this package is one layer of edit's import
contract (pyproject.toml), whatever modules it holds."""
