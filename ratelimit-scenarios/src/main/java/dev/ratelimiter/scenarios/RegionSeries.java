package dev.ratelimiter.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The regions scenario per region and per second (by when requests were sent): admitted, refused, other answers, and
 * the share the region's last answer in that second stated — none in a second without traffic there.
 */
final class RegionSeries {

    /** One region's second. {@code share} is -1 when no answer stated one. */
    record Second(long admitted, long refused, long other, long share) {
    }

    private final Map<String, List<Second>> byRegion = new LinkedHashMap<>();
    private final int seconds;

    RegionSeries(List<String> regions, int seconds, RegionAnswers answers) {
        this.seconds = seconds;
        Map<String, long[][]> counts = new LinkedHashMap<>();
        for (String region : regions) {
            long[][] rows = new long[seconds][];
            for (int s = 0; s < seconds; s++) {
                rows[s] = new long[] {0, 0, 0, -1};
            }
            counts.put(region, rows);
        }
        for (RegionAnswer answer : answers.all()) {
            int second = (int) (answer.sentMillis() / 1000);
            if (second < seconds) {
                long[] row = counts.get(answer.region())[second];
                row[answer.admitted() ? 0 : answer.refused() ? 1 : 2]++;
                row[3] = answer.share() >= 0 ? answer.share() : row[3];
            }
        }
        counts.forEach((region, rows) -> {
            List<Second> list = new ArrayList<>();
            for (long[] row : rows) {
                list.add(new Second(row[0], row[1], row[2], row[3]));
            }
            byRegion.put(region, list);
        });
    }

    int seconds() {
        return seconds;
    }

    Map<String, List<Second>> byRegion() {
        return byRegion;
    }

    long admitted(int second) {
        return byRegion.values().stream().mapToLong(list -> list.get(second).admitted()).sum();
    }

    /** {@code second, <region> admitted, <region> refused, <region> other, <region> share, ..., all admitted}. */
    Path writeCsv(Path file) {
        List<String> lines = new ArrayList<>();
        StringBuilder header = new StringBuilder("second");
        byRegion.keySet().forEach(r -> header.append(',').append(r).append(" admitted,").append(r)
                .append(" refused,").append(r).append(" other,").append(r).append(" share"));
        lines.add(header.append(",all admitted").toString());
        for (int s = 0; s < seconds; s++) {
            StringBuilder line = new StringBuilder().append(s);
            for (List<Second> list : byRegion.values()) {
                Second row = list.get(s);
                line.append(',').append(row.admitted()).append(',').append(row.refused()).append(',')
                        .append(row.other()).append(',').append(row.share() < 0 ? "" : String.valueOf(row.share()));
            }
            lines.add(line.append(',').append(admitted(s)).toString());
        }
        try {
            Files.createDirectories(file.getParent());
            return Files.write(file, lines);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
