package dev.ratelimiter.scenarios;

import java.awt.BasicStroke;
import java.awt.Color;
import java.nio.file.Path;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** The abuse-score scenario as a PNG: each client's admitted requests per second, the score's arrival marked. */
final class AbuseScoreChart {

    private final AbuseScoreScenario.Series abusive;
    private final AbuseScoreScenario.Series normal;
    private final int scoreAt;
    private final int capacity;
    private final int rate;

    AbuseScoreChart(AbuseScoreScenario.Series abusive, AbuseScoreScenario.Series normal, int scoreAt, int capacity,
            int rate) {
        this.abusive = abusive;
        this.normal = normal;
        this.scoreAt = scoreAt;
        this.capacity = capacity;
        this.rate = rate;
    }

    Path writePng(Path file) {
        return Report.savePng(chart(), file, 1000, 480);
    }

    private JFreeChart chart() {
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(series("abusive client admitted/s", abusive));
        data.addSeries(series("normal client admitted/s", normal));
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        renderer.setSeriesPaint(0, new Color(0xC62828));
        renderer.setSeriesPaint(1, new Color(0x2E7D32));
        renderer.setSeriesStroke(0, new BasicStroke(2.5f));
        renderer.setSeriesStroke(1, new BasicStroke(2.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 1f,
                new float[] {10f, 5f}, 0f));
        XYPlot plot = new XYPlot(data, new NumberAxis("second"), new NumberAxis("admitted per second"), renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        ValueMarker scored = new ValueMarker(scoreAt, Color.GRAY, new BasicStroke(1f));
        scored.setLabel("score 1 pushed");
        scored.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
        scored.setLabelTextAnchor(TextAnchor.TOP_LEFT);
        plot.addDomainMarker(scored);
        ValueMarker limit = new ValueMarker(rate, Color.DARK_GRAY, new BasicStroke(1f, BasicStroke.CAP_BUTT,
                BasicStroke.JOIN_MITER, 1f, new float[] {2f, 3f}, 0f));
        limit.setLabel("whole limit rate " + rate + "/s");
        limit.setLabelAnchor(RectangleAnchor.BOTTOM_RIGHT);
        limit.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
        plot.addRangeMarker(limit);
        return new JFreeChart("abuse-score: one tier (a bucket of " + capacity + ", " + rate + "/s); the abusive "
                + "client's limits lowered, then decaying back", JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    }

    private static XYSeries series(String name, AbuseScoreScenario.Series counts) {
        XYSeries series = new XYSeries(name);
        for (int s = 0; s < counts.seconds(); s++) {
            series.add(s + 0.5, counts.admitted.get(s));
        }
        return series;
    }
}
