package dev.ratelimiter.autoconfigure;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

import dev.ratelimiter.autoconfigure.rules.RuleApiRefusal;
import dev.ratelimiter.autoconfigure.rules.RuleDocumentReader;
import dev.ratelimiter.autoconfigure.rules.RulesApiOperations;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A blocking flavour's rule document body: a body that cannot be opened or read is the client's 400, never an
 * exception the servlet turns into a 500; one past the bound is a 413 after reading one byte beyond it, no more.
 */
class RulesApiBodyTest {

    @Test
    void aBodyThatCannotBeOpenedIsA400() {
        RuleApiRefusal refusal = catchThrowableOfType(RuleApiRefusal.class, () -> RulesApiOperations.readBody(() -> {
            throw new IOException("stream closed");
        }));
        assertThat(refusal.status).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(refusal.error).isEqualTo("malformed_document");
        assertThat(refusal.getMessage()).contains("stream closed");
    }

    @Test
    void aBodyThatFailsHalfWayIsA400() {
        InputStream failing = new InputStream() {
            @Override
            public int read() throws IOException {
                throw new IOException("connection reset");
            }
        };
        RuleApiRefusal refusal = catchThrowableOfType(RuleApiRefusal.class,
                () -> RulesApiOperations.readBody(() -> failing));
        assertThat(refusal.status).isEqualTo(HttpStatus.BAD_REQUEST);
    }

    @Test
    void aBodyPastTheBoundIsA413AndOneWithinIsReadWhole() {
        byte[] tooLarge = new byte[RuleDocumentReader.MAX_BYTES + 1];
        RuleApiRefusal refusal = catchThrowableOfType(RuleApiRefusal.class,
                () -> RulesApiOperations.readBody(() -> new ByteArrayInputStream(tooLarge)));
        assertThat(refusal.status).isEqualTo(HttpStatus.CONTENT_TOO_LARGE);
        byte[] exact = new byte[RuleDocumentReader.MAX_BYTES];
        exact[exact.length - 1] = 7;
        assertThat(RulesApiOperations.readBody(() -> new ByteArrayInputStream(exact))).isEqualTo(exact);
    }
}
