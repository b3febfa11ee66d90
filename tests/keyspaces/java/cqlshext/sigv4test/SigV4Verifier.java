package cqlshext.sigv4test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The server side of Amazon Keyspaces' SigV4 handshake, as cassandra-sigv4 4.0.2 signs it
 * (docs/keyspaces.md, "How the SigV4 login works"). Test code: no Cassandra dependency, so it is unit-tested on its own.
 *
 * <pre>
 * scope             = yyyyMMdd/region/cassandra/aws4_request   (UTC date of amzdate)
 * canonical request = PUT\n/authenticate\n&lt;query&gt;\nhost:cassandra\n\nhost\n&lt;hex sha256(nonce)&gt;
 * string to sign    = AWS4-HMAC-SHA256\n&lt;amzdate&gt;\n&lt;scope&gt;\n&lt;hex sha256(canonical request)&gt;
 * signing key       = HMAC chain "AWS4"+secret -> date -> region -> cassandra -> aws4_request
 * </pre>
 *
 * The signature is computed over the literal amzdate string the client sent (the Python plugin
 * can send ".1000Z" milliseconds); the session token is not signed.
 *
 * Command line (for the tests): {@code sign SECRET ACCESS_KEY REGION AMZDATE NONCE} prints
 * {@code signing_key=<hex>} and {@code signature=<hex>}; {@code verify RESPONSE SECRET REGION NONCE
 * NOW_EPOCH_SECONDS} prints {@code ok} or {@code rejected: <reason>}.
 */
public final class SigV4Verifier {
    public static final String SERVICE = "cassandra";
    public static final String ALGORITHM = "AWS4-HMAC-SHA256";
    public static final long DEFAULT_MAX_SKEW_SECONDS = 900;  // X-Amz-Expires=900

    private static final Pattern SIGNATURE = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern AMZDATE = Pattern.compile(
            "(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})\\.(\\d{3,4})Z");

    private SigV4Verifier() {
    }

    /** A client's second AUTH_RESPONSE, split into its fields. */
    public static final class Response {
        public final String signature;
        public final String accessKey;
        public final String amzdate;
        public final String sessionToken;  // null when absent

        Response(String signature, String accessKey, String amzdate, String sessionToken) {
            this.signature = signature;
            this.accessKey = accessKey;
            this.amzdate = amzdate;
            this.sessionToken = sessionToken;
        }
    }

    /** Why a response was refused; the message is what the client is told. */
    public static final class Rejected extends Exception {
        public Rejected(String message) {
            super(message);
        }
    }

    /**
     * Parses {@code signature=<64 hex>,access_key=<id>,amzdate=<iso>[,session_token=<t>]}.
     * The token may itself hold any character but a comma is not expected in it; it is taken
     * to the end of the response all the same.
     */
    public static Response parse(String text) throws Rejected {
        Map<String, String> fields = new LinkedHashMap<>();
        String rest = text;
        for (String key : new String[] {"signature", "access_key", "amzdate"}) {
            if (!rest.startsWith(key + "=")) {
                throw new Rejected("malformed SigV4 response: expected " + key + "=");
            }
            int comma = rest.indexOf(',');
            String value = comma < 0 ? rest.substring(key.length() + 1) : rest.substring(key.length() + 1, comma);
            fields.put(key, value);
            rest = comma < 0 ? "" : rest.substring(comma + 1);
        }
        String token = null;
        if (!rest.isEmpty()) {
            if (!rest.startsWith("session_token=")) {
                throw new Rejected("malformed SigV4 response: unexpected field after amzdate");
            }
            token = rest.substring("session_token=".length());
        }
        if (!SIGNATURE.matcher(fields.get("signature")).matches()) {
            throw new Rejected("malformed SigV4 response: signature is not 64 lowercase hex digits");
        }
        if (fields.get("access_key").isEmpty()) {
            throw new Rejected("malformed SigV4 response: empty access_key");
        }
        parseAmzDate(fields.get("amzdate"));
        return new Response(fields.get("signature"), fields.get("access_key"), fields.get("amzdate"), token);
    }

