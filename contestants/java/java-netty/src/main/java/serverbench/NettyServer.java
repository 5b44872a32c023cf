package serverbench;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * java-netty: Netty on its native epoll transport. One boss loop accepts; each accepted channel is
 * pinned to one of `workers` child loops for its whole life.
 *
 * <p>Usage: server {hello|hello-timeout|echo} HOST PORT WORKERS (SB_TIMEOUT_MS, default 5000).
 */
public final class NettyServer {
    private static final ByteBuf HELLO = Unpooled.unreleasableBuffer(Unpooled.directBuffer(51)
            .writeBytes("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
                    .getBytes(StandardCharsets.US_ASCII)));

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 4) {
            System.err.println("usage: server {hello|hello-timeout|echo} HOST PORT WORKERS");
            System.exit(2);
        }
        String scenario = args[0];
        ChannelHandler handler = switch (scenario) {
            case "hello", "hello-timeout" -> new Hello();
            case "echo" -> new Echo();
            default -> {
                System.err.println("java-netty: unsupported scenario '" + scenario + "'");
                System.exit(2);
                yield null;
            }
        };
        boolean timeouts = scenario.equals("hello-timeout");
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
                            // Read: closes after timeoutMs without a read. Write: closes when one
                            // write has not completed within timeoutMs.
                            ch.pipeline().addLast(new ReadTimeoutHandler(timeoutMs, MILLISECONDS),
                                    new WriteTimeoutHandler(timeoutMs, MILLISECONDS));
                        }
                        ch.pipeline().addLast(handler);
                    }
                })
                .bind(args[1], Integer.parseInt(args[2])).sync()
                .channel().closeFuture().sync();
    }

    /** One response per read; the writes of one event-loop pass leave in one flush. */
    @Sharable
    static final class Hello extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.write(HELLO.duplicate(), ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Writes every buffer back; stops reading while the peer is not draining (backpressure). */
    @Sharable
    static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
