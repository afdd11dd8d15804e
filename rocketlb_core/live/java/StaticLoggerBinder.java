// rocketlb: the missing SLF4J binding of rocketmq-client-java 5.0.8 as Maven Central serves it.
//
// The shaded jar carries slf4j-api 1.7.30 (relocated to org.apache.rocketmq.shaded.org.slf4j),
// which looks for a StaticLoggerBinder, and logback-classic 1.3.15 (relocated likewise), which
// has none: it is an SLF4J 2 provider (LogbackServiceProvider, a ServiceLoader entry that 1.7
// never reads). So the client prints "SLF4J: Defaulting to no-operation (NOP) logger
// implementation" and logs nothing at all: no rocketmq-client.log (and the provider cannot
// even be loaded: the SLF4J 2 interface it implements is not in the jar). This class is the
// 1.7 binder, in the relocated package, handing out a logback LoggerContext of the jar's own
// logback, configured as logback configures itself (ContextInitializer.autoConfig): from the
// jar's own rocketmq.logback.xml, so the file is rocketmq-client.log under rocketmq.log.root. Compiled, with LoggingEventAware.java and LoggingEventBuilder.java, by
// rocketlb_core.live.cluster (_grpc_class_path); the client's classes are untouched.
package org.apache.rocketmq.shaded.org.slf4j.impl;

import org.apache.rocketmq.shaded.ch.qos.logback.classic.LoggerContext;
import org.apache.rocketmq.shaded.ch.qos.logback.classic.util.ContextInitializer;
import org.apache.rocketmq.shaded.org.slf4j.helpers.BasicMDCAdapter;
import org.apache.rocketmq.shaded.org.slf4j.ILoggerFactory;
import org.apache.rocketmq.shaded.org.slf4j.spi.LoggerFactoryBinder;

public class StaticLoggerBinder implements LoggerFactoryBinder {
    public static String REQUESTED_API_VERSION = "1.7.30";
    private static final StaticLoggerBinder SINGLETON = new StaticLoggerBinder();
    private final LoggerContext context = new LoggerContext();

    private StaticLoggerBinder() {
        context.setName("default");
        try {
            new ContextInitializer(context).autoConfig();
        } catch (Exception e) {
            e.printStackTrace();
        }
        // what LogbackServiceProvider.initialize does after autoConfig: without an MDC adapter
        // every event fails in the appender, and the log stays empty (the SLF4J 1.7 adapter: the
        // jar has no helper class logback's own one needs)
        context.start();
        context.setMDCAdapter(new BasicMDCAdapter());
    }

    public static StaticLoggerBinder getSingleton() {
        return SINGLETON;
    }

    // The client logs through an AsyncAppender: the gRPC drivers (GrpcProduce.java,
    // GrpcConsume.java) stop its logback context here before they exit, so every line is in
    // rocketmq-client.log (the context LoggerFactory.getILoggerFactory() hands out).
    public static void stop() {
        SINGLETON.context.stop();
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return context;
    }

    @Override
    public String getLoggerFactoryClassStr() {
        return LoggerContext.class.getName();
    }
}
