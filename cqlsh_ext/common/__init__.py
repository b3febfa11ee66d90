"""The bottom layer: standard library only, used by every layer above without tying them together
(reading a module's declarations without importing it, the JSON spelling, sizes as people read them)."""
