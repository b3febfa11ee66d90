"""Run first by every Python process that has this folder on its PYTHONPATH (tests/road_counts.py's
program_env): with CQLSH_EXT_TEST_ROAD_COUNTS set, the one road's counters are installed in it
(`cqlsh-ext spark`'s driver and Spark's Python workers, which inherit its environment)."""

import os
import sys

if os.environ.get("CQLSH_EXT_TEST_ROAD_COUNTS"):
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/, last
    from road_counts import install_in_process

    install_in_process(os.environ["CQLSH_EXT_TEST_ROAD_COUNTS"])
