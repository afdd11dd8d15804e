// rocketlb: SLF4J 2's LoggingEventAware, which the jar's logback 1.3.15 Logger implements and its
// slf4j-api 1.7.30 lacks (see StaticLoggerBinder.java); the same single method.
package org.apache.rocketmq.shaded.org.slf4j.spi;

import org.apache.rocketmq.shaded.org.slf4j.event.LoggingEvent;

public interface LoggingEventAware {
    void log(LoggingEvent event);
}
