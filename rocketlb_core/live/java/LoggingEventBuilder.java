// rocketlb: SLF4J 2's LoggingEventBuilder, named by the jar's logback 1.3.15 Logger and missing
// from its slf4j-api 1.7.30 (see StaticLoggerBinder.java). Nothing calls it: the client
// logs through the 1.7 API, so the type only has to exist.
package org.apache.rocketmq.shaded.org.slf4j.spi;

public interface LoggingEventBuilder {
}
