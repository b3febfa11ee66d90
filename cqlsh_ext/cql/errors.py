"""The one error of reading a statement: the lexer, the payload-query parser and the layers above
raise it for a statement they refuse."""


class QueryError(ValueError):
    """A statement this layer refuses: one line, said as is."""
