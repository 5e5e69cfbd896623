// Package postproc is where post-processing happens: it turns a trace's
// raw NVBit traces into Accel-Sim's input, with the built-in
// post-processor or an external one (CASCADE_POSTPROCESS_CMD), and reports
// its outcome, processed or failed, which package tracestate turns into
// the move from processing to ready or failed (tracestate.Next, inside
// the transaction that commits the trace's kernels). A [Processor] is the
// tracestate.Processor its tracestate.Machine starts and stops, and
// reports to the [Reporter] its Run is given.
//
// # The built-in post-processor
//
// [Postprocess] is the built-in post-processor. It calls Accel-Sim's trace
// format conversion in accelsim/posttraces, which writes .tracez (through
// accelsim/tracez) or text .traceg, and the kernel lists. postproc owns the
// choice of what it writes: the formats ([FormatTracez], [FormatTraceg],
// [DefaultFormat]), the pick between what the user asked for and what the
// simulator reads ([ChooseFormat]), and the command line that starts it
// writing that format ([BuiltinCommand]). The server runs it as `cascade
// postprocess` (cmd/cascade parses that command line) in a child process
// of its own, as it runs an external one, so that its memory, its CPUs and
// its log are the trace's and a stop ends it whole.
//
// # Running a post-processor
//
// A [Processor] runs, per trace, `<command> <trace dir>/traces -j <cpus>`
// with CASCADE_WORK_DIR=$CASCADE_DATA_DIR/work in its environment and its
// output in $CASCADE_DATA_DIR/work/postprocess/<trace id>.log. The CPUs
// are those this process may use (its affinity and cgroup quota, as
// runtime.GOMAXPROCS sees them), shared among the post-processors that may
// run at once: the shares differ by at most one and add up to the CPUs,
// and one running alone gets the largest; Config.Jobs
// (CASCADE_POSTPROCESS_JOBS) gives every one the same -j instead. A
// non-zero exit fails the trace with the exit code and the log's last 5
// lines, or for the built-in post-processor its error line, which names
// the file and line ([ErrorPrefix]); an exit 0 that left no
// traces/kernelslist.g fails it too. After a success, the built-in
// post-processor's last lines are warnings the trace keeps
// ([WarningPrefix]). An upload that already holds
// kernelslist.g skips the command; with small stats files it is finished
// with others, many in one transaction (batch.go). At most Concurrency
// traces are handled at once (a trace whose kernel list is big gives its
// place to the next while its kernels go into the database); the rest
// wait in the order they were queued (Cascade's one work queue,
// internal/workqueue), and a restart queues the traces still processing
// in their stored order. One whose trace left processing meanwhile
// (failed by its metadata.json: [Processor.Stop]; removed:
// [Processor.Forget]) is stopped and changes nothing of the trace. A
// retried trace ([Processor.Retried]) whose processed files are in the
// other format than the built-in writes now is processed again when its
// raw traces are there, and the old files removed (format.go).
//
// A marker file (<trace id>.running, see marker.go) records which
// kernelslist.g a post-processor left, so a server that stopped or died
// mid-run, a retry after a failure, or a re-upload that left the old
// output in place knows that the kernelslist.g it finds is not the
// upload's, and runs the command again; a kernelslist.g that an upload
// brought is never mistaken for one.
package postproc
