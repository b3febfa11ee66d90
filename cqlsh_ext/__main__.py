import sys

from cqlsh_ext.cli import main

sys.exit(main())
