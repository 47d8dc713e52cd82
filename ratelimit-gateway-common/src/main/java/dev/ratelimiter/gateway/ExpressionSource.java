package dev.ratelimiter.gateway;

import java.security.Principal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimiter.core.InvalidLimitException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * A SpEL expression over the request ({@link IdentityExpressionRoot}), e.g.
 * {@code headers['X-Client'] ?: claims['client_id']}. Parsed and checked once, at start-up: an expression that does
 * not parse, or uses a method call, a type, bean or constructor reference, a variable, an assignment or a property the
 * root does not have, fails the start-up naming its setting. What is left can only read strings and maps the request offers and combine them with
 * operators ({@code ?:}, {@code ? :}, {@code +}, comparisons), evaluated in a {@link SimpleEvaluationContext} whose only
 * property accessor is the root's: not even a getter of a value it reaches is called. An expression that fails on a
 * request (a property of null, say) gives no value: the request is decided as one without it.
 */
public final class ExpressionSource implements IdentitySource {

    private static final Logger logger = LoggerFactory.getLogger(ExpressionSource.class);

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private static final EvaluationContext CONTEXT = SimpleEvaluationContext.forPropertyAccessors(new RootAccessor())
            .withAssignmentDisabled().build();

    private final String setting;
    private final Expression expression;
    private final boolean readsPrincipal;
    private final boolean claimsReadable;
    /** The headers the expression names literally ({@code headers['X-Client']}), to tell one sent twice up front. */
    private final List<String> headers;
    /** The query parameters it names literally ({@code query['client']}), likewise. */
    private final List<String> parameters;
    private final WarnOnce failures = new WarnOnce(logger);

    /**
     * @param setting the property the expression was given in, for messages
     * @param text the expression
     * @param claimsReadable whether Spring Security's OAuth2 classes are present ({@link ClaimSource#available}); an
     * expression reading {@code claims} without them fails the start-up
     */
    public ExpressionSource(String setting, String text, boolean claimsReadable) {
        this.setting = setting;
        try {
            this.expression = PARSER.parseExpression(text);
        }
        catch (ParseException ex) {
            throw new InvalidLimitException(setting, setting + " '" + text + "' is not a valid expression: "
                    + ex.getMessage());
        }
        SpelNode ast = ((SpelExpression) expression).getAST();
        check(ast, text);
        this.readsPrincipal = reads(ast, Set.of("principal", "claims"));
        if (reads(ast, Set.of("claims")) && !claimsReadable) {
            throw new InvalidLimitException(setting, setting + " reads claims, but Spring Security's OAuth2 resource "
                    + "server (spring-security-oauth2-resource-server, spring-security-oauth2-jose) is not on the "
                    + "classpath.");
        }
        this.claimsReadable = claimsReadable;
        this.headers = List.copyOf(literalNames(ast, "headers", new LinkedHashSet<>()));
        this.parameters = List.copyOf(literalNames(ast, "query", new LinkedHashSet<>()));
    }

    /** The expression's value as it is (a string, a number, a map, null); throws when the evaluation fails. */
    Object evaluate(IdentityRequest request, Principal principal) {
        return expression.getValue(CONTEXT, new IdentityExpressionRoot(request, principal, claimsReadable));
    }

    @Override
    public String read(IdentityRequest request, Principal principal) {
        IdentityValue value = value(request, principal);
        return value == null ? null : value.value();
    }

    /**
     * The value, from the token when this evaluation read nothing but {@code claims} and {@code principal}: of
     * {@code claims['org'] ?: headers['X-Org']} a caller with the claim gets a token's value, one without it the
     * header's, which the client wrote.
     */
    @Override
    public IdentityValue value(IdentityRequest request, Principal principal) {
        IdentityExpressionRoot root = new IdentityExpressionRoot(request, principal, claimsReadable);
        try {
            Object value = expression.getValue(CONTEXT, root);
            // a JSON object (claims['org'] of an object claim) is no identity: its toString() is no stable key
            String text = value == null || value instanceof Map ? null : CallerIdentity.nonBlank(value.toString());
            return text == null ? null : new IdentityValue(text,
                    root.readTheRequest() ? IdentityOrigin.REQUEST : IdentityOrigin.TOKEN_EXPRESSION);
        }
        catch (RuntimeException ex) {
            failures.warn("{} failed on a request ({}); deciding it as one without that value", setting,
                    ex.getMessage());
            return null;
        }
    }

