import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The java-pool target: a ServerSocket whose connections are served by a
 * fixed pool of threads (2007 used 5). A pool thread owns a connection until
 * the peer closes it or it idles out, so with kept-alive connections only
 * the first -threads connections are served at once; the rest queue.
 *
 * Usage: java PoolServer [-threads N] IP:PORT
 *
 * Writes "java-pool: ready ..." to standard error once it listens. On
 * SIGTERM the JVM runs the shutdown hook, which closes the listener and
 * stops the pool, and exits with status 143.
 */
public final class PoolServer {
    public static void main(String[] args) throws IOException {
        int threads = 5;
        String addrArg = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("-threads") && i + 1 < args.length) {
                try {
                    threads = Integer.parseInt(args[++i]);
                } catch (NumberFormatException e) {
                    threads = 0;
                }
                if (threads < 1) {
                    Hello.usage("java-pool", "-threads " + args[i] + ": want a positive integer");
                }
            } else if (addrArg == null && !args[i].startsWith("-")) {
                addrArg = args[i];
            } else {
                Hello.usage("java-pool", "usage: PoolServer [-threads N] IP:PORT");
            }
        }
        if (addrArg == null) {
            Hello.usage("java-pool", "usage: PoolServer [-threads N] IP:PORT");
        }
        InetSocketAddress addr = null;
        try {
            addr = Hello.parseAddr(addrArg);
        } catch (IllegalArgumentException e) {
            Hello.usage("java-pool", e.getMessage());
        }
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        try {
            listener.bind(addr, 65535); // the kernel caps it at somaxconn, as for net/http
        } catch (IOException e) {
            System.err.println("java-pool: listening on " + addrArg + ": " + e.getMessage());
            System.exit(1);
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                listener.close();
            } catch (IOException e) {
                // exiting anyway
            }
            pool.shutdownNow();
            try {
                pool.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Hello.ready("java-pool", (InetSocketAddress) listener.getLocalSocketAddress(), "a pool of " + threads + " threads");
        while (!listener.isClosed()) {
            Socket s;
            try {
                s = listener.accept();
            } catch (IOException e) {
                if (listener.isClosed()) {
                    break;
                }
                try {
                    Thread.sleep(10); // e.g. too many open files: retry once some close
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                continue;
            }
            pool.execute(new BlockingConnection(s));
        }
    }
}
