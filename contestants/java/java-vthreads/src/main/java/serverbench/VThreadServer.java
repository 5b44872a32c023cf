package serverbench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * java-vthreads: one virtual thread per connection, plain blocking java.net sockets. The JDK's
 * ForkJoinPool scheduler runs the virtual threads on `workers` carrier threads
 * (-Djdk.virtualThreadScheduler.parallelism, set by the manifest).
 *
 * <p>Usage: server {hello|hello-timeout|echo} HOST PORT WORKERS (SB_TIMEOUT_MS, default 5000).
 */
public final class VThreadServer {
    private static final byte[] HELLO = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
            .getBytes(StandardCharsets.US_ASCII);
    private static final int TIMEOUT_MS =
            Integer.parseInt(System.getenv().getOrDefault("SB_TIMEOUT_MS", "5000"));

    /** Closes sockets whose write is still blocked after TIMEOUT_MS (see helloTimeout). */
    private static final ScheduledThreadPoolExecutor WATCHDOG = new ScheduledThreadPoolExecutor(1,
            Thread.ofPlatform().name("write-watchdog").daemon().factory());

    static {
        WATCHDOG.setRemoveOnCancelPolicy(true);
    }

    interface Handler {
        void serve(Socket socket) throws IOException;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: server {hello|hello-timeout|echo} HOST PORT WORKERS");
            System.exit(2);
        }
        Handler handler = switch (args[0]) {
            case "hello" -> VThreadServer::hello;
            case "hello-timeout" -> VThreadServer::helloTimeout;
            case "echo" -> VThreadServer::echo;
            default -> {
                System.err.println("java-vthreads: unsupported scenario '" + args[0] + "'");
                System.exit(2);
                yield null;
            }
        };
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(args[1], Integer.parseInt(args[2])), 4096);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            while (true) {
                Socket socket = server.accept();
                executor.submit(() -> {
                    try (socket) {
                        socket.setTcpNoDelay(true);
                        handler.serve(socket);
                    } catch (IOException e) {
                        // peer reset, timeout or watchdog close: the connection is done
                    }
                    return null;
                });
            }
        }
    }

    static void hello(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] buf = new byte[4096];
        while (in.read(buf) > 0) {
            out.write(HELLO);
        }
    }

    /**
     * java.net bounds reads (SO_TIMEOUT) but not writes: a blocked write would wait forever.
     * A watchdog task scheduled around each write closes the socket if the write is still
     * blocked after TIMEOUT_MS, which makes the write throw.
     */
    static void helloTimeout(Socket socket) throws IOException {
        socket.setSoTimeout(TIMEOUT_MS);
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] buf = new byte[4096];
        while (in.read(buf) > 0) {
            ScheduledFuture<?> watchdog =
                    WATCHDOG.schedule(() -> closeQuietly(socket), TIMEOUT_MS, TimeUnit.MILLISECONDS);
            out.write(HELLO);
            watchdog.cancel(false);
        }
    }

    static void echo(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] buf = new byte[16384];
        for (int n; (n = in.read(buf)) > 0; ) {
            out.write(buf, 0, n);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
