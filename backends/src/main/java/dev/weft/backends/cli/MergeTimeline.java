package dev.weft.backends.cli;

import dev.weft.backends.timeline.GanttSvg;
import dev.weft.backends.timeline.TimelineMerge;
import dev.weft.spi.OutputDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code bin/weft timeline DIR [TITLE]}: merges the ranks' files that {@code WEFT_TIMELINE=DIR} wrote into
 * {@code DIR/timeline.json} (one trace, one process per rank, for Perfetto or {@code chrome://tracing}) and draws
 * them as the Gantt chart {@code DIR/timeline.svg} under TITLE (default: the directory's name). Exits 2, with one
 * line naming the file and what is wrong, when DIR holds no readable rank files or the results cannot be written.
 */
public final class MergeTimeline {
    private MergeTimeline() {
    }

    public static void main(String[] args) {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: weft timeline DIR [TITLE]   (DIR as given to WEFT_TIMELINE)");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        if (!Files.isDirectory(dir)) {
            System.err.println("weft timeline: " + dir + " is not a directory (give the one WEFT_TIMELINE named)");
            System.exit(2);
        }
        try {
            TimelineMerge timeline = TimelineMerge.read(dir);
            OutputDirectory out = new OutputDirectory(dir, "the DIR of weft timeline");
            Path json = out.write("timeline.json", timeline::writeTo);
            String title = args.length > 1 ? args[1] : "Weft timeline: " + dir.toAbsolutePath().normalize().getFileName();
            Path svg = out.write("timeline.svg", w -> w.write(GanttSvg.render(timeline, title)));
            System.out.println("wrote " + json + " (" + timeline.ranks().size() + " ranks, "
                    + timeline.boxes().size() + " events) and " + svg);
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("weft timeline: " + e.getMessage());
            System.exit(2);
        }
    }
}
