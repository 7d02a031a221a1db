package supervisor

// ProcessLogSink is a LogSink that also takes the process a line came from (web.1,
// worker.2, cron.<job>.<run>), which the app's log shows and filters by. A sink without it
// gets the line without its process.
type ProcessLogSink interface {
	ProcessLine(appID, deployID, process, stream, message string, redactions int)
}

// instanceWriter is a writer of one instance's output to stream: writer's, with each line
// carrying process.
func (o *Output) instanceWriter(r *Redactor, appID, deployID, process, stream string) *lineWriter {
	w := o.writer(r, appID, deployID, stream)
	w.process = process
	return w
}

// instanceLineWriter is newLineWriter for one instance's output, outside any app's bound
// (a container's, as the image runtime's other writers are).
func instanceLineWriter(sink LogSink, r *Redactor, appID, deployID, process, stream string) *lineWriter {
	w := newLineWriter(sink, r, appID, deployID, stream)
	w.process = process
	return w
}

// send hands one line to the sink, with the writer's process when the sink takes one.
func (w *lineWriter) send(stream, message string, redactions int) {
	if ps, ok := w.sink.(ProcessLogSink); ok && w.process != "" {
		ps.ProcessLine(w.appID, w.deployID, w.process, stream, message, redactions)
		return
	}
	w.sink.Line(w.appID, w.deployID, stream, message, redactions)
}

// instanceSystem writes a line of the platform's own about one instance (its exit, its
// restart, a memory kill) to the app's log, outside its bound, carrying process when the
// sink takes one.
func (o *Output) instanceSystem(appID, deployID, process, message string) {
	if o.Sink != nil {
		w := instanceLineWriter(o.Sink, nil, appID, deployID, process, "system")
		w.send("system", message, 0)
	}
}
