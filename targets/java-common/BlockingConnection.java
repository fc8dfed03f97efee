import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One HTTP/1.1 connection served by one blocking thread, as the 2007
 * servers did: read a request, answer it, repeat while the connection is kept
 * alive (pipelined requests wait in the input buffer). Used by java-threads
 * (a thread per connection) and java-pool (a fixed pool of them).
 */
final class BlockingConnection implements Runnable {
    static final int HEADER_TIMEOUT_MILLIS = 10_000; // as cmd/hello's -read-header-timeout
    static final int IDLE_TIMEOUT_MILLIS = 300_000;  // as cmd/hello's -idle-timeout
    static final int MAX_HEADER = 1 << 20;           // net/http's DefaultMaxHeaderBytes
    static final long MAX_BODY = 1 << 20;            // a larger body closes the connection

    private static final byte[] BAD_REQUEST = ("HTTP/1.1 400 Bad Request\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request")
            .getBytes(StandardCharsets.US_ASCII);

    private final Socket socket;
    private final StringBuilder line = new StringBuilder(128);

    BlockingConnection(Socket socket) {
        this.socket = socket;
    }

    @Override
    public void run() {
        try (Socket s = socket) {
            s.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(s.getInputStream(), 8192);
            OutputStream out = s.getOutputStream();
            while (serve(in, out)) {
                // next request on the kept-alive connection
            }
        } catch (IOException e) {
            // the peer went away or timed out: nothing to answer
        }
    }

    /** Serves one request; false when the connection should close. */
    private boolean serve(InputStream in, OutputStream out) throws IOException {
        socket.setSoTimeout(IDLE_TIMEOUT_MILLIS);
        int first = in.read();
        if (first < 0) {
            return false;
        }
        long deadline = System.nanoTime() + HEADER_TIMEOUT_MILLIS * 1_000_000L;
        int[] budget = {MAX_HEADER};
        String requestLine = readLine(in, first, deadline, budget);
        while (requestLine != null && requestLine.isEmpty()) { // blank lines before a request
            requestLine = readLine(in, -1, deadline, budget);
        }
        if (requestLine == null) {
            return false;
        }
        String[] parts = requestLine.split(" ");
        if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
            return badRequest(in, out);
        }
        String method = parts[0];
        boolean http10 = parts[2].equals("HTTP/1.0");
        String connection = "";
        long length = 0;
        boolean chunked = false;
        for (;;) {
            String h = readLine(in, -1, deadline, budget);
            if (h == null) {
                return false;
            }
            if (h.isEmpty()) {
                break;
            }
            int colon = h.indexOf(':');
            if (colon <= 0) {
                return badRequest(in, out);
            }
            String name = h.substring(0, colon).trim();
            String value = h.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("Connection")) {
                connection = value.toLowerCase(Locale.ROOT);
            } else if (name.equalsIgnoreCase("Content-Length")) {
                try {
                    length = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    length = -1;
                }
                if (length < 0) {
                    return badRequest(in, out);
                }
            } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
                chunked = true;
            }
        }
        boolean keepAlive = http10 ? hasToken(connection, "keep-alive") : !hasToken(connection, "close");
        // A body is discarded when it is small; otherwise (or when chunked)
        // the connection closes after the answer, as net/http does.
        if (chunked || length > MAX_BODY) {
            keepAlive = false;
        } else if (length > 0) {
            in.skipNBytes(length);
        }

        int q = parts[1].indexOf('?');
        String query = q < 0 ? null : parts[1].substring(q + 1);
        int status = Hello.status(method, query);
        if (status == 200) {
            Hello.sleep(Hello.waitMillis(query));
        }
        byte[] body = Hello.body(status);
        byte[] head = Hello.head(status, http10, keepAlive, body.length);
        if (method.equals("HEAD")) {
            out.write(head);
        } else {
            byte[] all = new byte[head.length + body.length];
            System.arraycopy(head, 0, all, 0, head.length);
            System.arraycopy(body, 0, all, head.length, body.length);
            out.write(all);
        }
        return keepAlive;
    }

    /**
     * Answers 400 as net/http does and closes once the peer has had the
     * answer: closing with unread input would reset the connection.
     */
    private boolean badRequest(InputStream in, OutputStream out) throws IOException {
        out.write(BAD_REQUEST);
        socket.shutdownOutput();
        socket.setSoTimeout(1000);
        try {
            in.skipNBytes(MAX_BODY);
        } catch (IOException e) {
            // EOF or timeout: done either way
        }
        return false;
    }

    private static boolean hasToken(String value, String token) {
        for (String t : value.split(",")) {
            if (t.trim().equals(token)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads one CRLF- (or LF-) terminated line; null at EOF, past the header
     * deadline or over the header budget. first is a byte already read, or -1.
     */
    private String readLine(InputStream in, int first, long deadline, int[] budget) throws IOException {
        line.setLength(0);
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            return null;
        }
        // Checked per line, not per byte: a line trickled in slowly can
        // overrun the deadline by up to one read timeout.
        socket.setSoTimeout((int) left);
        int c = first;
        for (;;) {
            if (c < 0) {
                try {
                    c = in.read();
                } catch (SocketTimeoutException e) {
                    return null;
                }
                if (c < 0) {
                    return null;
                }
            }
            if (--budget[0] < 0) {
                return null;
            }
            if (c == '\n') {
                int n = line.length();
                if (n > 0 && line.charAt(n - 1) == '\r') {
                    line.setLength(n - 1);
                }
                return line.toString();
            }
            line.append((char) c);
            c = -1;
        }
    }
}
