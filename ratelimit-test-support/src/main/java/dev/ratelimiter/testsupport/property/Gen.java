package dev.ratelimiter.testsupport.property;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A generator of test values for {@link Property}: random values drawn from a seeded {@link Random} at a size from 1 to
 * {@link #MAX_SIZE} (how long lists and strings may be, as a share of their maximum), and the edge cases — minimum,
 * maximum, zero, ±1, empty, one element — that a run tries before any random value. Plain Java on purpose: no
 * property-testing library, no shrinking (edge cases first and sizes ramping up stand in for it).
 */
public interface Gen<T> {

    /** The largest size: a list or string of this size may reach its maximum length. */
    int MAX_SIZE = 100;

    /** How many values in a row {@link #filter} may reject before the run fails instead of looping. */
    int MAX_DISCARDS = 1_000;

    /** A random value; {@code size} (1 to {@link #MAX_SIZE}) bounds how large a list or string may be. */
    T next(Random random, int size);

    /** The values to try before any random one, most telling first; none by default. */
    default List<T> edgeCases() {
        return List.of();
    }

    /** A generator of its own values and these edge cases. */
    static <T> Gen<T> of(Gen<T> values, List<T> edgeCases) {
        List<T> edges = List.copyOf(new LinkedHashSet<>(edgeCases));
        return new Gen<>() {
            @Override
            public T next(Random random, int size) {
                return values.next(random, size);
            }

            @Override
            public List<T> edgeCases() {
                return edges;
            }
        };
    }

    default <R> Gen<R> map(Function<? super T, ? extends R> mapping) {
        return of((random, size) -> mapping.apply(next(random, size)),
                edgeCases().stream().<R>map(mapping).toList());
    }

    /**
     * A generator chosen by a value of this one. Its edge cases pair each edge case of this generator with an edge case
     * of the generator it chooses (the first, the second, … in turn), so each is tried once without a product.
     */
    default <R> Gen<R> flatMap(Function<? super T, Gen<R>> choice) {
        List<R> edges = new ArrayList<>();
        List<T> own = edgeCases();
        for (int i = 0; i < own.size(); i++) {
            List<R> chosen = choice.apply(own.get(i)).edgeCases();
            if (!chosen.isEmpty()) {
                edges.add(chosen.get(i % chosen.size()));
            }
        }
        return of((random, size) -> choice.apply(next(random, size)).next(random, size), edges);
    }

    /** Only the values that pass; fails (rather than loops) after {@link #MAX_DISCARDS} rejections in a row. */
    default Gen<T> filter(Predicate<? super T> keep) {
        return of((random, size) -> {
            for (int discarded = 0; discarded < MAX_DISCARDS; discarded++) {
                T value = next(random, size);
                if (keep.test(value)) {
                    return value;
                }
            }
            throw new IllegalStateException("the filter discarded " + MAX_DISCARDS
                    + " values in a row: generate what it keeps instead of filtering");
        }, edgeCases().stream().filter(keep).toList());
    }

    /** Lists of {@code minSize} to {@code maxSize} of these values, longer as the size grows. */
    default Gen<List<T>> list(int minSize, int maxSize) {
        checkRange(minSize, maxSize);
        List<List<T>> edges = new ArrayList<>();
        List<T> elementEdges = edgeCases();
        if (minSize == 0) {
            edges.add(List.of());
        }
        int shortest = Math.max(1, minSize);
        if (shortest <= maxSize) {
            for (T element : elementEdges.subList(0, Math.min(4, elementEdges.size()))) {
                edges.add(Collections.nCopies(shortest, element));
            }
            if (!elementEdges.isEmpty() && maxSize > shortest && maxSize <= 256) {
                edges.add(Collections.nCopies(maxSize, elementEdges.get(0)));
            }
        }
        return of((random, size) -> {
            int length = length(random, size, minSize, maxSize);
            List<T> list = new ArrayList<>(length);
            for (int i = 0; i < length; i++) {
                list.add(next(random, size));
            }
            return List.copyOf(list);
        }, edges);
    }

    /** Whole numbers from {@code min} to {@code max}, inclusive. Edge cases: the bounds, 0 and ±1 where in range. */
    static Gen<Integer> ints(int min, int max) {
        return longs(min, max).map(Long::intValue);
    }

    /** Whole numbers from {@code min} to {@code max}, inclusive. Edge cases: the bounds, 0 and ±1 where in range. */
    static Gen<Long> longs(long min, long max) {
        checkRange(min, max);
        List<Long> edges = new ArrayList<>(List.of(min, max));
        for (long candidate : new long[] { 0, 1, -1, min + 1, max - 1 }) {
            if (candidate >= min && candidate <= max) {
                edges.add(candidate);
            }
        }
        return of((random, size) -> min + randomBelow(random, max - min), edges);
    }

    /** Numbers from {@code min} to {@code max}. Edge cases: the bounds, 0 and 1 where in range. */
    static Gen<Double> doubles(double min, double max) {
        if (!(min <= max)) {
            throw new IllegalArgumentException("min " + min + " above max " + max);
        }
        List<Double> edges = new ArrayList<>(List.of(min, max));
        for (double candidate : new double[] { 0, 1 }) {
            if (candidate >= min && candidate <= max) {
                edges.add(candidate);
            }
        }
        return of((random, size) -> Math.min(max, min + random.nextDouble() * (max - min)), edges);
    }

    static Gen<Boolean> booleans() {
        return of((random, size) -> random.nextBoolean(), List.of(false, true));
    }

    /** One of these values, each as likely. Edge cases: the first and the last. */
    @SafeVarargs
    static <T> Gen<T> elements(T... values) {
        return elements(List.of(values));
    }

    /** One of these values, each as likely. Edge cases: the first and the last. */
    static <T> Gen<T> elements(List<T> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no values to choose from");
        }
        List<T> copy = List.copyOf(values);
        return of((random, size) -> copy.get(random.nextInt(copy.size())),
                List.of(copy.get(0), copy.get(copy.size() - 1)));
    }

    static <T> Gen<T> just(T value) {
        return of((random, size) -> value, List.of(value));
    }

    /** A value of one of these generators, each as likely. Edge cases: theirs, taken from each in turn. */
    @SafeVarargs
    static <T> Gen<T> oneOf(Gen<? extends T>... choices) {
        Weighted<? extends T>[] weighted = Arrays.stream(choices).map(gen -> new Weighted<>(1, gen))
                .toArray(Weighted[]::new);
        return frequency(weighted);
    }

    /** A value of one of these generators, chosen in proportion to its weight. Edge cases as {@link #oneOf}. */
    @SafeVarargs
    static <T> Gen<T> frequency(Weighted<? extends T>... choices) {
        List<Weighted<? extends T>> list = List.of(choices);
        int total = list.stream().mapToInt(Weighted::weight).sum();
        if (list.isEmpty() || list.stream().anyMatch(choice -> choice.weight() <= 0)) {
            throw new IllegalArgumentException("each choice needs a positive weight");
        }
        List<T> edges = new ArrayList<>();
        int longest = list.stream().mapToInt(choice -> choice.gen().edgeCases().size()).max().orElse(0);
        for (int i = 0; i < longest; i++) {
            for (Weighted<? extends T> choice : list) {
                List<? extends T> own = choice.gen().edgeCases();
                if (i < own.size()) {
                    edges.add(own.get(i));
                }
            }
        }
        return of((random, size) -> {
            int pick = random.nextInt(total);
            for (Weighted<? extends T> choice : list) {
                pick -= choice.weight();
                if (pick < 0) {
                    return choice.gen().next(random, size);
                }
            }
            throw new IllegalStateException("unreachable: weights sum to " + total);
        }, edges);
    }

    /** A choice for {@link #frequency}: a generator and how often it is chosen relative to the others. */
    record Weighted<T>(int weight, Gen<T> gen) {
    }

    static <T> Weighted<T> weighted(int weight, Gen<T> gen) {
        return new Weighted<>(weight, gen);
    }

    /** Two values made into one (a record, say). Edge cases: the two generators' edge cases side by side. */
    static <A, B, R> Gen<R> zip(Gen<A> first, Gen<B> second, BiFunction<? super A, ? super B, ? extends R> make) {
        return zip(first, second, just(0), (a, b, unused) -> make.apply(a, b));
    }

    /** Three values made into one. Edge cases: the generators' edge cases side by side, the shorter lists cycled. */
    static <A, B, C, R> Gen<R> zip(Gen<A> first, Gen<B> second, Gen<C> third, Make3<A, B, C, R> make) {
        return zip(first, second, third, just(0), (a, b, c, unused) -> make.apply(a, b, c));
    }

    /** Four values made into one. Edge cases: the generators' edge cases side by side, the shorter lists cycled. */
    static <A, B, C, D, R> Gen<R> zip(Gen<A> first, Gen<B> second, Gen<C> third, Gen<D> fourth,
            Make4<A, B, C, D, R> make) {
        List<A> as = first.edgeCases();
        List<B> bs = second.edgeCases();
        List<C> cs = third.edgeCases();
        List<D> ds = fourth.edgeCases();
        List<R> edges = new ArrayList<>();
        if (!as.isEmpty() && !bs.isEmpty() && !cs.isEmpty() && !ds.isEmpty()) {
            int longest = Math.max(Math.max(as.size(), bs.size()), Math.max(cs.size(), ds.size()));
            for (int i = 0; i < longest; i++) {
                edges.add(make.apply(as.get(i % as.size()), bs.get(i % bs.size()), cs.get(i % cs.size()),
                        ds.get(i % ds.size())));
            }
        }
        return of((random, size) -> make.apply(first.next(random, size), second.next(random, size),
                third.next(random, size), fourth.next(random, size)), edges);
    }

    /** What {@link #zip(Gen, Gen, Gen, Make3)} makes of three values. */
    @FunctionalInterface
    interface Make3<A, B, C, R> {
        R apply(A first, B second, C third);
    }

    /** What {@link #zip(Gen, Gen, Gen, Gen, Make4)} makes of four values. */
    @FunctionalInterface
    interface Make4<A, B, C, D, R> {
        R apply(A first, B second, C third, D fourth);
    }

    /** Exactly {@code length} bytes. Edge cases: all 0, all −1 (0xff), all 0x7f, all 0x80. */
    static Gen<byte[]> bytes(int length) {
        List<byte[]> edges = new ArrayList<>();
        for (byte fill : new byte[] { 0, -1, Byte.MAX_VALUE, Byte.MIN_VALUE }) {
            byte[] edge = new byte[length];
            Arrays.fill(edge, fill);
            edges.add(edge);
        }
        return of((random, size) -> {
            byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            return bytes;
        }, edges);
    }

    /** Characters of this alphabet, each as likely. Edge cases: the first and the last. */
    static Gen<Character> chars(String alphabet) {
        return elements(alphabet.chars().mapToObj(c -> (char) c).toList());
    }

    /** Any UTF-16 unit, NUL, lone surrogates and noncharacters included. */
    static Gen<Character> anyChar() {
        return of((random, size) -> (char) random.nextInt(Character.MAX_VALUE + 1),
                List.of('\u0000', ' ', '\uffff', '\ud800', '\udfff', 'a'));
    }

    /**
     * Any UTF-16 unit but the noncharacters (U+FDD0–U+FDEF, U+FFFE, U+FFFF) and the private-use block (U+E000–U+F8FF):
     * what the old property library gave for an unconstrained string. Lone surrogates and NUL included.
     */
    static Gen<Character> unicodeChar() {
        return anyChar().filter(c -> !(c >= '\ufdd0' && c <= '\ufdef') && c != '\ufffe' && c != '\uffff'
                && !(c >= '\ue000' && c <= '\uf8ff'));
    }

    /** Strings of this alphabet's characters, {@code minLength} to {@code maxLength} long. */
    static Gen<String> strings(String alphabet, int minLength, int maxLength) {
        return strings(chars(alphabet), minLength, maxLength);
    }

    /**
     * Strings of these characters, {@code minLength} to {@code maxLength} long, longer as the size grows. Edge cases:
     * the empty string (where allowed), the shortest string of each edge character, the longest of the first.
     */
    static Gen<String> strings(Gen<Character> chars, int minLength, int maxLength) {
        return chars.list(minLength, maxLength).map(Gen::join);
    }

    /**
     * Maps of {@code minSize} to {@code maxSize} entries with distinct keys, in the order drawn. Fewer entries when the
     * keys run out (keys drawn {@code 10 ×} the size, as often the same few).
     */
    static <K, V> Gen<Map<K, V>> maps(Gen<K> keys, Gen<V> values, int minSize, int maxSize) {
        checkRange(minSize, maxSize);
        List<Map<K, V>> edges = new ArrayList<>();
        if (minSize == 0) {
            edges.add(Map.of());
        }
        if (minSize <= 1 && maxSize >= 1 && !keys.edgeCases().isEmpty()) {
            for (V value : values.edgeCases().subList(0, Math.min(4, values.edgeCases().size()))) {
                edges.add(Map.of(keys.edgeCases().get(0), value));
            }
        }
        return of((random, size) -> {
            int wanted = length(random, size, minSize, maxSize);
            Map<K, V> map = new LinkedHashMap<>();
            for (int drawn = 0; map.size() < wanted && drawn < 10 * wanted; drawn++) {
                K key = keys.next(random, size);
                if (!map.containsKey(key)) {
                    map.put(key, values.next(random, size));
                }
            }
            return map;
        }, edges);
    }

    /** The value as a test's name shows it: arrays spelled out, strings quoted with their invisible characters escaped. */
    static String describe(Object value) {
        if (value instanceof Object[] array) {
            return Arrays.deepToString(array);
        }
        if (value instanceof byte[] array) {
            return Arrays.toString(array);
        }
        if (value instanceof double[] array) {
            return Arrays.toString(array);
        }
        if (value instanceof long[] array) {
            return Arrays.toString(array);
        }
        if (value instanceof int[] array) {
            return Arrays.toString(array);
        }
        if (value instanceof CharSequence text) {
            return '"' + escape(text.toString()) + '"';
        }
        return escape(String.valueOf(value));
    }

    /** Control, format and surrogate characters as {@code \}{@code uXXXX}: names and XML reports stay readable. */
    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            int type = Character.getType(c);
            if (c < ' ' || c == '\u007f' || type == Character.SURROGATE || type == Character.FORMAT
                    || type == Character.PRIVATE_USE || type == Character.UNASSIGNED
                    || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
                escaped.append(String.format("\\u%04x", (int) c));
            }
            else {
                escaped.append(c);
            }
        }
        return escaped.toString();
    }

    private static String join(List<Character> chars) {
        StringBuilder text = new StringBuilder(chars.size());
        chars.forEach(text::append);
        return text.toString();
    }

    /** A length from {@code min} to the part of {@code max} that the size allows. */
    private static int length(Random random, int size, int min, int max) {
        int reach = min + (int) ((long) (max - min) * Math.max(1, Math.min(size, MAX_SIZE)) / MAX_SIZE);
        return min + random.nextInt(reach - min + 1);
    }

    /** A number from 0 to {@code bound} inclusive, {@code bound} read as unsigned (a span as wide as all longs). */
    private static long randomBelow(Random random, long bound) {
        long span = bound + 1;
        if (span > 0) {
            return nextBelow(random, span);
        }
        long value;
        do {
            value = random.nextLong();
        }
        while (Long.compareUnsigned(value, bound) > 0);
        return value;
    }

    private static long nextBelow(Random random, long span) {
        long bits;
        long value;
        do {
            bits = random.nextLong() >>> 1;
            value = bits % span;
        }
        while (bits - value + (span - 1) < 0);
        return value;
    }

    private static void checkRange(long min, long max) {
        if (min > max) {
            throw new IllegalArgumentException("min " + min + " above max " + max);
        }
    }
}
