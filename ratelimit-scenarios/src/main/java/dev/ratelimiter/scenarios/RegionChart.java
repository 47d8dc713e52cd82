package dev.ratelimiter.scenarios;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The regions scenario as a PNG: each region's share above, what each admitted per second below, on one time axis
 * with the phases marked. A region without traffic in a second states no share: its share line has a gap there.
 */
final class RegionChart {

    private static final Color[] COLOURS = {new Color(0xEF6C00), new Color(0x1565C0), new Color(0x2E7D32)};
    /** Solid, long dashes, short dashes: regions given the same traffic draw on top of each other. */
    private static final float[][] DASHES = {null, {10f, 5f}, {3f, 4f}};

    private final GlobalLimit limit;
    private final List<Phase> phases;
    private final RegionSeries series;

    RegionChart(GlobalLimit limit, List<Phase> phases, RegionSeries series) {
        this.limit = limit;
        this.phases = phases;
        this.series = series;
    }

    Path writePng(Path file) {
        try {
            Files.createDirectories(file.getParent());
            ChartUtils.saveChartAsPNG(file.toFile(), chart(), 1000, 720);
            return file;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private JFreeChart chart() {
        XYSeriesCollection shares = new XYSeriesCollection();
        XYSeriesCollection admitted = new XYSeriesCollection();
        series.byRegion().forEach((region, seconds) -> {
            XYSeries share = new XYSeries(region + " share");
            XYSeries ok = new XYSeries(region + " admitted/s");
            for (int s = 0; s < seconds.size(); s++) {
                // plotted mid-second; null leaves a gap where the region had no traffic
                share.add(s + 0.5, seconds.get(s).share() < 0 ? null : seconds.get(s).share());
                ok.add(s + 0.5, seconds.get(s).admitted());
            }
            shares.addSeries(share);
            admitted.addSeries(ok);
        });
        XYSeries all = new XYSeries("all regions admitted/s");
        for (int s = 0; s < series.seconds(); s++) {
            all.add(s + 0.5, series.admitted(s));
        }
        admitted.addSeries(all);

        XYPlot sharePlot = plot(shares, "share of the limit (q=)");
        sharePlot.getRangeAxis().setRange(0, limit.limit() * 1.05);
        sharePlot.addRangeMarker(level(limit.hotShare(), "limit − 2 × floor = " + limit.hotShare()));
        sharePlot.addRangeMarker(level(limit.limit() / (double) limit.regions().size(), "default split"));
        XYPlot admittedPlot = plot(admitted, "admitted per second");
        double rate = limit.limit() / (double) limit.period().toSeconds();
        admittedPlot.addRangeMarker(level(rate, "limit rate " + Report.f(rate) + "/s"));
        for (Phase phase : phases) {
            ValueMarker start = new ValueMarker(phase.fromSecond(), Color.GRAY, new BasicStroke(1f));
            start.setLabel(phase.name());
            start.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            start.setLabelTextAnchor(TextAnchor.TOP_LEFT);
            start.setLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
            sharePlot.addDomainMarker(start);
            admittedPlot.addDomainMarker(new ValueMarker(phase.fromSecond(), Color.GRAY, new BasicStroke(1f)));
        }
        CombinedDomainXYPlot combined = new CombinedDomainXYPlot(new NumberAxis("second"));
        combined.setGap(12);
        combined.add(sharePlot, 1);
        combined.add(admittedPlot, 1);
        return new JFreeChart("regions: one client at 2 × its global limit (" + limit.limit() + " per "
                + limit.period().toSeconds() + " s) moving between regions", JFreeChart.DEFAULT_TITLE_FONT, combined,
                true);
    }

    private static XYPlot plot(XYSeriesCollection data, String rangeLabel) {
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            boolean total = i >= COLOURS.length;
            renderer.setSeriesPaint(i, total ? Color.BLACK : COLOURS[i]);
            renderer.setSeriesStroke(i, new BasicStroke(total ? 1.5f : 2.5f, BasicStroke.CAP_BUTT,
                    BasicStroke.JOIN_ROUND, 1f, total ? new float[] {6f, 3f} : DASHES[i], 0f));
            renderer.setSeriesShape(i, new Ellipse2D.Double(-2.5, -2.5, 5, 5));
            renderer.setSeriesShapesVisible(i, !total);
        }
        XYPlot plot = new XYPlot(data, null, new NumberAxis(rangeLabel), renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        return plot;
    }

    private static ValueMarker level(double value, String label) {
        ValueMarker marker = new ValueMarker(value, Color.DARK_GRAY, new BasicStroke(1f, BasicStroke.CAP_BUTT,
                BasicStroke.JOIN_MITER, 1f, new float[] {2f, 3f}, 0f));
        marker.setLabel(label);
        marker.setLabelAnchor(RectangleAnchor.BOTTOM_RIGHT);
        marker.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
        return marker;
    }
}
