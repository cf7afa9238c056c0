// Package evloop is riptide's epoll engine (Linux): the loops that own the
// sockets, the pooled workers that serve them and the scanner that keeps
// their deadlines. It knows no HTTP: the server reaches it through a
// Handler (admit, serve, close a parked connection, count it out) and a
// connection carries the protocol's state across a park as one Saved
// value. The root's TestLayering (layering_test.go) fails if it imports
// an HTTP package.
//
// The engine, as built:
//
//   - One Group per listener: GOMAXPROCS loops, a worker pool and a
//     scanner goroutine. Each loop owns an epoll instance. The listener's
//     own descriptor (no dup, so closing the listener stops accepting at
//     once) is in every loop's epoll with EPOLLEXCLUSIVE; a woken loop
//     accepts until EAGAIN inside RawConn.Control, which keeps the
//     descriptor alive during the call and reports the listener's close.
//     After an accept error (EMFILE, ENFILE, ENOBUFS, EPERM, ...) the loop
//     takes the listener out of its epoll and the scanner puts it back
//     after a back-off (5 ms doubling to 1 s, as the goroutine engine's);
//     see lnArmed for the hand-over between the two, which cannot lose
//     the listener. ECONNABORTED and EINTR are retried at once, EAGAIN
//     ends the accepts.
//   - Sockets are registered once, edge-triggered for read and write (as
//     Go's netpoller does): no epoll_ctl per request.
//   - A loop never blocks a thread: it polls with EpollWait(0) and, when
//     nothing is ready, parks on its epoll descriptor through Go's
//     netpoller (an epoll fd is pollable), so workers it readied run on
//     its P at once.
//   - An idle connection is a Conn on its loop: no goroutine, no buffer
//     (an incomplete head is kept in a small pooled buffer). A readable
//     edge puts it on its loop's queue (a workq.Queue), from which parked
//     worker goroutines (a workq.Pool with a shard per loop, so that
//     loops on different cores do not share its lock; each worker with its
//     own channel)
//     take it: one worker is sent per batch, and each sends the next
//     before it serves while more wait (see pull). The worker runs the
//     server's protocol code (Handler.Serve) over the Conn: it serves
//     every complete request already read (pipelining, one write per
//     batch) and, when the socket is empty, parks the connection (Park)
//     and returns itself to the pool.
//   - A protocol that took a connection over (riptide's event-driven
//     WebSocket, Saved.Proto) writes without waiting (WriteNow, from any
//     goroutine) and queues what the socket does not take; it parks with
//     ParkFor, which also asks for the writable edge while output is
//     left, and uses the read deadline as its alarm (SetWakeAt): the
//     scanner hands it to a worker when the deadline passes.
//   - Timeouts: the server arms deadlines as on any net.Conn; a read or
//     write that waits does so on the worker's channel with a reused
//     timer. For parked connections (idle and header timeouts) a scanner
//     goroutine per group walks the loops' tables every scanInterval and
//     hands each connection whose read deadline passed to a worker, which
//     finds it expired and closes it (408 for a partial head), exactly as
//     the goroutine engine would.
//   - Ends without a worker: a parked connection with no partial head is
//     closed by whoever claims it when a worker would only close it: by
//     its loop when the peer hung up with nothing left to read
//     (closeHungUp), by the scanner when its deadline passed
//     (closeExpired). A burst of thousands of clients closing at once then
//     costs no goroutine (it started one worker with its ~37 KiB of
//     buffers per connection, up to some 2,000 at once). The pool stays
//     unbounded: every other dispatch carries a request, whose handler may
//     block, and a bounded pool could deadlock on handlers waiting for
//     each other; a worker per in-flight request is what the goroutine
//     engine pays too.
//   - Stopping: a loop holds the group's acceptMu shared from its first
//     accept4 until every socket it took is admitted and in its table.
//     Stop (the server's Shutdown and Close, through Serve) closes the
//     listener and takes acceptMu: once it returns, every connection the
//     group will ever admit is admitted and reachable (Each). The group
//     ends (Handler.Ended, epolls closed) only with its listener closed,
//     acceptMu free and no connection left, so no admitted socket can
//     park in an ended group's epoll, where nothing would close it.
//   - On-loop mode (Config.OnLoop, riptide's EngineOnLoop): the loop is
//     run by a worker (the loop's leader), which serves a readable
//     connection itself instead of handing it off. A leader about to wait,
//     or stuck (the scanner sees its serve counter not move), is replaced
//     by a pooled worker (promote) and finishes as an ordinary worker: it
//     dispatches the rest of its batch and goes back to the pool.
package evloop
