package dev.weft.bench;

import java.util.List;
import java.util.Locale;

/** The results as a Markdown table: case | Weft | reference | ratio | notes. */
public final class MarkdownTable {
    private MarkdownTable() {
    }

    public static String render(List<Row> rows) {
        StringBuilder s = new StringBuilder();
        s.append("| case | Weft | reference | ratio (reference time / Weft time; > 1: Weft faster) | notes |\n");
        s.append("|---|---|---|---|---|\n");
        for (Row r : rows) {
            s.append("| ").append(cell(r.benchCase()))
                    .append(" | ").append(cell(value(r.unit(), r.weft())))
                    .append(" | ").append(r.reference().isEmpty() ? "—" : cell(r.reference() + ": " + value(r.unit(), r.ref())))
                    .append(" | ").append(r.ratio().isPresent()
                            ? String.format(Locale.ROOT, "%.3g", r.ratio().getAsDouble()) : "n/a")
                    .append(" | ").append(cell(String.join("; ", r.allNotes())))
                    .append(" |\n");
        }
        return s.toString();
    }

    private static String value(Unit unit, Outcome o) {
        return o instanceof Measurement m ? unit.format(m) : "—";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
