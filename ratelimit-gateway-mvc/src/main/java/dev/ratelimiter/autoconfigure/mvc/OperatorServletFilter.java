package dev.ratelimiter.autoconfigure.mvc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.autoconfigure.security.OperatorPrincipal;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;

/**
 * HTTP Basic in front of the actuator endpoints and the rules API on the servlet flavour, without Spring Security
 * (whose servlet auto-configuration would lock the gateway's routes too): the same accounts, roles and answers as the
 * WebFlux flavour's filter. Stateless: no session, no saved request. The public endpoints' reads for anyone, the
 * viewer endpoints', the rules API's and the discovery page's reads for the viewer and the admin, everything else for
 * the admin. An authenticated request goes on with the account as its principal and role, which the endpoints and the
 * rules API check again themselves.
 */
final class OperatorServletFilter extends OperatorPathFilter {

    static final String CHALLENGE = "Basic realm=\"Realm\"";

    private final OperatorAccounts accounts;

    OperatorServletFilter(OperatorAccounts accounts, OperatorPaths paths) {
        super(paths);
        this.accounts = accounts;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean read = request.getMethod().equals("GET") || request.getMethod().equals("HEAD");
        if (read && paths.isPublic(request)) {
            chain.doFilter(request, response);
            return;
        }
        OperatorPrincipal caller = authenticate(request.getHeader(HttpHeaders.AUTHORIZATION));
        if (caller == null) {
            response.setHeader(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE);
            response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
            return;
        }
        boolean allowed = caller.role() == OperatorAccounts.Role.ADMIN || (read && paths.isForViewer(request));
        if (!allowed) {
            response.setStatus(HttpServletResponse.SC_FORBIDDEN);
            return;
        }
        chain.doFilter(new Authenticated(request, caller), response);
    }

    /** The account of a well-formed Basic header with a right name and password, or null; never throws. */
    private @Nullable OperatorPrincipal authenticate(@Nullable String header) {
        if (header == null || header.length() < 6 || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
            return null;
        }
        String decoded;
        try {
            byte[] raw = Base64.getDecoder().decode(header.substring(6).trim());
            decoded = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        }
        catch (IllegalArgumentException | CharacterCodingException ex) {
            return null;
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return null;
        }
        String username = decoded.substring(0, colon);
        OperatorAccounts.Role role = accounts.verify(username, decoded.substring(colon + 1));
        return role != null ? new OperatorPrincipal(username, role) : null;
    }

    /** The request as the account's: its principal and role for the endpoints' and the rules API's own checks. */
    private static final class Authenticated extends HttpServletRequestWrapper {

        private final OperatorPrincipal caller;

        Authenticated(HttpServletRequest request, OperatorPrincipal caller) {
            super(request);
            this.caller = caller;
        }

        @Override
        public Principal getUserPrincipal() {
            return caller;
        }

        @Override
        public String getRemoteUser() {
            return caller.getName();
        }

        @Override
        public boolean isUserInRole(String role) {
            return caller.hasRole(role);
        }

        @Override
        public String getAuthType() {
            return HttpServletRequest.BASIC_AUTH;
        }
    }
}
