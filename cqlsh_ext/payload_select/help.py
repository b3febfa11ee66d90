"""HELP QUERIES: payload queries in a screenful (the whole story: docs/queries.md)."""

#: After cqlsh's HELP SELECT (a web address): where the SELECT of payload paths is described.
SELECT_SEE_ALSO = "Fields inside blob values (data.status, ...) in a SELECT: HELP QUERIES."

QUERIES_HELP = """
        QUERIES [cqlsh-ext]: fields inside blob values, in a SELECT

          Paths: data.status, data.customer.name, data.items[0].sku,
          data."order-id" (keys are case sensitive; quote one that is not a
          plain name); m['k'].status for a map of blobs, u.payload.status for
          a UDT's blob field. Each blob is decoded as the display decodes it.
          Filters (AND, no OR): path = != < <= > >= IN LIKE, IS [NOT] NULL,
          CONTAINS; data LIKE '%text%' and data IS [NOT] UNDECODABLE on the
          whole value. Aggregates: count(*), count/min/max/sum/avg(path), with
          GROUP BY path (undecodable values apart); DISTINCT, ORDER BY path.

          The server runs the ordinary columns and WHERE conditions; paths,
          payload filters, aggregates, GROUP BY, DISTINCT and ORDER BY run
          here, on the rows the server returns. Deciding rows here reads past
          named partitions: as in CQL, that needs ALLOW FILTERING (not when
          the WHERE names the partitions, nor for paths that are only
          selected). A large table (any table on Amazon Keyspaces) is scanned
          only after a question; ALLOW FILTERING CONFIRM goes ahead without it
          (scripts). Undecodable values never match and are counted on the
          closing line.

          SELECT pk, data.status, data.customer.name FROM ks.t
              WHERE data.status = 'FAILED' ALLOW FILTERING;
          SELECT data.status, count(*) FROM ks.t GROUP BY data.status
              ALLOW FILTERING;
          SELECT data.items[0].sku FROM ks.t
              WHERE pk = 'p1' AND data.customer.tier = 'gold';

          Tab after data. offers keys; DESCRIBE PAYLOAD ks.t.data lists paths
          (HELP PAYLOAD). COPY (SELECT ...) TO 'file.parquet': HELP EXPORT.
        """
