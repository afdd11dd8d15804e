package rocketlb;

/** The virtual wall clock that ClockRewrite.java puts in place of System.currentTimeMillis(). */
public final class VClock {
    private static volatile long now;

    private VClock() {
    }

    public static long currentTimeMillis() {
        return now;
    }

    public static void set(long value) {
        now = value;
    }
}
