from cqlsh_ext.cli import run

run()
