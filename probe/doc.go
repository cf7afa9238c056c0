// Package probe is riptide's HTTP/1.1 conformance and request-smuggling
// probe: the Http11Probe suite (compliance, smuggling, malformed input,
// header normalisation, caching capabilities and cookies) re-implemented in
// Go from its public documentation, under the same Test IDs.
//
// A [Check] is a list of raw request byte strings sent on one TCP connection
// and a verdict rule. A [Runner] sends them to a server, reads the
// response(s) with bounded timeouts, classifies what happened (status code,
// connection closed by the server, or timed out) and applies the rule:
//
//	r := &probe.Runner{Addr: "127.0.0.1:8080"}
//	results := r.Run(ctx, probe.Checks())
//	probe.WriteText(os.Stdout, results)
//
// The server under test must answer GET, HEAD and OPTIONS / with 2xx, echo
// the body of POST /, answer /echo with the received request headers as
// "Name: Value" lines (POST for the normalisation checks, GET for the cookie
// checks) and GET /cookie with the parsed cookies as "name=value" lines.
//
// Raw requests follow the Http11Probe documentation byte for byte; where that
// documentation and the earlier results file of the project (data1.js)
// disagree, the documentation wins. DIFFERENCES.md in this directory lists
// every such case and every place where a verdict rule had to be chosen
// because the documentation left it open.
package probe