    @Override
    public String describe() {
        return "the value of " + setting;
    }

    @Override
    public boolean readsPrincipal() {
        return readsPrincipal;
    }

    /**
     * A header or query parameter named literally and sent twice; one named by a computed index reads as absent when
     * sent twice ({@link IdentityExpressionRoot}), which the client could have had by not sending it.
     */
    @Override
    public RepeatedName repeated(IdentityRequest request) {
        for (String name : headers) {
            if (RequestIdentity.repeated(request.headers(), name)) {
                return RepeatedName.header(name);
            }
        }
        for (String name : parameters) {
            if (request.repeatedQuery(name)) {
                return RepeatedName.query(name);
            }
        }
        return null;
    }

    /** The names in {@code property['name']}: a string literal indexing {@code property} ({@code headers}, {@code query}). */
    private static Set<String> literalNames(SpelNode node, String property, Set<String> names) {
        for (int i = 0; i < node.getChildCount(); i++) {
            SpelNode child = node.getChild(i);
            if (i + 1 < node.getChildCount() && child instanceof PropertyOrFieldReference reference
                    && reference.getName().equals(property) && node.getChild(i + 1) instanceof Indexer index
                    && index.getChildCount() == 1 && index.getChild(0) instanceof StringLiteral name) {
                names.add(String.valueOf(name.getLiteralValue().getValue()));
            }
            literalNames(child, property, names);
        }
        return names;
    }

    private void check(SpelNode node, String text) {
        String refused = refused(node);
        if (refused != null) {
            throw new InvalidLimitException(setting, setting + " '" + text + "' uses " + refused + ", which identity "
                    + "expressions may not: they read " + String.join(", ", IdentityExpressionRoot.NAMES) + " and combine them "
                    + "with operators, nothing else.");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            check(node.getChild(i), text);
        }
    }

    private static String refused(SpelNode node) {
        if (node instanceof MethodReference || node instanceof FunctionReference) {
            return "a method call (" + node.toStringAST() + ")";
        }
        if (node instanceof TypeReference || node instanceof ConstructorReference) {
            return "a type (" + node.toStringAST() + ")";
        }
        if (node instanceof BeanReference) {
            return "a bean reference (" + node.toStringAST() + ")";
        }
        if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
            return "an assignment (" + node.toStringAST() + ")";
        }
        if (node instanceof VariableReference && !Set.of("#root", "#this").contains(node.toStringAST())) {
            return "a variable (" + node.toStringAST() + ")";
        }
        if (node instanceof PropertyOrFieldReference property
                && !IdentityExpressionRoot.PROPERTIES.contains(property.getName())) {
            // only the root has properties: any other name could never be read
            return "the unknown property '" + property.getName() + "'";
        }
        return null;
    }

    private static boolean reads(SpelNode node, Set<String> properties) {
        if (node instanceof PropertyOrFieldReference property && properties.contains(property.getName())) {
            return true;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            if (reads(node.getChild(i), properties)) {
                return true;
            }
        }
        return false;
    }

    /** Reads the root's properties and nothing else: no getter of any other type is ever called. */
    private static final class RootAccessor implements PropertyAccessor {

        @Override
        public Class<?>[] getSpecificTargetClasses() {
            return new Class<?>[] { IdentityExpressionRoot.class };
        }

        @Override
        public boolean canRead(EvaluationContext context, Object target, String name) {
            return target instanceof IdentityExpressionRoot && IdentityExpressionRoot.PROPERTIES.contains(name);
        }

        @Override
        public TypedValue read(EvaluationContext context, Object target, String name) {
            return new TypedValue(((IdentityExpressionRoot) target).property(name));
        }

        @Override
        public boolean canWrite(EvaluationContext context, Object target, String name) {
            return false;
        }

        @Override
        public void write(EvaluationContext context, Object target, String name, Object newValue) {
            throw new UnsupportedOperationException("identity expressions are read-only");
        }
    }
}
