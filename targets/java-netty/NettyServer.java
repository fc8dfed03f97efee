import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.AsciiString;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The java-netty target: Netty 4's HTTP codec on NIO event loops (the 2009
 * test's Netty server). Responses are written in the event loop and flushed
 * once per read batch; a "?wait=" is a scheduled task, never a blocked loop,
 * and later pipelined answers queue behind it so they stay in order.
 *
 * Usage: java NettyServer IP:PORT
 *
 * Writes "java-netty: ready ..." to standard error once it listens. On
 * SIGTERM the shutdown hook closes the listener and the event loops, and the
 * JVM exits with status 143.
 */
public final class NettyServer {
    public static void main(String[] args) throws InterruptedException {
        if (args.length != 1) {
            Hello.usage("java-netty", "usage: NettyServer IP:PORT");
        }
        InetSocketAddress addr = null;
        try {
            addr = Hello.parseAddr(args[0]);
        } catch (IllegalArgumentException e) {
            Hello.usage("java-netty", e.getMessage());
        }
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup(); // 2 x processors, Netty's default
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 65535)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(
                                new ReadTimeoutHandler(300), // as cmd/hello's -idle-timeout
                                new HttpServerCodec(),
                                new HelloHandler());
                    }
                });
        Channel ch;
        try {
            ch = b.bind(addr).sync().channel();
        } catch (Exception e) {
            System.err.println("java-netty: listening on " + args[0] + ": " + e.getMessage());
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ch.close().awaitUninterruptibly();
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }));
        Hello.ready("java-netty", (InetSocketAddress) ch.localAddress(), "Netty NIO, " + Runtime.getRuntime().availableProcessors() * 2 + " event loops");
        ch.closeFuture().sync();
    }

    /** Answers the requests of one connection, in order. */
    static final class HelloHandler extends SimpleChannelInboundHandler<HttpObject> {
        private static final AsciiString ALLOW = AsciiString.cached("Allow");
        private static final AsciiString CONNECTION = AsciiString.cached("Connection");
        private static final AsciiString CONTENT_LENGTH = AsciiString.cached("Content-Length");
        private static final AsciiString CONTENT_TYPE = AsciiString.cached("Content-Type");
        private static final AsciiString DATE = AsciiString.cached("Date");
        private static final AsciiString SERVER = AsciiString.cached("Server");
        private static final AsciiString KEEP_ALIVE = AsciiString.cached("keep-alive");
        private static final AsciiString CLOSE = AsciiString.cached("close");
        private static final AsciiString TEXT_PLAIN = AsciiString.cached("text/plain");
        private static final AsciiString GOPHR = AsciiString.cached(Hello.SERVER);
        private static final AsciiString GET_HEAD = AsciiString.cached(Hello.ALLOW);

        /** An answer not yet written and how long to wait before it. */
        private record Pending(FullHttpResponse response, long waitMillis, boolean close) {}

        private final ArrayDeque<Pending> queue = new ArrayDeque<>();
        private boolean waiting;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (!(msg instanceof HttpRequest)) {
                return; // request body content: discarded
            }
            HttpRequest req = (HttpRequest) msg;
            if (req.decoderResult().isFailure()) {
                queue.add(new Pending(badRequest(), 0, true));
                drain(ctx);
                return;
            }
            String uri = req.uri();
            int q = uri.indexOf('?');
            String query = q < 0 ? null : uri.substring(q + 1);
            String method = req.method().name();
            int status = Hello.status(method, query);
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            boolean http10 = req.protocolVersion().equals(HttpVersion.HTTP_1_0);
            byte[] body = Hello.body(status);
            ByteBuf content = req.method().equals(HttpMethod.HEAD) ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
            // Header order and case as net/http writes them.
            HttpHeaders h = new DefaultHttpHeaders(false);
            if (status == 405) {
                h.add(ALLOW, GET_HEAD);
            }
            if (keepAlive) {
                h.add(CONNECTION, KEEP_ALIVE);
            }
            h.add(CONTENT_LENGTH, Integer.toString(body.length));
            h.add(CONTENT_TYPE, TEXT_PLAIN);
            h.add(DATE, Hello.date());
            h.add(SERVER, GOPHR);
            if (!keepAlive && !http10) {
                h.add(CONNECTION, CLOSE);
            }
            FullHttpResponse resp = new DefaultFullHttpResponse(
                    http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(status), content, h, new DefaultHttpHeaders(false));
            queue.add(new Pending(resp, status == 200 ? Hello.waitMillis(query) : 0, !keepAlive));
            drain(ctx);
        }

        private static FullHttpResponse badRequest() {
            HttpHeaders h = new DefaultHttpHeaders(false);
            h.add(CONTENT_TYPE, "text/plain; charset=utf-8");
            h.add(CONNECTION, CLOSE);
            return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST,
                    Unpooled.copiedBuffer("400 Bad Request", java.nio.charset.StandardCharsets.US_ASCII),
                    h, new DefaultHttpHeaders(false));
        }

        /** Writes queued answers until one must wait or the queue is empty. */
        private void drain(ChannelHandlerContext ctx) {
            while (!waiting && !queue.isEmpty()) {
                Pending p = queue.peek();
                if (p.waitMillis > 0) {
                    waiting = true;
                    ctx.channel().config().setAutoRead(false);
                    ctx.executor().schedule(() -> {
                        waiting = false;
                        queue.poll();
                        queue.addFirst(new Pending(p.response, 0, p.close));
                        drain(ctx);
                        ctx.flush();
                        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
                    }, p.waitMillis, TimeUnit.MILLISECONDS);
                    return;
                }
                queue.poll();
                if (p.close) {
                    ctx.writeAndFlush(p.response).addListener(ChannelFutureListener.CLOSE);
                    queue.forEach(x -> x.response.release());
                    queue.clear();
                    return;
                }
                ctx.write(p.response);
            }
            // A peer that does not read stops being read from until it does.
            // Reads stop before the flush: the flush may make the channel
            // writable again, and channelWritabilityChanged resumes them.
            if (!ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(false);
                ctx.flush();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (!waiting) {
                ctx.channel().config().setAutoRead(ctx.channel().isWritable());
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            queue.forEach(p -> p.response.release());
            queue.clear();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // reset by peer, read timeout: nothing to answer
        }
    }
}