    /** The instant an amzdate names (the fraction is ignored: it may have 3 or 4 digits). */
    public static Instant parseAmzDate(String amzdate) throws Rejected {
        Matcher m = AMZDATE.matcher(amzdate);
        if (!m.matches()) {
            throw new Rejected("malformed SigV4 response: amzdate is not yyyy-MM-ddTHH:mm:ss.SSSZ");
        }
        return LocalDateTime.of(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5)),
                Integer.parseInt(m.group(6))).toInstant(ZoneOffset.UTC);
    }

    public static String datestamp(String amzdate) {
        return amzdate.substring(0, 10).replace("-", "");
    }

    public static String scope(String datestamp, String region) {
        return datestamp + "/" + region + "/" + SERVICE + "/aws4_request";
    }

    /** Python's urllib.parse.quote_plus: unreserved characters kept, space as '+', the rest %XX. */
    public static String quotePlus(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == '-' || c == '~') {
                out.append((char) c);
            } else if (c == ' ') {
                out.append('+');
            } else {
                out.append('%').append(String.format("%02X", c));
            }
        }
        return out.toString();
    }

    public static String canonicalRequest(String accessKey, String scope, String amzdate, String nonce) {
        List<String> query = new ArrayList<>(List.of(
                "X-Amz-Algorithm=" + ALGORITHM,
                "X-Amz-Credential=" + accessKey + "%2F" + quotePlus(scope),
                "X-Amz-Date=" + quotePlus(amzdate),
                "X-Amz-Expires=900"));
        Collections.sort(query);
        return "PUT\n/authenticate\n" + String.join("&", query) + "\nhost:" + SERVICE + "\n\nhost\n"
                + sha256Hex(nonce);
    }

    public static byte[] signingKey(String secret, String datestamp, String region) {
        byte[] key = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), datestamp);
        key = hmac(key, region);
        key = hmac(key, SERVICE);
        return hmac(key, "aws4_request");
    }

    public static String signature(String secret, String accessKey, String region, String amzdate, String nonce) {
        String date = datestamp(amzdate);
        String scope = scope(date, region);
        String stringToSign = ALGORITHM + "\n" + amzdate + "\n" + scope + "\n"
                + sha256Hex(canonicalRequest(accessKey, scope, amzdate, nonce));
        return HexFormat.of().formatHex(hmac(signingKey(secret, date, region), stringToSign));
    }

    /**
     * Checks one response against the secret the server holds for its access key.
     * nowEpochSeconds is the server's clock; the amzdate must be within maxSkewSeconds of it.
     */
    public static void verify(Response response, String secret, String region, String nonce,
                              long nowEpochSeconds, long maxSkewSeconds) throws Rejected {
        long sent = parseAmzDate(response.amzdate).getEpochSecond();
        if (Math.abs(nowEpochSeconds - sent) > maxSkewSeconds) {
            throw new Rejected("Signature expired: amzdate " + response.amzdate + " is more than "
                    + maxSkewSeconds + " seconds away from the server time "
                    + Instant.ofEpochSecond(nowEpochSeconds) + " (check the client clock)");
        }
        String expected = signature(secret, response.accessKey, region, response.amzdate, nonce);
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                response.signature.getBytes(StandardCharsets.US_ASCII))) {
            throw new Rejected("The request signature we calculated does not match the signature you "
                    + "provided. Check your AWS secret access key and signing method.");
        }
    }

    static String sha256Hex(String data) {
        try {
            return HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(data.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) {
        if (args.length == 6 && args[0].equals("sign")) {
            String secret = args[1];
            String accessKey = args[2];
            String region = args[3];
            String amzdate = args[4];
            String nonce = args[5];
            System.out.println("signing_key=" + HexFormat.of().formatHex(signingKey(secret, datestamp(amzdate), region)));
            System.out.println("signature=" + signature(secret, accessKey, region, amzdate, nonce));
            return;
        }
        if (args.length == 6 && args[0].equals("verify")) {
            try {
                verify(parse(args[1]), args[2], args[3], args[4], Long.parseLong(args[5]), DEFAULT_MAX_SKEW_SECONDS);
                System.out.println("ok");
            } catch (Rejected e) {
                System.out.println("rejected: " + e.getMessage());
            }
            return;
        }
        System.err.println("usage: sign SECRET ACCESS_KEY REGION AMZDATE NONCE | "
                + "verify RESPONSE SECRET REGION NONCE NOW_EPOCH_SECONDS");
        System.exit(2);
    }
}
