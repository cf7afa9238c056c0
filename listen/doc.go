// Package listen provides the listening sockets a riptide fleet member
// needs: SO_REUSEPORT listeners, so that several processes share one port;
// the sockets of systemd socket activation; and a zero-downtime restart,
// in which the running process hands its listening sockets to a new copy
// of itself, which starts accepting on them before the old one stops.
//
// # Zero-downtime restart
//
// A listening socket handed over keeps its accept queue: connections the
// kernel completed while the processes changed hands wait in it for
// whichever process accepts next, so none is refused or reset. The program
// gets its listeners from a [Handoff] and, on a signal (SIGHUP by
// convention), calls [Handoff.Restart] and then shuts its server down:
//
//	h, err := listen.NewHandoff()
//	ln, err := h.Listen("tcp", ":8080")    // inherited from the old process, or new
//	go srv.Serve(ln)
//	h.Ready()                              // tell the old process to stop accepting
//	<-sighup
//	if _, err := h.Restart(ctx); err == nil { // new binary is up and accepting
//		srv.Shutdown(ctx)                  // stop accepting, drain, exit
//	}
//
// Restart starts the executable again (the binary on disk, so a deploy is
// "replace the file, send SIGHUP") with the same arguments, passing the
// listeners as file descriptors 3 and up, named in the RIPTIDE_LISTENERS
// environment variable, and a pipe in RIPTIDE_READY_FD that the new
// process's Ready writes to. If the new process exits or does not become
// ready in time, Restart kills it and the old process simply goes on
// serving. examples/restart is a complete program.
//
// Under systemd the restarted process is not the unit's main process any
// more; use Type=notify with NotifyAccess=all, or a PIDFile, or run the
// fleet with socket activation and KillMode=process.
package listen
