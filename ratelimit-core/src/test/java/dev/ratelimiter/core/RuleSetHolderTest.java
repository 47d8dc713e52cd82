package dev.ratelimiter.core;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RuleSetHolderTest {

    @Test
    void everyListenerHearsOfTheNewRulesOnceInForceEvenWhenOneFails() {
        RuleSet first = RuleSet.builder("free").version(1).build();
        RuleSet second = RuleSet.builder("free").version(2).build();
        RuleSetHolder holder = new RuleSetHolder(first);
        List<Long> inForceWhenTold = new ArrayList<>();
        holder.onReplace(rules -> {
            throw new IllegalStateException("a listener's bug");
        });
        holder.onReplace(rules -> inForceWhenTold.add(holder.get().version()));

        holder.replace(second);

        assertThat(holder.get()).isSameAs(second);
        assertThat(inForceWhenTold).containsExactly(2L);
    }
}
