package dev.weft.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.WeftException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reading settings: defaults, sizes with suffixes, and bad values as errors naming the setting. */
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
        assertThat(s.number()).isEqualTo(1L << 30);
        assertThat(with(s, "1234567", s::number)).isEqualTo(1234567);
        assertThat(with(s, " 512m ", s::number)).isEqualTo(512L << 20);
        assertThat(with(s, "2G", s::number)).isEqualTo(2L << 30);
        assertThat(with(s, "3072k", s::number)).isEqualTo(3L << 20);
        assertThat(with(s, "  ", s::number)).as("blank is unset").isEqualTo(1L << 30);
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

    private static <T> T with(Setting s, String value, Supplier<T> read) {
        System.setProperty(s.property(), value);
        return read.get();
    }
}
