"""encode() in INSERT, UPDATE and BATCH: blob values written as producers write them (docs/payloads.md)."""
