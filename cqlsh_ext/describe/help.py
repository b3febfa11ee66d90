"""What HELP DESCRIBE PAYLOAD (and HELP PAYLOAD) says: DESCRIBE PAYLOAD in a screenful after its
form (the whole story: docs/describe.md). HELP DESCRIBE is cqlsh's own text, with a line pointing
here."""

from cqlsh_ext.codecs.base import CODEC_EXAMPLES
from cqlsh_ext.common.text import fill
from cqlsh_ext.payload.names import EXAMPLE_SPEC

_WHAT = fill(
    "What a blob (or text) column holds across its values: the encodings found "
    f"({CODEC_EXAMPLES[-1]}>json, {EXAMPLE_SPEC}, json, text; binary payloads, values in no known format, "
    "values that failed to decode, values cut by the output cap) with counts and shares; then every path "
    "inside the JSON and records, as a tree: the share of values that have it, the types seen there with "
    "their shares, list lengths, string lengths, numbers' least and most, distinct values, and the values "
    "themselves with their counts where there are few. Keys that look like data (dates, ids, numbers) fold "
    "into one * entry. A map of blobs is described per key (m['k']), a UDT per blob field.")

#: What HELP DESCRIBE PAYLOAD says after the statement's form (features/help.py: the form from its
#: declaration).
PAYLOAD_ABOUT = _WHAT + """

          SAMPLE n reads n rows in random token ranges: every share comes with
          its 95 % interval (SEED s with it draws the same sample again).
          ALL reads every row (worker processes for a large table; a question
          first on Amazon Keyspaces or from 1 GB, ALL CONFIRM goes ahead from
          a script): counts are exact. Neither: the table's estimated size
          decides, and the first line says which. WHERE filters as a payload
          query's WHERE does (HELP QUERIES). JSON prints one JSON document.
          Ctrl-C keeps what was read.

          DESCRIBE PAYLOAD shop.orders.data;
          DESCRIBE PAYLOAD shop.orders.data WHERE data.status = 'FAILED' ALL;
          DESC PAYLOAD orders.data SAMPLE 5000 JSON

          One line, as every DESCRIBE: Enter runs it. DESC PAYLOAD alone
          describes an object named payload, as in cqlsh.
"""

#: The line HELP DESCRIBE adds after cqlsh's own text.
DESCRIBE_SEE_ALSO = ("What a blob column holds across its values (DESCRIBE PAYLOAD ks.table.column): "
                     "HELP DESCRIBE PAYLOAD, cqlsh-ext docs describe.")
