package dev.ratelimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import dev.ratelimiter.autoconfigure.security.OperatorAccounts;
import dev.ratelimiter.testsupport.property.Gen;
import dev.ratelimiter.testsupport.property.Property;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

class OperatorAccountsTest {

    static OperatorAccounts accounts() {
        OperatorSecurityProperties properties = new OperatorSecurityProperties();
        properties.getAdmin().setUsername("admin");
        properties.getAdmin().setPassword("admin-password");
        properties.getViewer().setUsername("viewer");
        properties.getViewer().setPassword("viewer-password");
        return OperatorAccounts.of(properties, generated -> { throw new AssertionError("no password to generate"); });
    }

    @Test
    void eachAccountHasItsRoleAndNothingElseVerifies() {
        OperatorAccounts accounts = accounts();
        assertThat(accounts.verify("admin", "admin-password")).isEqualTo(OperatorAccounts.Role.ADMIN);
        assertThat(accounts.verify("viewer", "viewer-password")).isEqualTo(OperatorAccounts.Role.VIEWER);
        assertThat(accounts.verify("viewer", "admin-password")).isNull();
        assertThat(accounts.verify("admin", "viewer-password")).isNull();
        assertThat(accounts.verify("Admin", "admin-password")).isNull();
        assertThat(accounts.verify("admin", "admin-password ")).isNull();
        assertThat(accounts.verify("", "")).isNull();
    }

    /** What a client sends as its Basic credentials. */
    record Credentials(String name, String password) {
    }

    @TestFactory
    Stream<DynamicTest> noOtherSplitOfTheSameCharactersVerifies() {
        // any text up to 255 characters: what the property had from its library when it left both unconstrained
        Gen<String> text = Gen.strings(Gen.unicodeChar(), 0, 255);
        return Property.forAll(Gen.zip(text, text, Credentials::new)).tries(2_000)
                .check(sent -> noOtherSplitOfTheSameCharactersVerifies(sent.name(), sent.password()));
    }

    private static void noOtherSplitOfTheSameCharactersVerifies(String name, String password) {
        String joined = "admin" + "admin-password";
        if (!(name + password).equals(joined) || name.equals("admin")) {
            assertThat(accounts().verify(name, password)).isNull();
        }
        for (int cut = 0; cut <= joined.length(); cut++) {
            if (cut != 5) {
                assertThat(accounts().verify(joined.substring(0, cut), joined.substring(cut))).isNull();
            }
        }
    }

    @Test
    void anAdminWithoutPasswordGetsARandomOneHandedOutOnce() {
        List<String> generated = new ArrayList<>();
        OperatorAccounts accounts = OperatorAccounts.of(new OperatorSecurityProperties(), generated::add);
        assertThat(generated).hasSize(1);
        assertThat(generated.get(0)).hasSizeGreaterThanOrEqualTo(32);
        assertThat(accounts.verify("ratelimit-admin", generated.get(0))).isEqualTo(OperatorAccounts.Role.ADMIN);
        List<String> again = new ArrayList<>();
        OperatorAccounts.of(new OperatorSecurityProperties(), again::add);
        assertThat(again.get(0)).isNotEqualTo(generated.get(0));
    }

    @Test
    void withoutAViewerPasswordThereIsNoViewer() {
        OperatorSecurityProperties properties = new OperatorSecurityProperties();
        properties.getAdmin().setPassword("admin-password");
        OperatorAccounts accounts = OperatorAccounts.of(properties, generated -> { });
        assertThat(accounts.verify("ratelimit-viewer", "")).isNull();
        assertThat(accounts.verify("ratelimit-viewer", "null")).isNull();
    }
}
