"""cqlsh's own library as cqlsh-ext touches it: every seam (seams.py) and the Shell protocol (protocol.py)."""
