/**
 * Pattern 2, the job queue: a multi-document change written as one job document, claimed by a worker with a lease
 * and a fencing token, applied by a handler whose writes are idempotent per job, and marked done; a sweeper requeues
 * jobs whose worker died. Entry point: {@link dev.consistencykit.jobqueue.JobQueue}.
 */
package dev.consistencykit.jobqueue;
