package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.WeftException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reading settings: defaults, sizes with suffixes, bad values as errors naming the setting, the registry whole. */
class SettingTest {
    @AfterEach
    void clear() {
        System.clearProperty(Setting.MEMORY_BUDGET.property());
        System.clearProperty(Setting.FAKE_TIMEOUT.property());
        System.clearProperty(Setting.CHECK.property());
    }

    @Test
    void sizesAreReadInBytesOrWithASuffix() {
        Setting s = Setting.MEMORY_BUDGET;
        assertThat(s.number()).isEqualTo(64L << 20);
        assertThat(with(s, "1234567", s::number)).isEqualTo(1234567);
        assertThat(with(s, " 512m ", s::number)).isEqualTo(512L << 20);
        assertThat(with(s, "2G", s::number)).isEqualTo(2L << 30);
        assertThat(with(s, "3072k", s::number)).isEqualTo(3L << 20);
        assertThat(with(s, "  ", s::number)).as("blank is unset").isEqualTo(64L << 20);
        for (String bad : new String[] {"m", "-1", "1.5g", "12x", "99999999999999g", "1k"}) {
            System.setProperty(s.property(), bad);
            assertThatThrownBy(s::number).as("'%s'", bad).isInstanceOf(WeftException.class)
                    .hasMessage("weft.memory.budget must be a size in bytes (a whole number, or one ending in k, m or"
                            + " g) of at least 1048576, got '" + bad + "'");
        }
    }

    @Test
    void choicesIgnoreCaseAndSecondsMayBeFractional() {
        assertThat(with(Setting.CHECK, "STRICT", Setting.CHECK::choice)).isEqualTo("strict");
        assertThat(with(Setting.FAKE_TIMEOUT, "0.5", Setting.FAKE_TIMEOUT::seconds)).isEqualTo(0.5);
        assertThatThrownBy(() -> with(Setting.FAKE_TIMEOUT, "0", Setting.FAKE_TIMEOUT::seconds))
                .hasMessage("weft.fake.timeout must be a positive number of seconds, got '0'");
    }

    /**
     * Every {@code "WEFT_..."} name in the main sources of Weft's modules is a variable of the registry, and no
     * source reads a Weft setting but through it; the benchmarks' harness (bench) keeps its own variables.
     */
    @Test
    void everySettingInTheSourcesIsInTheRegistry() throws IOException {
        Set<String> registered = Stream.of(Setting.values()).map(Setting::env).filter(Objects::nonNull)
                .collect(Collectors.toSet());
        Pattern name = Pattern.compile("\"(WEFT_[A-Z0-9_]+)\"");
        Pattern directRead = Pattern.compile("System\\.get(env|Property)\\(\"(WEFT_|weft\\.)");
        List<Path> sources;
        try (Stream<Path> modules = Files.list(Path.of("..").toAbsolutePath().normalize())) {
            sources = modules.filter(m -> !m.getFileName().toString().equals("bench"))
                    .map(m -> m.resolve("src/main/java")).filter(Files::isDirectory)
                    .flatMap(SettingTest::javaFiles).toList();
        }
        assertThat(sources).as("main sources found").hasSizeGreaterThan(100);
        for (Path f : sources) {
            String text = Files.readString(f);
            Matcher m = name.matcher(text);
            while (m.find()) {
                assertThat(registered).as("%s names %s", f, m.group(1)).contains(m.group(1));
            }
            if (!f.getFileName().toString().equals("Setting.java")) {
                assertThat(directRead.matcher(text).find()).as("%s reads a setting without Setting", f).isFalse();
            }
        }
    }

    private static Stream<Path> javaFiles(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(p -> p.toString().endsWith(".java")).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> T with(Setting s, String value, Supplier<T> read) {
        System.setProperty(s.property(), value);
        return read.get();
    }
}
