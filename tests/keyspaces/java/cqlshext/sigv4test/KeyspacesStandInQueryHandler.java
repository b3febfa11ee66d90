package cqlshext.sigv4test;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.util.Map;
import org.apache.cassandra.audit.AuditLogContext;
import org.apache.cassandra.audit.AuditLogEntryType;
import org.apache.cassandra.cql3.CQLStatement;
import org.apache.cassandra.cql3.QueryOptions;
import org.apache.cassandra.cql3.QueryProcessor;
import org.apache.cassandra.cql3.UntypedResultSet;
import org.apache.cassandra.cql3.statements.SelectStatement;
import org.apache.cassandra.db.Clustering;
import org.apache.cassandra.schema.Schema;
import org.apache.cassandra.service.ClientState;
import org.apache.cassandra.service.QueryState;
import org.apache.cassandra.transport.Dispatcher;
import org.apache.cassandra.transport.messages.ResultMessage;
import org.apache.cassandra.utils.ByteBufferUtil;

/**
 * TEST DOUBLE of Amazon Keyspaces' asynchronous table creation, on top of EmptyPagesQueryHandler's
 * empty pages. A table created in any keyspace gets a row in {@code system_schema_mcs.tables} (a
 * real table the harness creates with Keyspaces' key: keyspace_name, table_name; and status) with
 * status CREATING; a SELECT of one table's row answers as the row is, then marks it ACTIVE if it was
 * CREATING, so a client polling a table reads CREATING, then ACTIVE, as it would on Keyspaces.
 * Dropping the table removes its row. Enabled with -Dcassandra.custom_query_handler_class=this class.
 */
public class KeyspacesStandInQueryHandler extends EmptyPagesQueryHandler {
    public static final String SCHEMA_KEYSPACE = "system_schema_mcs";
    private static final String TABLES = SCHEMA_KEYSPACE + ".tables";

    @Override
    public ResultMessage process(CQLStatement statement, QueryState state, QueryOptions options,
                                 Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        ResultMessage result = super.process(statement, state, options, customPayload, requestTime);
        AuditLogContext context = statement.getAuditLogContext();
        if (SCHEMA_KEYSPACE.equals(context.keyspace)) {
            if (statement instanceof SelectStatement && "tables".equals(((SelectStatement) statement).table())) {
                activate((SelectStatement) statement, options, state);
            }
        } else if (context.auditLogEntryType == AuditLogEntryType.CREATE_TABLE) {
            record("INSERT INTO " + TABLES + " (keyspace_name, table_name, status) VALUES (?, ?, 'CREATING')",
                    context);
        } else if (context.auditLogEntryType == AuditLogEntryType.DROP_TABLE) {
            record("DELETE FROM " + TABLES + " WHERE keyspace_name = ? AND table_name = ?", context);
        }
        return result;
    }

    /** A table's row written; before the harness has made system_schema_mcs.tables there is none to write. */
    private static void record(String cql, AuditLogContext context) {
        if (Schema.instance.getTableMetadata(SCHEMA_KEYSPACE, "tables") == null) {
            return;
        }
        QueryProcessor.executeInternal(cql, context.keyspace, context.scope);
    }

    /** The table the SELECT named (keyspace_name = ? AND table_name = ?) is ACTIVE from now on. */
    private static synchronized void activate(SelectStatement select, QueryOptions options, QueryState state) {
        ClientState client = state.getClientState();
        for (ByteBuffer keyspace : select.getRestrictions().getPartitionKeys(options, client)) {
            for (Clustering<?> table : select.getRestrictions().getClusteringColumns(options, client)) {
                if (table.size() != 1) {
                    continue;  // not one table named: nothing is activated
                }
                String ks = text(keyspace);
                String name = text(table.bufferAt(0));
                UntypedResultSet row = QueryProcessor.executeInternal(
                        "SELECT status FROM " + TABLES + " WHERE keyspace_name = ? AND table_name = ?", ks, name);
                if (!row.isEmpty() && "CREATING".equals(row.one().getString("status"))) {
                    QueryProcessor.executeInternal("UPDATE " + TABLES + " SET status = 'ACTIVE' "
                            + "WHERE keyspace_name = ? AND table_name = ?", ks, name);
                }
            }
        }
    }

    private static String text(ByteBuffer bytes) {
        try {
            return ByteBufferUtil.string(bytes);
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
