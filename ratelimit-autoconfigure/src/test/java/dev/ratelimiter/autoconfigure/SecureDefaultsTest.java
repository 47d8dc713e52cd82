package dev.ratelimiter.autoconfigure;

import java.util.Base64;
import java.util.Map;

import dev.ratelimiter.autoconfigure.identity.AdapterSettings;
import dev.ratelimiter.autoconfigure.store.FleetSizeWarning;
import dev.ratelimiter.core.ApiKeyFormat;
import dev.ratelimiter.core.UnknownApiKeyPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's defaults, without the Helm chart's values: a key nobody listed gets one small bucket per address, not a
 * fresh default-tier bucket; a key must look like one (8 to 256 characters of base64's and URLs' safe characters);
 * a Redis-backed fleet left at one expected instance is warned about. Before, the defaults were default-tier, any key,
 * and silence.
 */
@ExtendWith(OutputCaptureExtension.class)
class SecureDefaultsTest {

    private final RateLimitProperties defaults = new RateLimitProperties();

    @Test
    void keysNobodyListedShareABucketPerAddressByDefault() {
        assertThat(defaults.getApiKey().getUnknown().getPolicy()).isEqualTo(UnknownApiKeyPolicy.PER_ADDRESS);
    }

    @Test
    void aKeyMustBeEightTo256CharactersOfBase64AndUrlSafeCharactersByDefault() {
        ApiKeyFormat format = AdapterSettings.apiKeyFormat(defaults);
        String random = Base64.getEncoder()
                .encodeToString(new byte[] { -1, -1, -1, -5, -17, 3, 90, 127, -128, 64, 1, 2, 3 });
        assertThat(random).contains("+", "/", "=");
        assertThat(format.problem(random)).isNull();
        assertThat(format.problem("sk_live-AbC.123~x_Y=")).isNull();
        assertThat(format.problem("x".repeat(256))).isNull();
        assertThat(format.problem("demo")).isEqualTo("is shorter than 8 characters");
        assertThat(format.problem("x".repeat(257))).isEqualTo("is longer than 256 characters");
        assertThat(format.problem("a key with spaces")).isEqualTo("is not in the expected format");
        assertThat(format.problem("{\"json\":\"key\"}")).isEqualTo("is not in the expected format");
        assertThat(format.problem("ключ-ключ-ключ")).isEqualTo("is not in the expected format");
    }

    @Test
    void aRedisFleetLeftAtOneExpectedInstanceIsWarnedAboutWithWhatToSet(CapturedOutput output) {
        assertThat(FleetSizeWarning.warnIfUnset(new StandardEnvironment(), defaults.getStore())).isTrue();
        assertThat(output).contains("ratelimit.store.expected-instances is not set, so it is 1")
                .contains("N instances started during an outage admit up to N times every limit")
                .contains("Set it to the fleet's usual size");
    }

    @Test
    void anExpectedInstanceCountThatWasSetIsNotWarnedAbout() {
        StandardEnvironment single = new StandardEnvironment();
        single.getPropertySources().addFirst(new MapPropertySource("test",
                Map.of(FleetSizeWarning.SETTING, "1")));
        assertThat(FleetSizeWarning.warnIfUnset(single, defaults.getStore())).isFalse();
        StoreProperties fleet = new StoreProperties();
        fleet.setExpectedInstances(6);
        assertThat(FleetSizeWarning.warnIfUnset(new StandardEnvironment(), fleet)).isFalse();
    }
}
