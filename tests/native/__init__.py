"""tests/native: the native core checked against the Python engine (a package, like the other
test folders with a conftest, so that its conftest is not the `conftest` other tests import)."""
