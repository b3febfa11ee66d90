package com.amazon.helenus.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import cqlshext.sigv4test.SigV4Verifier;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.cassandra.auth.AuthenticatedUser;
import org.apache.cassandra.auth.PasswordAuthenticator;
import org.apache.cassandra.exceptions.AuthenticationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TEST DOUBLE of Amazon Keyspaces' authenticator, for cqlsh-ext's tests only. It carries the class
 * name Keyspaces announces in its AUTHENTICATE message; nothing else is Amazon's.
 *
 * SigV4 (initial response {@code SigV4\0\0}): answers {@code nonce=<32 chars>}, then verifies the
 * signed response with {@link SigV4Verifier} against test credentials. Any other initial response
 * is SASL PLAIN and goes to Cassandra's own PasswordAuthenticator (service-specific credentials).
 *
 * System properties (all optional):
 * <ul>
 * <li>{@code sigv4test.credentials}: file re-read at every login, one credential a line:
 *     {@code ACCESS_KEY SECRET [role=ROLE] [token=SESSION_TOKEN] [expired]}; '#' starts a comment</li>
 * <li>{@code sigv4test.sts_url}: a moto server's {@code /moto-api/data.json}; access keys of the
 *     roles it has handed out (AssumeRole) are accepted with their secret and session token</li>
 * <li>{@code sigv4test.region} (default us-east-1), {@code sigv4test.max_skew_seconds} (900),
 *     {@code sigv4test.role} (role a SigV4 login gets by default: cassandra)</li>
 * </ul>
 * Logs never contain a secret or a signature.
 */
public class HelenusAuthenticator extends PasswordAuthenticator {
    private static final Logger logger = LoggerFactory.getLogger(HelenusAuthenticator.class);
    private static final byte[] SIGV4_INITIAL_RESPONSE = "SigV4\0\0".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One known credential. */
    static final class Credential {
        final String secret;
        final String token;  // null: a long-term key, no session token expected
        final String role;
        final boolean expired;

        Credential(String secret, String token, String role, boolean expired) {
            this.secret = secret;
            this.token = token;
            this.role = role;
            this.expired = expired;
        }
    }

    @Override
    public SaslNegotiator newSaslNegotiator(InetAddress clientAddress) {
        return new Negotiator(super.newSaslNegotiator(clientAddress));
    }

    private static String region() {
        return System.getProperty("sigv4test.region", "us-east-1");
    }

    private static String defaultRole() {
        return System.getProperty("sigv4test.role", "cassandra");
    }

    static Credential lookup(String accessKey) throws IOException, InterruptedException {
        String file = System.getProperty("sigv4test.credentials");
        if (file != null && Files.exists(Path.of(file))) {
            for (String raw : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8)) {
                String line = raw.replaceAll("#.*", "").trim();
                if (line.isEmpty()) {
                    continue;
                }
                String[] parts = line.split("\\s+");
                if (parts.length < 2 || !parts[0].equals(accessKey)) {
                    continue;
                }
                String token = null;
                String role = defaultRole();
                boolean expired = false;
                for (String extra : Arrays.copyOfRange(parts, 2, parts.length)) {
                    if (extra.startsWith("token=")) {
                        token = extra.substring("token=".length());
                    } else if (extra.startsWith("role=")) {
                        role = extra.substring("role=".length());
                    } else if (extra.equals("expired")) {
                        expired = true;
                    }
                }
                return new Credential(parts[1], token, role, expired);
            }
        }
        String sts = System.getProperty("sigv4test.sts_url");
        if (sts != null && !sts.isEmpty()) {
            HttpResponse<String> answer = HTTP.send(
                    HttpRequest.newBuilder(URI.create(sts)).timeout(Duration.ofSeconds(5)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode roles = new ObjectMapper().readTree(answer.body()).path("sts").path("AssumedRole");
            for (JsonNode role : roles) {
                if (accessKey.equals(role.path("access_key_id").asText())) {
                    return new Credential(role.path("secret_access_key").asText(),
                            role.path("session_token").asText(), defaultRole(), false);
                }
            }
        }
        return null;
    }

    private static final class Negotiator implements SaslNegotiator {
        private final SaslNegotiator plain;
        private boolean usesPlain;
        private String nonce;
        private AuthenticatedUser user;

        Negotiator(SaslNegotiator plain) {
            this.plain = plain;
        }

        @Override
        public byte[] evaluateResponse(byte[] response) throws AuthenticationException {
            if (usesPlain) {
                return plain.evaluateResponse(response);
            }
            if (nonce == null) {
                if (!Arrays.equals(response, SIGV4_INITIAL_RESPONSE)) {
                    usesPlain = true;  // \0user\0password: service-specific credentials
                    return plain.evaluateResponse(response);
                }
                byte[] random = new byte[16];
                RANDOM.nextBytes(random);
                nonce = HexFormat.of().formatHex(random);  // exactly 32 ASCII characters
                return ("nonce=" + nonce).getBytes(StandardCharsets.US_ASCII);
            }
            if (user != null) {
                throw new AuthenticationException("SigV4 handshake already complete");
            }
            user = verify(new String(response, StandardCharsets.UTF_8));
            return null;
        }

        private AuthenticatedUser verify(String text) throws AuthenticationException {
            SigV4Verifier.Response response;
            try {
                response = SigV4Verifier.parse(text);
            } catch (SigV4Verifier.Rejected e) {
                throw fail("?", e.getMessage());
            }
            Credential credential;
            try {
                credential = lookup(response.accessKey);
            } catch (IOException | InterruptedException e) {
                throw fail(response.accessKey, "credential lookup failed: " + e);
            }
            if (credential == null) {
                throw fail(response.accessKey, "The security token included in the request is invalid "
                        + "(unknown access key ID)");
            }
            long now = System.currentTimeMillis() / 1000;
            long maxSkew = Long.getLong("sigv4test.max_skew_seconds", SigV4Verifier.DEFAULT_MAX_SKEW_SECONDS);
            try {
                SigV4Verifier.verify(response, credential.secret, region(), nonce, now, maxSkew);
            } catch (SigV4Verifier.Rejected e) {
                throw fail(response.accessKey, e.getMessage());
            }
            if (credential.token != null || response.sessionToken != null) {
                if (credential.token == null || !credential.token.equals(response.sessionToken)) {
                    throw fail(response.accessKey, "The security token included in the request is invalid");
                }
                if (credential.expired) {
                    throw fail(response.accessKey, "The security token included in the request is expired");
                }
            }
            logger.info("SigV4 login accepted for access key {} as role {}", response.accessKey, credential.role);
            return new AuthenticatedUser(credential.role);
        }

        private static AuthenticationException fail(String accessKey, String reason) {
            logger.info("SigV4 login refused for access key {}: {}", accessKey, reason);
            return new AuthenticationException("Authentication failure: " + reason);
        }

        @Override
        public boolean isComplete() {
            return usesPlain ? plain.isComplete() : user != null;
        }

        @Override
        public AuthenticatedUser getAuthenticatedUser() throws AuthenticationException {
            if (usesPlain) {
                return plain.getAuthenticatedUser();
            }
            if (user == null) {
                throw new AuthenticationException("SigV4 handshake not complete");
            }
            return user;
        }
    }
}
