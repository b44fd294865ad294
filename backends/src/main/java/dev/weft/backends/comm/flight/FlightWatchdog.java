package dev.weft.backends.comm.flight;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This process's one watchdog thread: it advances the {@link FlightClock} every tick and, every
 * {@value #SCAN_TICKS} ticks, looks in each watched world for a rank blocked past {@code WEFT_COMM_TIMEOUT}.
 * Recording therefore sets no timer per call. The thread is a daemon in the root thread group, so that it neither
 * keeps the JVM alive nor counts as a thread of the fake rank that happened to start it.
 */
final class FlightWatchdog {
    private static final int SCAN_TICKS = 10;
    private static final Set<FlightWorld> WORLDS = ConcurrentHashMap.newKeySet();
    private static Thread thread;

    private FlightWatchdog() {
    }

    static synchronized void watch(FlightWorld world) {
        WORLDS.add(world);
        if (thread == null) {
            ThreadGroup root = Thread.currentThread().getThreadGroup();
            while (root.getParent() != null) {
                root = root.getParent();
            }
            FlightClock.tick();
            thread = Thread.ofPlatform().group(root).daemon().inheritInheritableThreadLocals(false)
                    .name("weft-flight-watchdog").start(FlightWatchdog::run);
        }
    }

    static void unwatch(FlightWorld world) {
        WORLDS.remove(world);
    }

    private static void run() {
        for (long tick = 1; ; tick++) {
            try {
                Thread.sleep(FlightClock.TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            } catch (OutOfMemoryError heapFull) {
                // a fake rank filled the heap this thread shares: keep watching, the rank's failure frees it
                continue;
            }
            FlightClock.tick();
            if (tick % SCAN_TICKS == 0) {
                long now = FlightClock.now();
                for (FlightWorld w : WORLDS) {
                    try {
                        w.check(now);
                    } catch (RuntimeException e) {
                        System.err.print("weft: the flight recorder's watchdog failed: " + e + System.lineSeparator());
                    }
                }
            }
        }
    }
}
