"""CQL's own language as cqlsh-ext reads it, below every layer that reads statements or values: the
lexer and its token cursor (lexer.py: payload queries, encode() and Spark mode parse with it) and the
one model of CQL types (types.py: type text, the driver's and cqlsh's type objects, where the blobs are);
the CQL text cqlsh-ext writes from typed parts (spelling.py: a name, a table's columns' SELECT)."""
