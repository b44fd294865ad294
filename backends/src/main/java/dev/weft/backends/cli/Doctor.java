package dev.weft.backends.cli;

import dev.weft.backends.comm.flight.FlightAnalysis;
import dev.weft.backends.comm.flight.FlightDump;
import dev.weft.backends.comm.flight.FlightFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code bin/weft doctor DIR}: reads the flight files the ranks wrote to {@code DIR} ({@code WEFT_FLIGHT_DIR}) and
 * prints where each rank waits, where the ranks diverged and which point-to-point operations have no match (see
 * {@link FlightAnalysis}). Exits 0 when it read the files, 1 when there were none or one could not be read, 2 on
 * bad usage.
 */
public final class Doctor {
    private Doctor() {
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: weft doctor DIR   (DIR: the WEFT_FLIGHT_DIR the ranks wrote to)");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(f -> f.getFileName().toString().matches("flight-rank\\d+\\.jsonl")).sorted().toList();
        } catch (IOException e) {
            System.err.println("weft doctor: cannot list " + dir + ": " + e);
            System.exit(1);
            return;
        }
        if (files.isEmpty()) {
            System.err.println("weft doctor: no flight-rank<N>.jsonl files in " + dir + " (run with WEFT_FLIGHT_DIR="
                    + dir + ")");
            System.exit(1);
        }
        List<FlightDump> dumps = new ArrayList<>();
        for (Path f : files) {
            try {
                dumps.add(FlightFile.read(f));
            } catch (IOException e) {
                System.err.println("weft doctor: " + e.getMessage());
                System.exit(1);
            }
        }
        FlightAnalysis.report(dumps).forEach(System.out::println);
    }
}
