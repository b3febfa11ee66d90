package cqlshext.faults;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.cassandra.cql3.BatchQueryOptions;
import org.apache.cassandra.cql3.CQLStatement;
import org.apache.cassandra.cql3.QueryHandler;
import org.apache.cassandra.cql3.QueryOptions;
import org.apache.cassandra.cql3.QueryProcessor;
import org.apache.cassandra.cql3.statements.BatchStatement;
import org.apache.cassandra.cql3.statements.ModificationStatement;
import org.apache.cassandra.cql3.statements.SelectStatement;
import org.apache.cassandra.db.ConsistencyLevel;
import org.apache.cassandra.db.WriteType;
import org.apache.cassandra.exceptions.OverloadedException;
import org.apache.cassandra.exceptions.ReadTimeoutException;
import org.apache.cassandra.exceptions.UnavailableException;
import org.apache.cassandra.exceptions.WriteTimeoutException;
import org.apache.cassandra.service.ClientState;
import org.apache.cassandra.service.QueryState;
import org.apache.cassandra.transport.Dispatcher;
import org.apache.cassandra.transport.ServerError;
import org.apache.cassandra.transport.messages.ResultMessage;
import org.apache.cassandra.utils.MD5Digest;

/**
 * TEST DOUBLE: injects the errors and delays a loaded node or Amazon Keyspaces' throttling gives,
 * into SELECTs on keyspaces whose name starts with {@code faults_}; everything else goes to
 * Cassandra's QueryProcessor untouched. Enabled with
 * -Dcassandra.custom_query_handler_class=cqlshext.faults.FaultQueryHandler.
 *
 * The plan is a file (-Dcqlshext.faults.file) of one line, "KIND COUNT [DELAY_MS [AFTER [GENERATION
 * [TABLE]]]]", re-read whenever it changes: after AFTER matching SELECT pages pass untouched, the next
 * COUNT fail with KIND (overloaded, read_timeout, write_timeout, unavailable, throttled: a ServerError
 * as Keyspaces words it; server_error: one that is not throttling) or, for KIND delay, are answered
 * DELAY_MS late. COUNT -1 means every page until the file changes; an empty file means no faults.
 * With TABLE (a regular expression), only requests on tables whose name matches it are matched, and
 * writes (INSERT, UPDATE, DELETE) as well as SELECTs: one table made slow or failing among others.
 *
 * What the plan met is written beside it (the plan file's name + ".met"), one line "GENERATION MET
 * ANSWERED": the requests it delayed or failed, and those of them answered (the delay over, or the
 * error sent), so that a test waits on the server's own count, not on a time.
 */
public class FaultQueryHandler implements QueryHandler {
    private static final String PREFIX = "faults_";
    private final QueryProcessor delegate = QueryProcessor.instance;
    private final Path planFile = Paths.get(System.getProperty("cqlshext.faults.file", "/nonexistent"));
    private String planText = "";
    private String kind = "";
    private long remaining = 0;
    private long delayMs = 0;
    private long after = 0;
    private Pattern table = null;
    private String generation = "";
    private long met = 0;
    private long answered = 0;

    /**
     * The fault for a request on {@code tableName} ("" for none), counting it down; synchronized:
     * requests run in parallel. Writes match only a plan that names tables.
     */
    private synchronized String next(String tableName, boolean write) {
        String text;
        try {
            text = Files.exists(planFile) ? new String(Files.readAllBytes(planFile), StandardCharsets.UTF_8).trim() : "";
        } catch (IOException e) {
            text = "";
        }
        if (!text.equals(planText)) {
            planText = text;
            String[] parts = text.isEmpty() ? new String[0] : text.split("\\s+");
            kind = parts.length > 0 ? parts[0] : "";
            remaining = parts.length > 1 ? Long.parseLong(parts[1]) : 0;
            delayMs = parts.length > 2 ? Long.parseLong(parts[2]) : 0;
            after = parts.length > 3 ? Long.parseLong(parts[3]) : 0;
            generation = parts.length > 4 ? parts[4] : "";
            table = parts.length > 5 ? Pattern.compile(parts[5]) : null;
            met = 0;
            answered = 0;
        }
        if (kind.isEmpty() || remaining == 0) {
            return "";
        }
        if (table == null ? write : tableName == null || !table.matcher(tableName).matches()) {
            return "";
        }
        if (after > 0) {
            after--;
            return "";
        }
        if (remaining > 0) {
            remaining--;
        }
        met++;
        writeMet();
        return kind;
    }

    /** A request the plan met has its answer (its delay is over, or its error is on its way). */
    private synchronized void answered() {
        answered++;
        writeMet();
    }

    private void writeMet() {
        Path file = Paths.get(planFile + ".met");
        Path tmp = Paths.get(planFile + ".met.tmp");
        try {
            Files.write(tmp, (generation + " " + met + " " + answered + "\n").getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                       java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // The count is for tests that wait on it; a request is never failed for it.
        }
    }

    private void inject(CQLStatement statement) {
        String keyspace;
        String tableName;
        boolean write = statement instanceof ModificationStatement;
        if (statement instanceof SelectStatement) {
            keyspace = ((SelectStatement) statement).keyspace();
            tableName = ((SelectStatement) statement).table();
        } else if (write) {
            keyspace = ((ModificationStatement) statement).keyspace();
            tableName = ((ModificationStatement) statement).table();
        } else {
            return;
        }
        if (keyspace == null || !keyspace.startsWith(PREFIX)) {
            return;
        }
        String fault = next(tableName, write);
        if (fault.isEmpty()) {
            return;
        }
        try {
            fail(fault);
        } finally {
            answered();
        }
    }

    private void fail(String fault) {
        switch (fault) {
            case "overloaded":
                throw new OverloadedException("cqlsh-ext test: overloaded");
            case "read_timeout":
                throw new ReadTimeoutException(ConsistencyLevel.LOCAL_QUORUM, 0, 1, false);
            case "write_timeout":
                throw new WriteTimeoutException(WriteType.SIMPLE, ConsistencyLevel.LOCAL_QUORUM, 0, 1);
            case "unavailable":
                throw UnavailableException.create(ConsistencyLevel.LOCAL_QUORUM, 1, 0);
            case "throttled":
                throw new ServerError("Request was throttled: read capacity exceeded (cqlsh-ext test)");
            case "server_error":
                throw new ServerError("cqlsh-ext test: a server error");
            case "delay":
                try {
                    Thread.sleep(delayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            default:
                throw new ServerError("cqlsh-ext test: unknown fault " + fault);
        }
    }

    @Override
    public CQLStatement parse(String query, QueryState state, QueryOptions options) {
        return delegate.parse(query, state, options);
    }

    @Override
    public ResultMessage process(CQLStatement statement, QueryState state, QueryOptions options,
                                 Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        inject(statement);
        return delegate.process(statement, state, options, customPayload, requestTime);
    }

    @Override
    public ResultMessage.Prepared prepare(String query, ClientState state, Map<String, ByteBuffer> customPayload) {
        return delegate.prepare(query, state, customPayload);
    }

    @Override
    public QueryHandler.Prepared getPrepared(MD5Digest id) {
        return delegate.getPrepared(id);
    }

    @Override
    public ResultMessage processPrepared(CQLStatement statement, QueryState state, QueryOptions options,
                                         Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        inject(statement);
        return delegate.processPrepared(statement, state, options, customPayload, requestTime);
    }

    @Override
    public ResultMessage processBatch(BatchStatement statement, QueryState state, BatchQueryOptions options,
                                      Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        return delegate.processBatch(statement, state, options, customPayload, requestTime);
    }
}
