package dev.weft.backends.json;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads a JSON file the user gave, with every error an {@link IOException} whose message starts with the file. */
public final class JsonFile {
    private JsonFile() {
    }

    /**
     * The file's one JSON value (see {@link JsonParser}).
     *
     * @throws IOException if it cannot be read, is not UTF-8 text or is not JSON: {@code FILE: why}
     */
    public static Object parse(Path file) throws IOException {
        String text = text(file);
        try {
            return JsonParser.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * The file's text.
     *
     * @throws IOException if it cannot be read, or is not UTF-8 text: {@code FILE is not UTF-8 text (byte offset N)}
     */
    public static String text(Path file) throws IOException {
        ByteBuffer bytes;
        try {
            bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IOException(file + ": cannot be read: " + e, e);
        }
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer chars = CharBuffer.allocate(bytes.remaining()); // UTF-8 has at least a byte per char
        CoderResult r = utf8.decode(bytes, chars, true);
        if (!r.isError()) {
            r = utf8.flush(chars);
        }
        if (r.isError()) {
            throw new IOException(file + " is not UTF-8 text (byte offset " + bytes.position() + ")");
        }
        return chars.flip().toString();
    }
}
