package serverbench;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongUnaryOperator;

/**
 * java-vthreads: one virtual thread per connection, plain blocking java.net sockets. The JDK's
 * ForkJoinPool scheduler runs the virtual threads on `workers` carrier threads
 * (-Djdk.virtualThreadScheduler.parallelism, set by the manifest).
 *
 * <p>Usage: server {hello|hello-timeout|echo|work|counter|file} HOST PORT WORKERS (SB_TIMEOUT_MS,
 * default 5000; SB_FILES, the folder of `file`).
 */
public final class VThreadServer {
    private static final byte[] HELLO = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
            .getBytes(StandardCharsets.US_ASCII);
    private static final int TIMEOUT_MS =
            Integer.parseInt(System.getenv().getOrDefault("SB_TIMEOUT_MS", "5000"));

    /** The counters of `counter`, shared by every virtual thread. */
    private static final AtomicLongArray COUNTERS = new AtomicLongArray(65536);

    interface Handler {
        void serve(Socket socket) throws IOException;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: server {hello|hello-timeout|echo|work|counter|file} HOST PORT WORKERS");
            System.exit(2);
        }
        Handler handler = switch (args[0]) {
            case "hello" -> VThreadServer::hello;
            case "hello-timeout" -> VThreadServer::helloTimeout;
            case "echo" -> VThreadServer::echo;
            case "work" -> socket -> http(socket, numbers("/work/", 1_000_000, VThreadServer::work));
            case "counter" -> socket -> http(socket, numbers("/counter/", 65535, k -> COUNTERS.incrementAndGet((int) k)));
            case "file" -> {
                Answer file = file(new File(filesFolder(), "4k"));
                yield socket -> http(socket, file);
            }
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
                        // peer reset, read timeout or write timer: the connection is done
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
     * Reads are bounded by SO_TIMEOUT: a read that blocks parks the virtual thread with a timer on
     * the scheduler's ForkJoinPool. java.net does not bound writes, so each write gets a timer of
     * its own on the common ForkJoinPool (lock-free to schedule and cancel): if the write is still
     * blocked after TIMEOUT_MS it closes the socket, which makes the write throw.
     */
    static void helloTimeout(Socket socket) throws IOException {
        socket.setSoTimeout(TIMEOUT_MS);
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] buf = new byte[4096];
        while (in.read(buf) > 0) {
            ScheduledFuture<?> timer = ForkJoinPool.commonPool()
                    .schedule(() -> closeQuietly(socket), TIMEOUT_MS, TimeUnit.MILLISECONDS);
            out.write(HELLO);
            timer.cancel(false);
        }
    }

