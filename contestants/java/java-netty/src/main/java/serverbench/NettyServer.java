package serverbench;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongUnaryOperator;

/**
 * java-netty: Netty on its native epoll transport. One boss loop accepts; each accepted channel is
 * pinned to one of `workers` child loops for its whole life. `work`, `counter` and `file` decode
 * requests with Netty's HttpServerCodec and answer them on that loop.
 *
 * <p>Usage: server {hello|hello-timeout|echo|work|counter|file} HOST PORT WORKERS (SB_TIMEOUT_MS,
 * default 5000; SB_FILES, the folder of `file`).
 */
public final class NettyServer {
    private static final ByteBuf HELLO = Unpooled.unreleasableBuffer(Unpooled.directBuffer(51)
            .writeBytes("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
                    .getBytes(StandardCharsets.US_ASCII)));

    /** The counters of `counter`, shared by every event loop. */
    private static final AtomicLongArray COUNTERS = new AtomicLongArray(65536);

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 4) {
            System.err.println("usage: server {hello|hello-timeout|echo|work|counter|file} HOST PORT WORKERS");
            System.exit(2);
        }
        String scenario = args[0];
        ChannelHandler handler = switch (scenario) {
            case "hello", "hello-timeout" -> new Hello();
            case "echo" -> new Echo();
            case "work", "counter", "file" -> null; // one handler per channel, below
            default -> {
                System.err.println("java-netty: unsupported scenario '" + scenario + "'");
                System.exit(2);
                yield null;
            }
        };
        boolean timeouts = scenario.equals("hello-timeout");
        File files = scenario.equals("file") ? filesFolder() : null;
        long timeoutMs = Long.parseLong(System.getenv().getOrDefault("SB_TIMEOUT_MS", "5000"));
        int workers = Integer.parseInt(args[3]);

        IoHandlerFactory epoll = EpollIoHandler.newFactory();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, epoll);
        EventLoopGroup children = new MultiThreadIoEventLoopGroup(workers, epoll);
        new ServerBootstrap()
                .group(boss, children)
                .channel(EpollServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (timeouts) {
                            // A timer per read (ReadTimer) and per write (WriteTimeoutHandler), each
                            // closing the channel when its operation has not completed in timeoutMs.
                            ch.pipeline().addLast(new ReadTimer(timeoutMs),
                                    new WriteTimeoutHandler(timeoutMs, MILLISECONDS));
                        }
                        switch (scenario) {
                            case "echo" -> {
                                // Reads into 512-byte buffers, as the scenario asks (the default adapts the size).
                                ch.config().setRecvByteBufAllocator(new FixedRecvByteBufAllocator(512));
                                ch.pipeline().addLast(handler);
                            }
                            case "work" -> ch.pipeline().addLast(new HttpServerCodec(),
                                    new Http("/work/", 1_000_000, NettyServer::work));
                            case "counter" -> ch.pipeline().addLast(new HttpServerCodec(),
                                    new Http("/counter/", 65535, k -> COUNTERS.incrementAndGet((int) k)));
                            case "file" -> ch.pipeline().addLast(new HttpServerCodec(), new FileAnswer(files));
                            default -> ch.pipeline().addLast(handler);
                        }
                    }
                })
                .bind(args[1], Integer.parseInt(args[2])).sync()
                .channel().closeFuture().sync();
    }

    /** $SB_FILES, the folder `file` serves from; exits 2 when it is not set. */
    private static File filesFolder() {
        String folder = System.getenv("SB_FILES");
        if (folder == null || folder.isEmpty()) {
            System.err.println("java-netty: the file scenario needs SB_FILES (the folder of its files)");
            System.exit(2);
        }
        return new File(folder);
    }

    /**
     * hello-timeout's read timer, on the channel's event loop: armed whenever the channel waits for
     * data (from the start, and again once each batch of reads is answered), cancelled when data
     * arrives; on expiry it closes the channel. Netty's ReadTimeoutHandler is an idle timer instead
     * (one task that reschedules itself until nothing was read for a whole timeout).
     */
    static final class ReadTimer extends ChannelInboundHandlerAdapter {
        private final long timeoutMs;
        private Future<?> timer;

        ReadTimer(long timeoutMs) {
            this.timeoutMs = timeoutMs;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            arm(ctx);
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            cancel();
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.fireChannelReadComplete(); // the answers are written and flushed; the next read starts
            arm(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            cancel();
            ctx.fireChannelInactive();
        }

        private void arm(ChannelHandlerContext ctx) {
            if (timer == null && ctx.channel().isActive()) {
                timer = ctx.executor().schedule(() -> ctx.close(), timeoutMs, MILLISECONDS);
            }
        }

        private void cancel() {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
        }
    }

    /** What every answering handler does the same: one flush per batch of reads, close on any error. */
    abstract static class Answering extends ChannelInboundHandlerAdapter {
        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** One response per read; the writes of one event-loop pass leave in one flush. */
    @Sharable
    static final class Hello extends Answering {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.write(HELLO.duplicate(), ctx.voidPromise());
        }
    }

    /** Writes every buffer back; stops reading while the peer is not draining (backpressure). */
    @Sharable
    static final class Echo extends Answering {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        }
    }

    /** A clock step this long or longer means the thread was not running: not counted as work. */
    static final long WORK_GAP_NS = 50_000;

    /**
     * Busy-waits n µs of running time on System.nanoTime (monotonic) on the calling event loop, then
     * answers n. Only clock steps below WORK_GAP_NS count, so time the loop's thread spent preempted
     * is not charged to the request.
     */
    static long work(long n) {
        long want = n * 1000;
        long total = 0;
        long last = System.nanoTime();
        while (total < want) { // no sleep, no yield: the loop and every channel on it wait
            long t = System.nanoTime();
            long d = t - last;
            if (d < WORK_GAP_NS) {
                total += d; // a longer step: the thread was descheduled, not working for this request
            }
            last = t;
        }
        return n;
    }

    private static final AsciiString CONTENT_LENGTH = AsciiString.cached("Content-Length");
    private static final long BAD = -1;
    private static final long NOT_FOUND = -2;

    /**
     * `work` and `counter`: each decoded GET `prefix` N is answered in order with the decimal
     * answer(N), or 400 (then the connection closes) for an N that is empty, not a decimal or above
     * max. One instance per channel: after a 400 it ignores what the codec still decodes.
     */
    static final class Http extends Answering {
        private final String prefix;
        private final long max;
        private final LongUnaryOperator answer;
        private boolean closing;

        Http(String prefix, long max, LongUnaryOperator answer) {
            this.prefix = prefix;
            this.max = max;
            this.answer = answer;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpRequest request && !closing) {
                    long n = request.decoderResult().isSuccess() ? number(request.uri()) : BAD;
                    if (n == BAD) {
                        closing = true;
                        ctx.writeAndFlush(response(HttpResponseStatus.BAD_REQUEST, Unpooled.EMPTY_BUFFER))
                                .addListener(ChannelFutureListener.CLOSE);
                    } else if (n == NOT_FOUND) {
                        closing = !send(ctx, request, response(HttpResponseStatus.NOT_FOUND, Unpooled.EMPTY_BUFFER));
                    } else {
                        String body = Long.toString(answer.applyAsLong(n));
                        closing = !send(ctx, request,
                                response(HttpResponseStatus.OK, ByteBufUtil.writeAscii(ctx.alloc(), body)));
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg); // the request, and the LastHttpContent after it
            }
        }

        /** The decimal after prefix in uri; BAD if empty, not a decimal or above max; NOT_FOUND for another path. */
        private long number(String uri) {
            if (!uri.startsWith(prefix)) {
                return NOT_FOUND;
            }
            if (uri.length() == prefix.length()) {
                return BAD;
            }
            long n = 0;
            for (int i = prefix.length(); i < uri.length(); i++) {
                char d = uri.charAt(i);
                if (d < '0' || d > '9' || (n = n * 10 + (d - '0')) > max) {
                    return BAD;
                }
            }
            return n;
        }

        /**
         * Writes the answer to request with Netty's keep-alive idiom: an HTTP/1.0 keep-alive request is
         * answered with Connection: keep-alive, and a request that does not keep the connection alive
         * (HTTP/1.0 without it, or Connection: close) closes it after its answer. Whether it stays open.
         */
        static boolean send(ChannelHandlerContext ctx, HttpRequest request, HttpResponse response) {
            boolean keepAlive = keepAlive(request, response);
            if (keepAlive) {
                ctx.write(response, ctx.voidPromise());
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
            return keepAlive;
        }

        /** Whether the connection stays open after the answer to request; sets the header HTTP/1.0 needs. */
        static boolean keepAlive(HttpRequest request, HttpResponse response) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (keepAlive && request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            return keepAlive;
        }

        /** Status line, Content-Length and body: HttpServerCodec adds no other header. */
        private static FullHttpResponse response(HttpResponseStatus status, ByteBuf body) {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
            response.headers().set(CONTENT_LENGTH, body.readableBytes());
            return response;
        }
    }

    /**
     * `file`: GET /file/4k is answered with the file opened for this request and sent as a
     * DefaultFileRegion (sendfile(2) on the epoll transport), behind a head with only Content-Length;
     * any other path is 404. Pipelined requests are answered in order.
     */
    static final class FileAnswer extends Answering {
        private final File file;
        private boolean closing;

        FileAnswer(File folder) {
            this.file = new File(folder, "4k");
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpRequest request && !closing) {
                    if (request.decoderResult().isSuccess() && request.uri().equals("/file/4k")) {
                        sendFile(ctx, request);
                    } else {
                        closing = !Http.send(ctx, request, Http.response(HttpResponseStatus.NOT_FOUND, Unpooled.EMPTY_BUFFER));
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void sendFile(ChannelHandlerContext ctx, HttpRequest request) {
            RandomAccessFile raf;
            long length;
            try {
                raf = new RandomAccessFile(file, "r");
                length = raf.length();
            } catch (IOException e) {
                closing = !Http.send(ctx, request, Http.response(HttpResponseStatus.NOT_FOUND, Unpooled.EMPTY_BUFFER));
                return;
            }
            DefaultHttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(CONTENT_LENGTH, length);
            closing = !Http.keepAlive(request, head);
            ctx.write(head, ctx.voidPromise());
            // The region closes the file once it has been sent (or the channel closes).
            ctx.write(new DefaultFileRegion(raf.getChannel(), 0, length), ctx.voidPromise());
            if (closing) {
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.write(LastHttpContent.EMPTY_LAST_CONTENT, ctx.voidPromise());
            }
        }
    }
}
