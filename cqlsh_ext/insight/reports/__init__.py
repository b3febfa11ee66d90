"""The services of insight's reports added since its first ones: one module a report (its service,
`(context, call) -> ReportAnswer`), declared in insight/declared.py. A report added here needs no
other file but its declaration and its test: this package is one layer of insight's import contract
(pyproject.toml), whatever modules it holds."""
