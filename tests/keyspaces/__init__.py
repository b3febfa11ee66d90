"""Amazon Keyspaces: SigV4, TLS and Keyspaces behaviour against a local Keyspaces-like endpoint."""
