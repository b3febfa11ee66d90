package cqlshext.sigv4test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Map;
import org.apache.cassandra.cql3.BatchQueryOptions;
import org.apache.cassandra.cql3.CQLStatement;
import org.apache.cassandra.cql3.QueryHandler;
import org.apache.cassandra.cql3.QueryOptions;
import org.apache.cassandra.cql3.QueryProcessor;
import org.apache.cassandra.cql3.ResultSet;
import org.apache.cassandra.cql3.statements.BatchStatement;
import org.apache.cassandra.cql3.statements.SelectStatement;
import org.apache.cassandra.service.ClientState;
import org.apache.cassandra.service.QueryState;
import org.apache.cassandra.service.pager.PagingState;
import org.apache.cassandra.transport.Dispatcher;
import org.apache.cassandra.transport.messages.ResultMessage;
import org.apache.cassandra.utils.MD5Digest;

/**
 * TEST DOUBLE of a behaviour of Amazon Keyspaces: result pages that are empty but still have more
 * data. Paged SELECTs (simple statements) on keyspace {@code ks_pages} get an empty page with a
 * paging state before every real page; everything else goes to Cassandra's QueryProcessor.
 *
 * The empty page's paging state wraps the request's own one behind a marker, so that following it
 * returns the real page. Enabled with -Dcassandra.custom_query_handler_class=this class.
 */
public class EmptyPagesQueryHandler implements QueryHandler {
    public static final String KEYSPACE = "ks_pages";
    private static final byte[] MARK = "cqlsh-ext-empty-page:".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private final QueryProcessor delegate = QueryProcessor.instance;

    @Override
    public CQLStatement parse(String query, QueryState state, QueryOptions options) {
        return delegate.parse(query, state, options);
    }

    @Override
    public ResultMessage process(CQLStatement statement, QueryState state, QueryOptions options,
                                 Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        if (!(statement instanceof SelectStatement) || options.getPageSize() <= 0
                || !KEYSPACE.equals(((SelectStatement) statement).keyspace())) {
            return delegate.process(statement, state, options, customPayload, requestTime);
        }
        PagingState paging = options.getPagingState();
        byte[] key = paging == null || paging.partitionKey == null ? null : bytes(paging.partitionKey);
        if (key != null && key.length >= MARK.length && Arrays.equals(Arrays.copyOf(key, MARK.length), MARK)) {
            // Following an empty page: the real page the request was for.
            byte[] inner = Arrays.copyOfRange(key, MARK.length, key.length);
            PagingState original = inner.length == 0 ? null
                    : PagingState.deserialize(ByteBuffer.wrap(inner), options.getProtocolVersion());
            QueryOptions real = QueryOptions.create(options.getConsistency(), options.getValues(),
                    options.skipMetadata(), options.getPageSize(), original, options.getSerialConsistency(),
                    options.getProtocolVersion(), options.getKeyspace());
            return delegate.process(statement, state, real, customPayload, requestTime);
        }
        byte[] inner = paging == null ? new byte[0] : bytes(paging.serialize(options.getProtocolVersion()));
        byte[] marked = Arrays.copyOf(MARK, MARK.length + inner.length);
        System.arraycopy(inner, 0, marked, MARK.length, inner.length);
        ResultSet.ResultMetadata metadata = ((SelectStatement) statement).getResultMetadata().copy();
        metadata.setHasMorePages(new PagingState(ByteBuffer.wrap(marked), null, Integer.MAX_VALUE, Integer.MAX_VALUE));
        return new ResultMessage.Rows(new ResultSet(metadata, new ArrayList<>()));
    }

    private static byte[] bytes(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] out = new byte[copy.remaining()];
        copy.get(out);
        return out;
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
        return delegate.processPrepared(statement, state, options, customPayload, requestTime);
    }

    @Override
    public ResultMessage processBatch(BatchStatement statement, QueryState state, BatchQueryOptions options,
                                      Map<String, ByteBuffer> customPayload, Dispatcher.RequestTime requestTime) {
        return delegate.processBatch(statement, state, options, customPayload, requestTime);
    }
}
