"""`cqlsh-ext mcp`: the shell's reads as a Model Context Protocol server over stdio (docs/mcp.md).

The server is the shell itself, built and connected as `cqlsh-ext` builds it (cqlsh's main(), the
settings, cqlshrc, its credentials file, --sigv4/--keyspaces, TLS), with its loop replaced: instead
of reading statements from a terminal it serves tool calls, one at a time, each read through the
one reading the shell's commands read through (cqlsh_ext.reading) and answered from its typed
answer: rows spelt as `--output-format json` spells them, reports' figures as the shell's JSON
report holds them. Nothing is printed and read back.

- cli.py         the subcommand: its flags, the SDK check, the protocol's file descriptors taken
                 before anything can print, the shell's class and loop
- server.py      the MCP side (the `mcp` SDK): tools listed and called, in a thread of its own
- calls.py       the calls queued for the shell's thread; time limit and cancellation
- tools.py       the tools: their names, arguments, the statements they run and the readings
- answers.py     the JSON answers rendered from the typed answers, with their caps
- connection.py  the headless shell: no prompt, no password asked
- log.py         the server's own log (standard error), secrets removed
- gate.py        the read-only gate: which statements may run at all
"""
