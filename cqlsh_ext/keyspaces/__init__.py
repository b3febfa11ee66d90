"""Amazon Keyspaces: SigV4 authentication, TLS and Keyspaces' defaults (--keyspaces, --sigv4, ...).

options  flags and cqlshrc settings (standard library only: plain start-up stays fast)
auth     SigV4 through cassandra-sigv4 with boto3's whole credential chain (imports boto3)
tls      SSLContext from the system trust store or --certfile, for every connection cqlsh opens
wiring   how ExtShell.__init__ uses the above; COPY FROM consistency
describe client-side DESCRIBE for servers reporting 3.x
paging   empty result pages that still have more data
tables   a new table's status in system_schema_mcs.tables: waiting until it is ACTIVE
errors   one-line messages naming the fix; secrets redacted
"""
