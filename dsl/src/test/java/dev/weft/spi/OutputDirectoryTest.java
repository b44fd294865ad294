package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutputDirectoryTest {
    @Test
    void aLinkAtTheFilesNameIsReplacedAndItsTargetKept(@TempDir Path dir) throws IOException {
        Path target = Files.writeString(dir.resolve("precious"), "keep");
        Path out = Files.createDirectory(dir.resolve("out"));
        Files.createSymbolicLink(out.resolve("timeline.svg"), target);
        Path file = new OutputDirectory(out, "WEFT_TIMELINE").write("timeline.svg", w -> w.write("<svg/>"));
        assertThat(Files.readString(target)).isEqualTo("keep");
        assertThat(Files.isSymbolicLink(file)).isFalse();
        assertThat(Files.readString(file)).isEqualTo("<svg/>");
        assertThat(out.toFile().list()).as("no temporary file left").containsExactly("timeline.svg");
    }

    @Test
    void makesTheDirectoryWithItsParents(@TempDir Path dir) throws IOException {
        Path file = new OutputDirectory(dir.resolve("a/b"), "WEFT_FLIGHT_DIR").write("f.json", w -> w.write("{}"));
        assertThat(Files.readString(file)).isEqualTo("{}");
    }

    @Test
    void refusesADirectoryOthersMayWriteToUnlessItIsSticky(@TempDir Path dir) throws IOException {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> new OutputDirectory(open, "WEFT_TIMELINE").write("x.json", w -> w.write("{}")))
                .isInstanceOf(IOException.class)
                .hasMessage("refusing to write to " + open + " (chosen by WEFT_TIMELINE): other users may write to it"
                        + " (mode 777) and it has no sticky bit, so they could replace Weft's files; choose a"
                        + " directory only you can write to");
        assertThat(open.toFile().list()).isEmpty();
        Files.setAttribute(open, "unix:mode", 01777);
        assertThat(new OutputDirectory(open, "WEFT_TIMELINE").write("x.json", w -> w.write("{}"))).exists();
    }

    @Test
    void aFileWhereTheDirectoryShouldBeIsNamed(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("plain"), "");
        assertThatThrownBy(() -> new OutputDirectory(file, "WEFT_FLIGHT_DIR").write("x", w -> w.write("y")))
                .isInstanceOf(IOException.class)
                .hasMessage(file + " (chosen by WEFT_FLIGHT_DIR) is not a directory");
    }
}
