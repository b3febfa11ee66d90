"""cqlsh-ext: cqlsh, extended to show what is inside compressed blobs."""

__version__ = "0.1.0"
