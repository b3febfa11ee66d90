"""`cqlsh-ext mcp`: the shell's reads as a Model Context Protocol server over stdio (docs/mcp.md).

The server is the shell itself, built and connected as `cqlsh-ext` builds it (cqlsh's main(), the
settings, cqlshrc, its credentials file, --sigv4/--keyspaces, TLS), with its loop replaced: instead
of reading statements from a terminal it serves tool calls, one at a time, each a statement the
shell runs as it runs `-e` (`--output-format json`), its output captured. Whatever the shell prints
is the answer: the same JSON.

- cli.py         the subcommand: its flags, the SDK check, the protocol's file descriptors taken
                 before anything can print, the shell's class and loop
- server.py      the MCP side (the `mcp` SDK): tools listed and called, in a thread of its own
- calls.py       the calls queued for the shell's thread; time limit and cancellation
- tools.py       the tools: their names, arguments and the statements they run
- answers.py     the JSON answers made of what the shell printed
- connection.py  the headless shell: no prompt, no password asked, a call's output captured
- capture.py     what one call's statement writes, with its caps
- gate.py        the read-only gate: which statements may run at all
"""
