package dev.ratelimiter.mvc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

import dev.ratelimiter.gateway.ResponseCharges;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.springframework.http.HttpHeaders;

/**
 * The servlet response of every limited request, reading the body's bytes as the gateway writes them when the request
 * was admitted by a rule charged from the response ({@link LimitedRequest#responseCharge()}): the bytes go to the
 * client as they are, unbuffered, and pass through the scanner on the way. Any other request's writes go straight
 * through. The proxy writes bytes, so only the output stream is read (a writer's text is not).
 */
final class ChargedServletResponse extends HttpServletResponseWrapper {

    private final Supplier<ResponseCharges.Pending> pending;
    private ServletOutputStream teed;
    private boolean headersTold;

    ChargedServletResponse(HttpServletResponse response, Supplier<ResponseCharges.Pending> pending) {
        super(response);
        this.pending = pending;
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
        if (teed == null) {
            teed = new Tee(super.getOutputStream());
        }
        return teed;
    }

    /** The response's headers as they are now (the upstream's, copied by the proxy, and the rate-limit fields). */
    HttpHeaders headers() {
        HttpHeaders headers = new HttpHeaders();
        for (String name : getHeaderNames()) {
            getHeaders(name).forEach(value -> headers.add(name, value));
        }
        if (getContentType() != null && !headers.containsHeader(HttpHeaders.CONTENT_TYPE)) {
            headers.set(HttpHeaders.CONTENT_TYPE, getContentType());
        }
        return headers;
    }

    private void read(byte[] bytes, int offset, int length) {
        ResponseCharges.Pending charge = pending.get();
        if (charge == null) {
            return;
        }
        if (!headersTold) {
            headersTold = true;
            charge.headers(headers());
        }
        charge.read(ByteBuffer.wrap(bytes, offset, length));
    }

    private final class Tee extends ServletOutputStream {

        private final ServletOutputStream out;

        Tee(ServletOutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            if (pending.get() != null) {
                // a byte array only for a response being read: every limited response passes through here
                read(new byte[] { (byte) b }, 0, 1);
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            out.write(bytes, offset, length);
            read(bytes, offset, length);
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }

        @Override
        public boolean isReady() {
            return out.isReady();
        }

        @Override
        public void setWriteListener(WriteListener listener) {
            out.setWriteListener(listener);
        }
    }
}
