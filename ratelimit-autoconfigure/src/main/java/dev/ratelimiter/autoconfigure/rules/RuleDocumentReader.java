package dev.ratelimiter.autoconfigure.rules;

import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the rule document of a {@code PUT}: JSON only (a form, which a browser can send anywhere, is 415), at most
 * {@link #MAX_BYTES}, strictly parsed (a duplicate member is refused, not the last one kept), and of a rule's shape
 * ({@link RuleDocument}). Every refusal is a {@link RuleApiRefusal}: 415, 413, 400 for what is not JSON, 422 naming
 * the member for JSON that is no rule.
 */
public final class RuleDocumentReader {

    /** The largest document read: a rule with a thousand hashed API keys fits several times over. */
    public static final int MAX_BYTES = 256 * 1024;

    /** Request attribute: whether {@link #body} read the body to its end ({@link #readToEnd}). */
    private static final String READ_TO_END = RuleDocumentReader.class.getName() + ".readToEnd";

    private static final JsonMapper json = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private RuleDocumentReader() {
    }

    /** The document as parsed, to name the fields of later refusals, and the settings it stands for. */
    record Read(JsonNode document, Map<String, Object> settings) {
    }

    /**
     * The document of a request with these headers and this body: the content type checked before the body is
     * read.
     */
    static Read parse(String id, HttpHeaders headers, Supplier<byte[]> body) {
        checkType(headers);
        return parse(id, body.get());
    }

    /** Refuses (415) what is not JSON, before anything of the body is read. */
    static void checkType(HttpHeaders headers) {
        MediaType type;
        try {
            type = headers.getContentType();
        }
        catch (InvalidMediaTypeException ex) {
            // a Content-Type that does not parse ("garbage", an unclosed quote) is the client's, not a 500
            throw new RuleApiRefusal(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", null,
                    "A rule document is sent as application/json, not as '"
                    + headers.getFirst(HttpHeaders.CONTENT_TYPE) + "', which is no media type.");
        }
        if (type == null || !(MediaType.APPLICATION_JSON.isCompatibleWith(type)
                || "application".equals(type.getType()) && type.getSubtype().endsWith("+json"))) {
            throw new RuleApiRefusal(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", null,
                    "A rule document is sent as application/json, not " + (type == null ? "without a Content-Type"
                    : type) + ".");
        }
    }

    /** The refusal of a body longer than {@link #MAX_BYTES}. */
    static RuleApiRefusal tooLarge() {
        return new RuleApiRefusal(HttpStatus.CONTENT_TOO_LARGE, "document_too_large", null,
                "A rule document is at most " + MAX_BYTES + " bytes.");
    }

    /**
     * Whether {@link #body} read the request's body to its end: true once it has, false when it stopped at
     * {@link #MAX_BYTES} (the rest is still coming), null when it has not read it. A body is read once: whoever answers
     * afterwards learns here whether the connection can take another request.
     */
    static @Nullable Boolean readToEnd(ServerRequest request) {
        return (Boolean) request.attributes().get(READ_TO_END);
    }

    /** A reactive request's whole body, at most {@link #MAX_BYTES}; empty when it has none. */
    static Mono<byte[]> body(ServerRequest request) {
        return DataBufferUtils.join(request.bodyToFlux(DataBuffer.class), MAX_BYTES)
                .doOnSuccess(whole -> request.attributes().put(READ_TO_END, true))
                .onErrorMap(DataBufferLimitException.class, tooLarge -> {
                    request.attributes().put(READ_TO_END, false);
                    return tooLarge();
                })
                .map(buffer -> {
                    try {
                        byte[] bytes = new byte[buffer.readableByteCount()];
                        buffer.read(bytes);
                        return bytes;
                    }
                    finally {
                        DataBufferUtils.release(buffer);
                    }
                })
                .defaultIfEmpty(new byte[0]);
    }

    private static Read parse(String id, byte[] bytes) {
        return read(id, tree(bytes, "rule document"), null);
    }

    /** A rule document already parsed, found at {@code at} in the request's body (null: the body is the rule). */
    static Read read(String id, JsonNode document, @Nullable String at) {
        try {
            return new Read(document, RuleDocument.settings(id, document));
        }
        catch (RuleDocument.ShapeException ex) {
            String field = at == null || ex.field == null ? ex.field : at + "." + ex.field;
            throw new RuleApiRefusal(HttpStatus.UNPROCESSABLE_CONTENT, "invalid_rule", field, ex.getMessage());
        }
    }

    /** A body strictly parsed as JSON; a refusal (400) naming {@code what} when it is empty or no JSON. */
    static JsonNode tree(byte[] bytes, String what) {
        if (bytes.length == 0) {
            throw new RuleApiRefusal(HttpStatus.BAD_REQUEST, "malformed_document", null,
                    "The request has no " + what + ".");
        }
        try {
            return json.readTree(bytes);
        }
        catch (JacksonException ex) {
            TokenStreamLocation at = ex.getLocation();
            throw new RuleApiRefusal(HttpStatus.BAD_REQUEST, "malformed_document", null, "The " + what + " is not "
                    + "valid JSON" + (at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr()
                    + ")") + ": " + ex.getOriginalMessage());
        }
    }
}
