"""Demo data: the Keyspaces compression article's tables, and one value per supported container."""
