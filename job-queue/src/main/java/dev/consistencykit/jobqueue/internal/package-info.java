/** Implementation of the job queue. Private API: nothing outside this module imports it. */
package dev.consistencykit.jobqueue.internal;
