import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The java-threads target: a ServerSocket and one new platform thread per
 * connection, the 2007 "thread per connection" server.
 *
 * Usage: java ThreadsServer IP:PORT
 *
 * Writes "java-threads: ready ..." to standard error once it listens. On
 * SIGTERM the JVM runs the shutdown hook, which closes the listener, and
 * exits with status 143.
 */
public final class ThreadsServer {
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            Hello.usage("java-threads", "usage: ThreadsServer IP:PORT");
        }
        InetSocketAddress addr = null;
        try {
            addr = Hello.parseAddr(args[0]);
        } catch (IllegalArgumentException e) {
            Hello.usage("java-threads", e.getMessage());
        }
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        try {
            listener.bind(addr, 65535); // the kernel caps it at somaxconn, as for net/http
        } catch (IOException e) {
            System.err.println("java-threads: listening on " + args[0] + ": " + e.getMessage());
            System.exit(1);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                listener.close();
            } catch (IOException e) {
                // exiting anyway
            }
        }));
        Hello.ready("java-threads", (InetSocketAddress) listener.getLocalSocketAddress(), "a thread per connection");
        while (!listener.isClosed()) {
            Socket s;
            try {
                s = listener.accept();
            } catch (IOException e) {
                if (listener.isClosed()) {
                    break;
                }
                pause(); // e.g. too many open files: retry once some close
                continue;
            }
            Thread t = new Thread(new BlockingConnection(s), "conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
