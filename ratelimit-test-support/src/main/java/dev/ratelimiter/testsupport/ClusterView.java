package dev.ratelimiter.testsupport;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One node's {@code CLUSTER NODES} reply, parsed: who is master of which slots, who replicates whom, and
 * which nodes it considers failing. Different nodes may disagree while the cluster converges, so the fixture
 * compares the views of all running nodes before declaring a state reached.
 */
record ClusterView(List<Entry> entries) {

    /** One line: {@code <id> <ip:port@cport[,hostname]> <flags> <master id or -> <ping> <pong> <epoch> <link> <slots...>}. */
    record Entry(String id, int port, Set<String> flags, String masterId, List<int[]> slotRanges, String link) {

        boolean isMaster() {
            return flags.contains("master");
        }

        boolean isReplica() {
            return flags.contains("slave");
        }

        boolean isMyself() {
            return flags.contains("myself");
        }

        /** Failing (fail or fail?), still in handshake, or without an address: not part of a healthy cluster. */
        boolean isUnhealthy() {
            return flags.contains("fail") || flags.contains("fail?") || flags.contains("handshake")
                    || flags.contains("noaddr");
        }

        boolean ownsSlot(int slot) {
            return slotRanges.stream().anyMatch(range -> range[0] <= slot && slot <= range[1]);
        }

        int slotCount() {
            return slotRanges.stream().mapToInt(range -> range[1] - range[0] + 1).sum();
        }

        int firstSlot() {
            return slotRanges.stream().mapToInt(range -> range[0]).min().orElse(Integer.MAX_VALUE);
        }
    }

    static ClusterView parse(String clusterNodes) {
        List<Entry> entries = new ArrayList<>();
        for (String line : clusterNodes.split("\r?\n")) {
            if (!line.isBlank()) {
                entries.add(parseLine(line.trim()));
            }
        }
        return new ClusterView(List.copyOf(entries));
    }

    private static Entry parseLine(String line) {
        String[] fields = line.split(" ");
        if (fields.length < 8) {
            throw new IllegalStateException("unexpected CLUSTER NODES line: " + line);
        }
        String address = fields[1].split("[@,]")[0];
        int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        List<int[]> ranges = new ArrayList<>();
        for (int i = 8; i < fields.length; i++) {
            String slots = fields[i];
            if (slots.startsWith("[")) {
                continue; // a slot being migrated or imported: still owned by this node's other ranges
            }
            int dash = slots.indexOf('-');
            int from = Integer.parseInt(dash < 0 ? slots : slots.substring(0, dash));
            int to = dash < 0 ? from : Integer.parseInt(slots.substring(dash + 1));
            ranges.add(new int[] { from, to });
        }
        return new Entry(fields[0], port, Set.of(fields[2].split(",")), "-".equals(fields[3]) ? null : fields[3],
                List.copyOf(ranges), fields[7]);
    }

    Optional<Entry> byId(String id) {
        return entries.stream().filter(entry -> entry.id().equals(id)).findFirst();
    }

    Optional<Entry> myself() {
        return entries.stream().filter(Entry::isMyself).findFirst();
    }

    /** The master this view says serves {@code slot}. */
    Optional<Entry> ownerOf(int slot) {
        return entries.stream().filter(entry -> entry.isMaster() && entry.ownsSlot(slot)).findFirst();
    }

    /** Masters that own slots, ordered by their first slot (so the order is the same in every view). */
    List<Entry> mastersWithSlots() {
        return entries.stream().filter(entry -> entry.isMaster() && entry.slotCount() > 0)
                .sorted(Comparator.comparingInt(Entry::firstSlot)).toList();
    }

    List<Entry> replicas() {
        return entries.stream().filter(Entry::isReplica).toList();
    }

    List<Entry> replicasOf(String masterId) {
        return entries.stream().filter(entry -> entry.isReplica() && masterId.equals(entry.masterId())).toList();
    }

    int assignedSlots() {
        return entries.stream().filter(Entry::isMaster).mapToInt(Entry::slotCount).sum();
    }

    /** A short text for timeout messages: port, flags, master, slot count of every node. */
    String summary() {
        StringBuilder text = new StringBuilder();
        for (Entry entry : entries) {
            text.append(entry.port()).append(' ').append(String.join(",", entry.flags()))
                    .append(entry.masterId() == null ? "" : " of " + entry.masterId().substring(0, 8))
                    .append(entry.slotCount() > 0 ? " slots=" + entry.slotCount() : "").append("; ");
        }
        return text.toString();
    }
}
