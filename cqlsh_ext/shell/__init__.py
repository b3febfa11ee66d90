"""The shell: cqlsh's Shell, extended, as one class with one door (`ExtShell`, in ext_shell.py).

Every method of cqlsh's Shell that cqlsh-ext changes is overridden there, in this one class, and
nowhere else (cqlsh_ext.upstream.seams.OVERRIDDEN lists them, with where each attaches); each hands
over to the collaborator that does the work, handed what it reads, and with our features off (`-d
none`, table output, `--classic`, no Keyspaces flags) to cqlsh's own method, so stock behaviour is
kept. The collaborators:

- statements and commands of ours: declared once in cqlsh_ext.features, the one registry; the
  shell's door (handle_statement) hands a statement to its declaration (shell.dispatcher:
  cqlsh-ext's own features' statements and the packages'), else to the statements' claims declared for its
  first word (features.commands), before cqlsh sees it; the commands' `do_<word>` methods and HELP
  (shell.help, of the declarations' texts: features.help) and their completion (shell.completion)
  come from the declarations too;
- a statement's bounds before cqlsh's lexer and grammar, checked in one place
  (shell.statement_bounds): its text measured as it comes (`statement_reading`), then at the door;
  cqlsh's loop of scripts, each line measured first (shell.script);
- a run for programs (`agent`, agent.door.AgentRun: each statement checked, timed and classed by
  how it ended, errors as JSON);
- results: cqlsh_ext.output.pipeline (`results`: writers, pager, blob cells, auto vertical); the
  messages beside them: shell.results;
- the interactive loop: cqlsh_ext.repl; readline's history without passwords: repl.passwords;
- Amazon Keyspaces: cqlsh_ext.keyspaces (wiring.py: the connection; command.py: DESCRIBE);
- a loop of our own that serves calls instead of reading statements (`server`, a ServingLoop:
  `cqlsh-ext mcp`'s, mcp_server.connection.Headless), handed what it reads.

cqlsh's main(), SOURCE and LOGIN build the Shell themselves, by the module global name `Shell`:
`shell_class(settings)` makes the class for one run, with the run's settings and commands in it
(and a server's loop, where it serves).
"""

# Nothing imported here: the class (ext_shell.py) loads cqlsh and the driver, and a part of the
# shell read without them (its declarations, its bounds) loads this package first.
