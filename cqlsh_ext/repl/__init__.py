"""The interactive front end: cqlsh's shell behind a prompt_toolkit prompt.

Only app.py and the modules it imports (completer, lexer, history, keybindings) import
prompt_toolkit, and app.py is imported only when an interactive session starts, so `-e`, `-f` and
piped input never load it. The other modules are plain Python:

- shellhooks.py: what the Shell does differently for interactive use (loop choice, prompt
  preload, reconnection, HISTORY and HELP additions); results: cqlsh_ext.output.pipeline;
- statement.py: "is this input a complete statement?" with cqlsh's own splitter;
- passwords.py: what may carry a password, kept out of every history (cqlsh's readline one too);
- pager.py: long results through $PAGER;
- toolbar.py: the bottom toolbar's text.
"""