    static void echo(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] buf = new byte[512];
        for (int n; (n = in.read(buf)) > 0; ) {
            out.write(buf, 0, n);
        }
    }

    /** A clock step this long or longer means the thread was not running: not counted as work. */
    static final long WORK_GAP_NS = 50_000;

    /**
     * Busy-waits n µs of running time on System.nanoTime (monotonic), then answers n. Only clock
     * steps below WORK_GAP_NS count, so time the carrier thread spent preempted by the OS is not
     * charged to the request. Virtual threads are not time-sliced: the carrier thread runs nothing
     * else until the loop ends.
     */
    static long work(long n) {
        long want = n * 1000;
        long total = 0;
        long last = System.nanoTime();
        while (total < want) { // no sleep, no yield
            long t = System.nanoTime();
            long d = t - last;
            if (d < WORK_GAP_NS) {
                total += d; // a longer step: the thread was descheduled, not working for this request
            }
            last = t;
        }
        return n;
    }

    private static final byte[] BAD_REQUEST =
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND =
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OK_HEAD =
            "HTTP/1.1 200 OK\r\nContent-Length: ".getBytes(StandardCharsets.US_ASCII);

    /** Writes the answer to one request's target; false after a 400, which closes the connection. */
    interface Answer {
        boolean write(String target, OutputStream out) throws IOException;
    }

    /**
     * `work`, `counter` and `file`: reads GET request heads (no bodies) one after another, so
     * pipelined requests are answered in order. The answers are written once no further complete
     * request is already buffered.
     */
    static void http(Socket socket, Answer answer) throws IOException {
        Heads in = new Heads(socket.getInputStream());
        OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 4096);
        for (String target; (target = in.next()) != null; ) {
            if (!answer.write(target, out)) {
                break;
            }
            if (!in.hasHead()) {
                out.flush();
            }
        }
        out.flush();
    }

    /**
     * `work` and `counter`: `prefix` N is answered with the decimal answer(N), or 400 for an N that is
     * empty, not a decimal or above max; another path is a 404.
     */
    static Answer numbers(String prefix, long max, LongUnaryOperator answer) {
        return (target, out) -> {
            long n = number(target, prefix, max);
            if (n == BAD) {
                out.write(BAD_REQUEST);
                return false;
            }
            if (n == NOT_FOUND_N) {
                out.write(NOT_FOUND);
            } else {
                String body = Long.toString(answer.applyAsLong(n));
                out.write(OK_HEAD);
                out.write((body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            }
            return true;
        };
    }

    /**
     * `file`: /file/4k is answered with the file, opened for this request, copied into the socket's
     * stream with FileInputStream.transferTo (java.net sockets have no channel for
     * FileChannel.transferTo, so the JDK reads the file into a buffer and writes that); another path
     * is a 404, a malformed request a 400.
     */
    static Answer file(File file) {
        return (target, out) -> {
            if (target.isEmpty()) {
                out.write(BAD_REQUEST);
                return false;
            }
            if (!target.equals("/file/4k")) {
                out.write(NOT_FOUND);
                return true;
            }
            try (FileInputStream in = new FileInputStream(file)) {
                out.write(OK_HEAD);
                out.write((in.getChannel().size() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                in.transferTo(out);
            }
            return true;
        };
    }

    /** $SB_FILES, the folder `file` serves from; exits 2 when it is not set. */
    private static File filesFolder() {
        String folder = System.getenv("SB_FILES");
        if (folder == null || folder.isEmpty()) {
            System.err.println("java-vthreads: the file scenario needs SB_FILES (the folder of its files)");
            System.exit(2);
        }
        return new File(folder);
    }

    private static final long BAD = -1;
    private static final long NOT_FOUND_N = -2;

    /** The decimal after prefix in target; BAD if empty, not a decimal or above max; NOT_FOUND_N for another path. */
    static long number(String target, String prefix, long max) {
        if (target.isEmpty()) {
            return BAD; // a malformed request line, or a head longer than Heads.MAX
        }
        if (!target.startsWith(prefix)) {
            return NOT_FOUND_N;
        }
        if (target.length() == prefix.length()) {
            return BAD;
        }
        long n = 0;
        for (int i = prefix.length(); i < target.length(); i++) {
            char d = target.charAt(i);
            if (d < '0' || d > '9' || (n = n * 10 + (d - '0')) > max) {
                return BAD;
            }
        }
        return n;
    }

    /** Reads request heads from a stream into one buffer of at most MAX bytes. */
    static final class Heads {
        private static final int MAX = 8192;
        private final InputStream in;
        private final byte[] buf = new byte[MAX];
        private int start;
        private int end;

        Heads(InputStream in) {
            this.in = in;
        }

        /**
         * The target of the next request head; null when the peer closes; "" when the request line
         * is malformed or the head is longer than MAX.
         */
        String next() throws IOException {
            int from = start;
            while (true) {
                while (start < end && (buf[start] == '\r' || buf[start] == '\n')) {
                    start++; // empty lines before a request line are ignored
                }
                from = Math.max(from, start);
                int headEnd = find(from);
                if (headEnd >= 0) {
                    String target = target(start, headEnd);
                    start = headEnd;
                    return target;
                }
                from = Math.max(start, end - 3);
                if (start > 0) {
                    System.arraycopy(buf, start, buf, 0, end - start);
                    from -= start;
                    end -= start;
                    start = 0;
                }
                if (end == buf.length) {
                    return "";
                }
                int n = in.read(buf, end, buf.length - end);
                if (n < 0) {
                    return null;
                }
                end += n;
            }
        }

        /** Whether a whole request head is buffered already. */
        boolean hasHead() {
            return find(start) >= 0;
        }

        /** The index after the first CRLF CRLF at or after from, or -1. */
        private int find(int from) {
            for (int i = from; i + 3 < end; i++) {
                if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
                    return i + 4;
                }
            }
            return -1;
        }

        /** METHOD SP target SP HTTP-version: the target, or "" when the line is malformed. */
        private String target(int from, int to) {
            int sp1 = -1;
            for (int i = from; i < to && buf[i] != '\r'; i++) {
                if (buf[i] == ' ') {
                    if (sp1 < 0) {
                        sp1 = i;
                    } else {
                        return new String(buf, sp1 + 1, i - sp1 - 1, StandardCharsets.ISO_8859_1);
                    }
                }
            }
            return "";
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
