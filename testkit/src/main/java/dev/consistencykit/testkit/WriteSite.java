package dev.consistencykit.testkit;

/**
 * One write the code under test sent through a {@link FaultInjector}.
 *
 * @param number     its position among the injector's writes, from 1
 * @param method     the collection method ({@code updateOne}, {@code findOneAndUpdate}…)
 * @param collection the collection name
 */
public record WriteSite(int number, String method, String collection) {

    @Override
    public String toString() {
        return "#" + number + " " + method + " on " + collection;
    }
}
