package dev.consistencykit.spring;

import dev.consistencykit.jobqueue.JobHandler;

/**
 * A job handler bean that names its job type. A plain {@link JobHandler} bean handles the jobs whose type is its bean
 * name.
 */
public interface TypedJobHandler extends JobHandler {

    /** The type of the jobs this handler runs. */
    String jobType();
}
