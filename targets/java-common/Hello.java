import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every Java target answers, byte for byte as cmd/hello: the body, the
 * header block in net/http's order, the Date value, and the "?wait=" rules.
 * cmd/hello's "?work=" (calibrated CPU time per request) is not done here:
 * a request that asks for it gets a 400, so no measurement can take these
 * servers for having done it. Shared by java-threads, java-pool,
 * java-netty and java-jetty.
 */
final class Hello {
    static final byte[] BODY = "Hello World\n".getBytes(StandardCharsets.US_ASCII);
    static final byte[] BODY_405 = "Method Not Allowed\n".getBytes(StandardCharsets.US_ASCII);
    static final byte[] BODY_400 = "Bad Request\n".getBytes(StandardCharsets.US_ASCII);
    static final String SERVER = "gophr";
    static final String ALLOW = "GET, HEAD";
    static final long MAX_WAIT_MILLIS = 60_000;

    private static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    private Hello() {}

    /** A Date value and the second it is for; replaced once a second. */
    private record Stamp(long second, String value) {}

    private static volatile Stamp stamp = new Stamp(-1, "");

    /** The Date header value for now, formatted at most once a second. */
    static String date() {
        long now = System.currentTimeMillis() / 1000;
        Stamp s = stamp;
        if (s.second != now) {
            s = new Stamp(now, HTTP_DATE.format(Instant.ofEpochSecond(now)));
            stamp = s;
        }
        return s.value;
    }

    static String reason(int status) {
        switch (status) {
            case 200: return "OK";
            case 400: return "Bad Request";
            case 405: return "Method Not Allowed";
            default: throw new IllegalArgumentException("status " + status);
        }
    }

    /**
     * The header block net/http writes for this handler: Connection:
     * keep-alive first when the connection stays open, Connection: close last
     * when an HTTP/1.1 connection closes, nothing for HTTP/1.0 that closes.
     */
    static byte[] head(int status, boolean http10, boolean keepAlive, int length) {
        StringBuilder b = new StringBuilder(200);
        b.append(http10 ? "HTTP/1.0 " : "HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
        if (status == 405) {
            b.append("Allow: ").append(ALLOW).append("\r\n");
        }
        if (keepAlive) {
            b.append("Connection: keep-alive\r\n");
        }
        b.append("Content-Length: ").append(length).append("\r\n")
                .append("Content-Type: text/plain\r\n")
                .append("Date: ").append(date()).append("\r\n")
                .append("Server: ").append(SERVER).append("\r\n");
        if (!keepAlive && !http10) {
            b.append("Connection: close\r\n");
        }
        return b.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Status and body for a method and query string (null if none). */
    static int status(String method, String query) {
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return 405;
        }
        return waitMillis(query) < 0 || asksForWork(query) ? 400 : 200;
    }

    /** Whether a query string has a "work" parameter (see the class doc). */
    static boolean asksForWork(String query) {
        if (query == null || query.isEmpty()) {
            return false;
        }
        for (String p : query.split("&")) {
            if (p.equals("work") || p.startsWith("work=")) {
                return true;
            }
        }
        return false;
    }

    static byte[] body(int status) {
        return status == 200 ? BODY : status == 405 ? BODY_405 : BODY_400;
    }

    private static final Pattern DURATION = Pattern.compile("(?:[0-9]+(?:\\.[0-9]+)?(?:ns|us|ms|s|m|h))+");
    private static final Pattern PART = Pattern.compile("([0-9]+)(?:\\.([0-9]+))?(ns|us|ms|s|m|h)");

    /**
     * The first "wait" parameter of a query string in milliseconds: 0
     * without one, -1 when it is not a duration in Go's syntax (unsigned:
     * digits[.digits] with ns, us, ms, s, m or h, repeated; or "0") or is
     * over 60 s.
     */
    static long waitMillis(String query) {
        if (query == null || query.isEmpty()) {
            return 0;
        }
        for (String p : query.split("&")) {
            if (p.startsWith("wait=")) {
                long ns = durationNanos(p.substring(5));
                return ns < 0 || ns > MAX_WAIT_MILLIS * 1_000_000 ? -1 : ns / 1_000_000;
            }
        }
        return 0;
    }

    static long durationNanos(String v) {
        if (v.equals("0")) {
            return 0;
        }
        if (!DURATION.matcher(v).matches()) {
            return -1;
        }
        long total = 0;
        Matcher m = PART.matcher(v);
        while (m.find()) {
            long scale;
            switch (m.group(3)) {
                case "ns": scale = 1L; break;
                case "us": scale = 1_000L; break;
                case "ms": scale = 1_000_000L; break;
                case "s": scale = 1_000_000_000L; break;
                case "m": scale = 60_000_000_000L; break;
                default: scale = 3_600_000_000_000L;
            }
            try {
                long n = Math.multiplyExact(Long.parseLong(m.group(1)), scale);
                if (m.group(2) != null) {
                    String f = m.group(2).length() > 18 ? m.group(2).substring(0, 18) : m.group(2);
                    n = Math.addExact(n, (long) (Long.parseLong(f) / Math.pow(10, f.length()) * scale));
                }
                total = Math.addExact(total, n);
            } catch (ArithmeticException | NumberFormatException e) {
                return -1;
            }
        }
        return total;
    }

    /** Sleeps for a wait the client asked for, keeping the interrupt. */
    static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Parses "IP:PORT" (IPv6 in brackets). */
    static InetSocketAddress parseAddr(String addr) {
        int i = addr.lastIndexOf(':');
        if (i < 0) {
            throw new IllegalArgumentException("address " + addr + " has no port; want IP:PORT");
        }
        String host = addr.substring(0, i);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(addr.substring(i + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("address " + addr + ": bad port");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("address " + addr + ": port out of range");
        }
        return new InetSocketAddress(host, port);
    }

    /** The line a harness waits for, on standard error. */
    static void ready(String name, InetSocketAddress bound, String detail) {
        System.err.printf("%s: ready on %s:%d, %d processors, %s, Java %s, pid %d%n",
                name, bound.getAddress().getHostAddress(), bound.getPort(),
                Runtime.getRuntime().availableProcessors(), detail,
                Runtime.version(), ProcessHandle.current().pid());
    }

    /** One line on standard error and exit status 2, for bad arguments. */
    static void usage(String name, String msg) {
        System.err.println(name + ": " + msg);
        System.exit(2);
    }
}
