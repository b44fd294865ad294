package dev.weft.backends.timeline;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Draws a merged timeline as an SVG Gantt chart: one lane per rank ({@code <g class="lane" data-rank="N">}),
 * compiled calls as pale boxes the height of the lane, kernels and communication as coloured boxes inside them, a
 * time axis with labels, a legend and a title. Events closer than half a pixel are drawn as one box (its tooltip
 * says how many), so the file stays small however many events there are.
 */
public final class GanttSvg {
    private static final int WIDTH = 1200;
    private static final int LEFT = 80;
    private static final int RIGHT = 30;
    private static final int TOP = 56;
    private static final int LANE = 34;
    private static final int GAP = 10;
    private static final double MERGE_PX = 0.5;
    private static final String[][] CATEGORIES = {
        {EventSite.CALL, "#c6dbef", "compiled call"},
        {EventSite.KERNEL, "#f28e2b", "kernel"},
        {EventSite.COMM, "#2a9d4b", "communication"},
    };

    private GanttSvg() {
    }

    /** The chart of {@code timeline} under {@code title}. */
    public static String render(TimelineMerge timeline, String title) {
        List<Integer> ranks = timeline.ranks();
        double span = timeline.boxes().stream().mapToDouble(TimelineBox::end).max().orElse(0);
        double scale = span > 0 ? (WIDTH - LEFT - RIGHT) / span : 0;
        int lanesBottom = TOP + ranks.size() * (LANE + GAP);
        int height = lanesBottom + 64;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, height, WIDTH,
                height));
        s.append(String.format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, height));
        s.append("<text x=\"").append(LEFT).append("\" y=\"24\" font-size=\"16\" font-weight=\"bold\">")
                .append(escape(title)).append("</text>\n");
        s.append("<text x=\"").append(LEFT).append("\" y=\"42\" fill=\"#555\">")
                .append(escape(ranks.size() + " ranks, " + timeline.boxes().size() + " events"
                        + (timeline.dropped() > 0 ? ", " + timeline.dropped() + " dropped past the cap" : "")))
                .append("</text>\n");
        axis(s, span, scale, lanesBottom);
        for (int i = 0; i < ranks.size(); i++) {
            int rank = ranks.get(i);
            int y = TOP + i * (LANE + GAP);
            s.append("<g class=\"lane\" data-rank=\"").append(rank).append("\">\n");
            s.append(String.format("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>%n", LEFT, y,
                    WIDTH - LEFT - RIGHT, LANE));
            s.append(String.format("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d</text>%n", LEFT - 8,
                    y + LANE / 2 + 4, rank));
            for (String[] c : CATEGORIES) {
                boolean full = c[0].equals(EventSite.CALL);
                List<TimelineBox> mine = timeline.boxes().stream()
                        .filter(b -> b.rank() == rank && b.category().equals(c[0]))
                        .sorted(Comparator.comparingDouble(TimelineBox::start)).toList();
                for (Run r : runs(mine, scale)) {
                    s.append(String.format(Locale.ROOT, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\""
                                    + " fill=\"%s\"><title>%s</title></rect>%n", LEFT + r.x0, full ? y : y + 7,
                            Math.max(r.x1 - r.x0, MERGE_PX), full ? LANE : LANE - 14, c[1], escape(r.label())));
                }
            }
            s.append("</g>\n");
        }
        legend(s, lanesBottom + 46);
        return s.append("</svg>\n").toString();
    }

    /** Boxes in pixels, those closer than {@link #MERGE_PX} joined; {@code boxes} sorted by start. */
    private static List<Run> runs(List<TimelineBox> boxes, double scale) {
        List<Run> runs = new ArrayList<>();
        Run cur = null;
        for (TimelineBox b : boxes) {
            double x0 = b.start() * scale;
            double x1 = b.end() * scale;
            if (cur != null && x0 <= cur.x1 + MERGE_PX) {
                cur.x1 = Math.max(cur.x1, x1);
                cur.count++;
                cur.duration += b.duration();
            } else {
                cur = new Run(x0, x1, b.name(), b.duration());
                runs.add(cur);
            }
        }
        return runs;
    }

    private static void axis(StringBuilder s, double span, double scale, int y) {
        s.append(String.format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>%n", LEFT, y,
                WIDTH - RIGHT, y));
        if (span <= 0) {
            return;
        }
        double step = niceStep(span / 8);
        double unit = span >= 1e6 ? 1e6 : span >= 1e3 ? 1e3 : 1;
        String unitName = unit == 1e6 ? "s" : unit == 1e3 ? "ms" : "µs";
        for (int k = 0; k * step <= span * (1 + 1e-9); k++) {
            double x = LEFT + k * step * scale;
            s.append(String.format(Locale.ROOT, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#333\"/>"
                    + "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#ddd\"/>%n", x, y, x, y + 5, x,
                    TOP - 4, x, y));
            s.append(String.format(Locale.ROOT, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s %s</text>%n",
                    x, y + 18, plain(k * step / unit), unitName));
        }
    }

    /** The smallest of 1, 2 or 5 times a power of ten that is at least {@code raw}. */
    private static double niceStep(double raw) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * magnitude >= raw * (1 - 1e-9)) {
                return m * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static void legend(StringBuilder s, int y) {
        int x = LEFT;
        for (String[] c : CATEGORIES) {
            s.append(String.format("<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#999\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", x, y - 11, c[1], x + 20, y, c[2]));
            x += 150;
        }
        s.append(String.format("<text x=\"%d\" y=\"%d\" fill=\"#555\">time since the first event</text>%n", x, y));
    }

    private static String plain(double v) {
        return new BigDecimal(v).setScale(6, RoundingMode.HALF_EVEN).stripTrailingZeros().toPlainString();
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** One drawn box: a pixel range and the events in it. */
    private static final class Run {
        final double x0;
        double x1;
        final String first;
        int count = 1;
        double duration;

        Run(double x0, double x1, String first, double duration) {
            this.x0 = x0;
            this.x1 = x1;
            this.first = first;
            this.duration = duration;
        }

        String label() {
            String time = plain(duration) + " µs";
            return count == 1 ? first + ", " + time : count + " events from " + first + ", " + time + " in all";
        }
    }
}
