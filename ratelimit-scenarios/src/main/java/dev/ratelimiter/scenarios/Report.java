package dev.ratelimiter.scenarios;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** A scenario's checks, and its time series written as CSV and drawn as a PNG chart. */
final class Report {

    /** One requirement check: what was measured, against what bound. */
    record Check(String requirement, String measured, String bound, boolean pass) {

        String line() {
            return String.format(Locale.ROOT, "  [%s] %s: %s (%s)", pass ? "PASS" : "FAIL", requirement, measured,
                    bound);
        }
    }

    /** A scenario's outcome. */
    record Result(String scenario, String description, List<Check> checks, Path csv, Path png) {

        boolean passed() {
            return checks.stream().allMatch(Check::pass);
        }
    }

    private Report() {
    }

    static String f(double value) {
        return String.format(Locale.ROOT, value >= 100 || value == Math.rint(value) ? "%.0f" : "%.2f", value);
    }

    static String pct(double share) {
        return String.format(Locale.ROOT, "%.2f %%", share * 100);
    }

    /** Writes {@code <name>.csv} and {@code <name>.png}: allowed, refused, failed and upstream hits per second. */
    static Path[] series(Path dir, String name, Load.Run run, Upstream upstream, int seconds) {
        try {
            Files.createDirectories(dir);
            Path csv = dir.resolve(name + ".csv");
            List<String> lines = new ArrayList<>();
            lines.add("second,allowed,refused,failed,upstream");
            XYSeries allowed = new XYSeries("allowed (200)/s");
            XYSeries refused = new XYSeries("refused (429/503)/s");
            XYSeries failed = new XYSeries("failed or timed out/s");
            XYSeries hits = new XYSeries("reached upstream/s");
            for (int s = 0; s < seconds; s++) {
                long a = run.okPerSecond.get(s);
                long r = run.refusedPerSecond.get(s);
                long x = run.failedPerSecond.get(s);
                long u = upstream.perSecond(s);
                lines.add(s + "," + a + "," + r + "," + x + "," + u);
                allowed.add(s, a);
                refused.add(s, r);
                failed.add(s, x);
                hits.add(s, u);
            }
            Files.write(csv, lines);
            XYSeriesCollection data = new XYSeriesCollection();
            data.addSeries(allowed);
            data.addSeries(refused);
            data.addSeries(hits);
            data.addSeries(failed);
            Path png = dir.resolve(name + ".png");
            lineChart(png, name, "requests per second", data, new Color[] {new Color(0x2E7D32), new Color(0xC62828),
                    new Color(0x1565C0), new Color(0x6A1B9A)}, 2);
            return new Path[] {csv, png};
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A line chart per second, one colour per series, series {@code dashed} drawn thin and dashed (-1: none). */
    static void lineChart(Path png, String title, String yAxis, XYSeriesCollection data, Color[] colours, int dashed)
            throws IOException {
        JFreeChart chart = ChartFactory.createXYLineChart(title, "second", yAxis, data, PlotOrientation.VERTICAL, true,
                false, false);
        XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < colours.length; i++) {
            renderer.setSeriesPaint(i, colours[i]);
            renderer.setSeriesStroke(i, new BasicStroke(i == dashed ? 1.5f : 2.5f, BasicStroke.CAP_ROUND,
                    BasicStroke.JOIN_ROUND, 1f, i == dashed ? new float[] {6f, 4f} : null, 0f));
        }
        plot.setRenderer(renderer);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 900, 450);
    }

    /** Writes {@code chart} as a PNG of that size, its directory made if need be. */
    static Path savePng(JFreeChart chart, Path file, int width, int height) {
        try {
            Files.createDirectories(file.getParent());
            ChartUtils.saveChartAsPNG(file.toFile(), chart, width, height);
            return file;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
