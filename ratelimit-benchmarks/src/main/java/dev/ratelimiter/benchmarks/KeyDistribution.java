package dev.ratelimiter.benchmarks;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Which client a request comes from: every key equally likely, or Zipf's law (the key of rank r drawn with weight
 * r^-s, the ranks shuffled over the keys so that the hot ones are not the first key names). Also the expectations
 * the "on paper" figures need.
 */
final class KeyDistribution {

    /** Probability of each rank, highest first. */
    private final double[] probability;
    /** Cumulative probability by rank, for drawing; null when uniform. */
    private final double[] cumulative;
    /** The key of each rank. */
    private final int[] keyOfRank;

    private KeyDistribution(int keys, double exponent, long seed) {
        this.probability = new double[keys];
        double total = 0;
        for (int rank = 0; rank < keys; rank++) {
            probability[rank] = exponent == 0 ? 1 : Math.pow(rank + 1, -exponent);
            total += probability[rank];
        }
        double sum = 0;
        double[] cdf = new double[keys];
        for (int rank = 0; rank < keys; rank++) {
            probability[rank] /= total;
            sum += probability[rank];
            cdf[rank] = sum;
        }
        this.cumulative = exponent == 0 ? null : cdf;
        this.keyOfRank = new int[keys];
        Arrays.setAll(keyOfRank, i -> i);
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = keys - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int swap = keyOfRank[i];
            keyOfRank[i] = keyOfRank[j];
            keyOfRank[j] = swap;
        }
    }

    /** @param exponent 0 for uniform */
    static KeyDistribution of(int keys, double exponent, long seed) {
        return new KeyDistribution(keys, exponent, seed);
    }

    int next(SplittableRandom random) {
        if (cumulative == null) {
            return random.nextInt(keyOfRank.length);
        }
        int rank = Arrays.binarySearch(cumulative, random.nextDouble());
        return keyOfRank[Math.min(cumulative.length - 1, rank < 0 ? -rank - 1 : rank)];
    }

    /** Distinct keys expected among {@code draws} requests. */
    double expectedDistinct(double draws) {
        double distinct = 0;
        for (double p : probability) {
            distinct += -Math.expm1(draws * Math.log1p(-Math.min(p, 1 - 1e-12)));
        }
        return distinct;
    }

    /** Keys asked for more than {@code limitPerSecond} when {@code perSecond} requests are spread this way. */
    int keysOver(double perSecond, double limitPerSecond) {
        int over = 0;
        for (double p : probability) {
            over += p * perSecond > limitPerSecond ? 1 : 0;
        }
        return over;
    }

    /** The share of requests above their key's long-run limit: refusals expected at least. */
    double shareOver(double perSecond, double limitPerSecond) {
        double above = 0;
        for (double p : probability) {
            above += Math.max(0, p * perSecond - limitPerSecond);
        }
        return above / perSecond;
    }

    /** The busiest key's share of all requests. */
    double hottest() {
        return probability[0];
    }
}
