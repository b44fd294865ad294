package dev.weft.spi;

/**
 * Work a program will need soon, started on a daemon thread of its own so that it overlaps what the program does
 * meanwhile: linking native functions, loading a library. The work is a method reference to a static method of the
 * class whose static initialiser does the loading ({@code Libc::link}): the reference itself initialises nothing,
 * and the first thread to use that class finds it ready or waits for the preloading thread's class initialisation.
 * A static method of that class that starts the thread itself would not do (as {@code Libc} and
 * {@code NativeLoopLinking} had until 2026-12-06): calling any static method of a class initialises it on the
 * caller's thread first.
 */
public final class Preload {
    private Preload() {
    }

    /** Runs {@code work} on a daemon thread named {@code threadName}; returns at once. */
    public static void inBackground(String threadName, Runnable work) {
        Thread.ofPlatform().daemon().name(threadName).start(() -> {
            try {
                work.run();
            } catch (LinkageError | RuntimeException e) {
                // only an optimisation fails: the thread that needs the work first reports the failure
            }
        });
    }
}
