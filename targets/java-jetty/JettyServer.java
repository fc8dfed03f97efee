import java.io.IOException;
import java.net.InetSocketAddress;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;

/**
 * The java-jetty target: an embedded Jetty 9 server with one plain handler
 * that blocks its pool thread for the whole request (a "?wait=" sleeps in
 * it), the 2016 study's thread-blocking Jetty. Jetty's own Server and Date
 * headers are off; the handler sets the five headers cmd/hello sends, and
 * Jetty writes them in that order except Content-Length, which it always
 * puts last (the block has the same 141 bytes and the same lines).
 *
 * Usage: java JettyServer IP:PORT
 *
 * Writes "java-jetty: ready ..." to standard error once it listens. On
 * SIGTERM Jetty stops gracefully (up to 5 s) in its shutdown hook and the
 * JVM exits with status 143.
 */
public final class JettyServer {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            Hello.usage("java-jetty", "usage: JettyServer IP:PORT");
        }
        InetSocketAddress addr = null;
        try {
            addr = Hello.parseAddr(args[0]);
        } catch (IllegalArgumentException e) {
            Hello.usage("java-jetty", e.getMessage());
        }
        Server server = new Server(); // QueuedThreadPool: Jetty's default 8..200 threads
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        config.setSendDateHeader(false);
        config.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(config));
        connector.setHost(addr.getHostString());
        connector.setPort(addr.getPort());
        connector.setAcceptQueueSize(65535); // the kernel caps it at somaxconn, as for net/http
        connector.setIdleTimeout(300_000);   // as cmd/hello's -idle-timeout
        server.addConnector(connector);
        server.setHandler(new HelloHandler());
        server.setStopAtShutdown(true);
        server.setStopTimeout(5_000);
        try {
            server.start();
        } catch (IOException e) {
            System.err.println("java-jetty: listening on " + args[0] + ": " + e.getMessage());
            server.stop();
            System.exit(1);
        }
        Hello.ready("java-jetty", new InetSocketAddress(connector.getHost(), connector.getLocalPort()),
                "Jetty " + Server.getVersion() + ", thread-blocking handler");
        server.join();
    }

    static final class HelloHandler extends AbstractHandler {
        private static final HttpField ALLOW = new PreEncodedHttpField(HttpHeader.ALLOW, Hello.ALLOW);
        private static final HttpField KEEP_ALIVE = new PreEncodedHttpField(HttpHeader.CONNECTION, "keep-alive");
        private static final HttpField TEXT_PLAIN = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/plain");
        // Jetty writes a Server field it knows only when it may send its
        // own version; one it does not know it writes as it is.
        private static final HttpField SERVER = new HttpField(null, "Server", Hello.SERVER);

        @Override
        public void handle(String target, Request base, HttpServletRequest req, HttpServletResponse resp)
                throws IOException {
            base.setHandled(true);
            String query = req.getQueryString();
            int status = Hello.status(req.getMethod(), query);
            if (status == 200) {
                Hello.sleep(Hello.waitMillis(query));
            }
            byte[] body = Hello.body(status);
            resp.setStatus(status);
            // Jetty has already set Connection when the request asked for
            // close (HTTP/1.1) or keep-alive (HTTP/1.0); otherwise HTTP/1.1
            // is kept alive and says so, as net/http does.
            HttpFields h = base.getResponse().getHttpFields();
            boolean jettySet = h.contains(HttpHeader.CONNECTION);
            if (status == 405) {
                h.add(ALLOW);
            }
            if (!jettySet && base.getHttpVersion() == HttpVersion.HTTP_1_1) {
                h.add(KEEP_ALIVE);
            }
            h.add(TEXT_PLAIN);
            h.add(HttpHeader.DATE, Hello.date());
            h.add(SERVER);
            // Jetty writes Content-Length after all other fields.
            resp.setContentLength(body.length);
            if (!req.getMethod().equals("HEAD")) {
                resp.getOutputStream().write(body);
            }
        }
    }
}
