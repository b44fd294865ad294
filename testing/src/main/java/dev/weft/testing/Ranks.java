package dev.weft.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test method once per listed rank count; each run executes the body on that many fake ranks,
 * one thread each, with {@code Comm.world()} bound to the thread's rank. A {@code Comm} parameter receives that
 * rank's world. The run fails when any rank fails; the {@link AssertionError} names every failing rank.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@TestTemplate
@ExtendWith(RanksExtension.class)
public @interface Ranks {
    /** Rank counts, one invocation each (display name "N ranks"). */
    int[] value();
}
