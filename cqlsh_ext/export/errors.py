"""The one error of an export: a one-line message, nothing written under the final name."""


class ExportError(Exception):
    pass
