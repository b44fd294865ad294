package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ThreadLevel;
import dev.weft.comm.Comm;
import dev.weft.spi.CommBinding;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Threads a rank starts: they see its world, and communicate as the thread level allows, as under MPI. */
class FakeThreadLevelTest {
    private static FakeSettings settings(ThreadLevel level) {
        return new FakeSettings(Duration.ofSeconds(FakeWorld.DEFAULT_TIMEOUT_SECONDS), 0, level);
    }

    /** Runs {@code body} on a new thread of the calling rank and returns what it threw, or null. */
    private static Throwable onChildThread(ThrowingRunnable body) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread child = Thread.ofPlatform().name("child").start(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        child.join();
        return thrown.get();
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aThreadStartedByARankSeesItsWorld() {
        FakeWorld.run(3, world -> CommBinding.with(world, () -> {
            AtomicReference<Comm> seen = new AtomicReference<>();
            try {
                assertThat(onChildThread(() -> seen.set(Comm.world()))).isNull();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            assertThat(seen.get().rank()).isEqualTo(world.rank());
            assertThat(seen.get().size()).isEqualTo(3);
            assertThat(seen.get().handle()).isSameAs(world);
            return null;
        }));
    }

    @Test
    void anExceptionEscapingAThreadOfARankFailsTheRank() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                Thread.ofPlatform().start(() -> {
                    throw new IllegalStateException("worker failed");
                }).join();
            }
        }));
        assertThat(e.failures()).containsOnlyKeys(0);
        assertThat(e.failures().get(0)).isInstanceOf(IllegalStateException.class).hasMessage("worker failed");
    }

    @ParameterizedTest
    @EnumSource(value = ThreadLevel.class, names = {"SINGLE", "FUNNELED"})
    void onlyTheRanksOwnThreadCommunicates(ThreadLevel level) {
        FakeWorld.run(2, settings(level), world -> {
            if (world.rank() == 0) {
                Throwable t = onChildThread(() -> world.send(of(DType.I32, 1), DType.I32, 1, 1, 0, at(10)));
                assertThat(t).isInstanceOf(CommException.class).hasMessage("User.java:10: send on 'world' from "
                        + "thread \"child\": fake ranks run at " + level + ", so only rank 0's own thread "
                        + "(\"weft-fake-rank-0\") may communicate, as only the thread that initialised MPI may under "
                        + "mpirun; set WEFT_MPI_THREAD_LEVEL=multiple (or serialized) to communicate from other "
                        + "threads");
            }
            world.barrier(at(11));
        });
    }

    /**
     * A communicator of one rank used on another rank's thread (as a {@code static Comm} makes it on fake ranks) is
     * named as such at every thread level, not answered with thread-level advice.
     */
    @ParameterizedTest
    @EnumSource(ThreadLevel.class)
    void anotherRanksCommunicatorIsNamedAsSharedBetweenRanks(ThreadLevel level) {
        AtomicReference<Communicator> ofRank1 = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        FakeWorld.run(2, settings(level), world -> {
            if (world.rank() == 1) {
                ofRank1.set(world);
            } else {
                while (ofRank1.get() == null) {
                    Thread.onSpinWait();
                }
                try {
                    ofRank1.get().send(of(DType.I32, 1), DType.I32, 1, 0, 0, at(40));
                } catch (CommException e) {
                    thrown.set(e);
                }
            }
            world.barrier(at(41));
        });
        assertThat(thrown.get()).isInstanceOf(CommException.class).hasMessage("User.java:40: send on 'world': rank 1's"
                + " communicator used on rank 0's thread (\"weft-fake-rank-0\"): a Comm kept in a static field (or"
                + " otherwise shared between fake ranks) reaches every rank, since fake ranks are threads of one JVM,"
                + " whereas under mpirun each rank is a process with its own; keep the Comm in a local or an instance"
                + " field, or take Comm.world() on each rank");
    }

    @Test
    void atMultipleAnyThreadCommunicatesAndARunningOneIsNoDeadlock() {
        FakeWorld.run(2, settings(ThreadLevel.MULTIPLE), world -> {
            MemorySegment got = filler(DType.I32, 1);
            if (world.rank() == 0) {
                // rank 0's own thread is blocked while its child, not yet communicating, still runs
                Thread child = Thread.ofPlatform().name("child").start(() -> {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    world.send(of(DType.I32, 7), DType.I32, 1, 1, 0, at(20));
                });
                world.recv(got, DType.I32, 1, 1, 1, at(21));
                child.join();
                assertThat(read(got, DType.I32, 1)).containsExactly(8);
            } else {
                world.recv(got, DType.I32, 1, 0, 0, at(22));
                world.send(of(DType.I32, read(got, DType.I32, 1)[0] + 1), DType.I32, 1, 0, 1, at(23));
            }
        });
    }

    @Test
    void atSerializedACallWhileAnotherThreadOfTheRankIsBlockedFails() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        FakeWorld.run(1, settings(ThreadLevel.SERIALIZED), world -> {
            Communicator self = world;
            Thread child = Thread.ofPlatform().name("child").start(() -> {
                try {
                    self.recv(filler(DType.I32, 1), DType.I32, 1, 0, 0, at(30));
                } catch (CommException ended) {
                    // the rank ended while the child was still receiving
                }
            });
            while (child.getState() != Thread.State.TIMED_WAITING) {
                Thread.onSpinWait();
            }
            try {
                self.send(of(DType.I32, 1), DType.I32, 1, 0, 0, at(31));
            } catch (CommException e) {
                thrown.set(e);
            }
        });
        assertThat(thrown.get()).hasMessage("User.java:31: send on 'world' from thread \"weft-fake-rank-0\" while "
                + "thread \"child\" of the same rank is blocked in recv(1 x i32) on 'world' from rank 0 tag 0 at "
                + "User.java:30: at MPI_THREAD_SERIALIZED the threads of a rank must not communicate at once; set "
                + "WEFT_MPI_THREAD_LEVEL=multiple to allow it");
    }
}
