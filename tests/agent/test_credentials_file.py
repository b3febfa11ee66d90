"""A credentials file that is no ini file (a line without `=`, the password's among them): one line
naming the line by its number, exit code 2, before anything connects; never an internal error, whose
crash report held configparser's message quoting the line, password and all."""

from __future__ import annotations

import os
from pathlib import Path

from shell_runner import ext, said_lines

#: The password on the line that is no `key = value` line.
SECRET = "s3cret-never-kept-9d1c"


def _kept_nowhere(home: Path, *said: str) -> None:
    assert not any(SECRET in text for text in said), said
    crashes = home / ".cassandra" / "crashes"
    reports = list(crashes.iterdir()) if crashes.is_dir() else []
    assert not reports, [report.read_text() for report in reports]


def test_a_credentials_file_that_is_no_ini_file_is_one_line(cassandra, home: Path) -> None:
    named = home / "creds"
    named.write_text(f"[plain_text_auth]\nusername = someone\npassword {SECRET}\n")
    os.chmod(named, 0o600)  # (cqlsh reads only a file of the user's alone)
    result = ext(cassandra, home, "--credentials", str(named), "-e", "SELECT now() FROM system.local",
                 login=False)
    _kept_nowhere(home, result.stdout, result.stderr)
    assert result.returncode == 2, result.stderr
    assert said_lines(result.stderr) == [f"cqlsh-ext: error: --credentials: credentials file {named}: line 3 "
                                         "is neither a [section] header nor a key = value line"]
    # The one beside cqlshrc is read too, -u and -p given or not (cqlsh reads it for its auth provider).
    default = home / ".cassandra" / "credentials"
    default.parent.mkdir(exist_ok=True)
    os.replace(named, default)
    result = ext(cassandra, home, "-e", "SELECT now() FROM system.local")
    _kept_nowhere(home, result.stdout, result.stderr)
    assert result.returncode == 2, result.stderr
    assert said_lines(result.stderr) == [f"cqlsh-ext: error: credentials file {default}: line 3 is neither a "
                                         "[section] header nor a key = value line"]
